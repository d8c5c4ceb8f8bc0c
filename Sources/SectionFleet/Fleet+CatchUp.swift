import Etcd
import Posix
import SectionCore
import SectionServer

/// Catching up: the head and the log after what is applied, read at one revision and applied
/// entry by entry, as changes of this host's own; the snapshot when the log no longer reaches.
extension Fleet {
  /// Reads the head and the log after what is applied, in one txn (one revision), and applies
  /// it; again until the head is reached. `proposal`: a commit whose outcome is unknown, which
  /// may be the first entry.
  func catchUp(after proposal: Proposal? = nil) {
    if proposal == nil { phase = .catchingUp }
    // After a commit whose outcome is unknown, from the revision before its group.
    let applied = proposal?.base ?? server.service.model.revision
    let txn = Txn(
      compare: [],
      success: [
        .range(RangeRequest(key: headKey)),
        .range(
          RangeRequest(
            key: logKey(applied + 1), rangeEnd: RangeRequest.prefixEnd(logPrefix), limit: catchUpPage)),
      ])
    client.txn(txn) { [unowned self] result in
      if let proposal, !awaits(proposal) { return }  // the watch showed it committed meanwhile
      switch result {
      case .success(let answer):
        contact()
        catchUpPage = min(catchUpPageLimit, catchUpPage * 2)
        caughtUp(answer, after: proposal)
      case .failure(let error) where error.kind == .answerTooLarge && catchUpPage > 1:
        // Entries larger than etcd's default requests: the same read in half the entries.
        catchUpPage /= 2
        catchUp(after: proposal)
      case .failure(var error):
        if error.kind == .answerTooLarge {
          // One entry alone over the limit: nothing here can read it; the poll tries again.
          error = EtcdError(
            .answerTooLarge, call: error.call, member: error.member,
            detail: "the entry \(String(decoding: logKey(applied + 1), as: UTF8.self)) alone: \(error.detail)"
          )
        }
        failed(error)
        if let proposal {
          retry(proposal, because: error, mayBeApplied: true) { [unowned self] in catchUp(after: proposal) }
        } else {
          // The requests that waited for it are answered now, the changes refused as while
          // etcd is known down (the poll lifts it), instead of waiting for a catch-up that
          // may not come before etcd answers again: a change is never held past its bound.
          server.service.changeRefusal = unavailable(error)
          phase = .idle
          server.fleetCaughtUp()
        }
      }
    }
  }

  func caughtUp(_ answer: TxnResponse, after proposal: Proposal?) {
    guard answer.responses.count == 2, case .range(let heads) = answer.responses[0],
      case .range(let logs) = answer.responses[1], let head = heads.kvs.first,
      let (revision, snapshot, _) = parseHead(head.value)
    else {
      Log.error("fleet: the head under \(options.prefix) is missing or damaged; changes are refused")
      server.service.changeRefusal = ProtocolError(
        .unavailable, "the fleet's head in etcd is missing or damaged")
      finishCatchUp(proposal)
      return
    }
    seenRevision = max(seenRevision, revision)
    snapshotRevision = snapshot
    var pending = proposal
    for entry in logs.kvs {
      guard apply(entry, ownCommit: &pending) else {
        if pending != nil { server.fleetRetry() }
        adoptSnapshot()
        return
      }
    }
    if let unknown = pending, revision <= unknown.base {
      // The head moved without an entry after ours (another host's fence): the group was not
      // committed, and can never be now.
      pending = nil
      server.fleetRetry()
    }
    if server.service.model.revision >= revision {
      headRevision = head.modRevision
      finishCatchUp(pending)
    } else if logs.kvs.isEmpty {
      adoptSnapshot()
    } else {
      catchUp(after: pending)
    }
  }

  func finishCatchUp(_ proposal: Proposal?) {
    if let proposal {
      // Still unknown: the head did not reach past it.
      phase = .committing(proposal)
      return
    }
    phase = .idle
    server.fleetCaughtUp()
  }

  /// Applies one log entry if it is the next; false when it is not (the log was trimmed past
  /// what is applied: only the snapshot can help), or cannot be applied. An entry with the id
  /// of the commit whose outcome was unknown is that commit: the group applied here is kept;
  /// another host's entry in its place means it was never committed, and is run again.
  func apply(_ entry: KeyValue, ownCommit: inout Proposal?) -> Bool {
    guard let revision = logRevision(entry.key) else { return true }
    let decoded: FleetEntry
    do {
      decoded = try FleetEntry.decode(entry.value)
    } catch {
      Log.error("fleet: the entry at revision \(revision) cannot be read: \(error.message)")
      return false
    }
    if let proposal = ownCommit {
      if revision <= proposal.base { return true }
      ownCommit = nil
      if decoded.commit == proposal.commit {
        headRevision = entry.modRevision
        server.fleetCommitted()
        if proposal.reload { reloadedHere(at: revision) }
        return true
      }
      server.fleetRetry()
    }
    let applied = server.service.model.revision
    if revision <= applied { return true }
    do throws(ProtocolError) {
      switch decoded.body {
      case .changes(let changes, let authors):
        guard changes.first?.revision == applied + 1 else { return false }
        try server.service.applyRemote(changes, authors: authors)
        server.fleetApplied()
      case .state(let state, let events):
        server.fleetAdopt(state, events: events)
        // Once on every host, as the reloading host says it too (`reloadedHere`). The host's
        // name is etcd's text: only a name's characters reach STATUS and the log.
        let host = String(decoding: ClientName.asName(Array(decoded.host.utf8)), as: UTF8.self)
        listSource =
          "\(host)'s config (reloaded for every host at revision \(revision)); \(Fleet.configUnused)"
        Log.notice(
          "fleet: \(host) reloaded its config for every host: the list is replaced here too, at revision \(revision), \(counted(server.service.model.sections.count, "section")); \(Fleet.configUnused)"
        )
      }
    } catch {
      Log.error(
        "fleet: cannot apply the entry at revision \(revision): \(error.message); loading the fleet's state afresh"
      )
      return false
    }
    headRevision = entry.modRevision
    logBytesSinceSnapshot += entry.value.count
    return true
  }

  func catchUpIfBehind() {
    if seenRevision > server.service.model.revision, canApply { catchUp() }
  }
}
