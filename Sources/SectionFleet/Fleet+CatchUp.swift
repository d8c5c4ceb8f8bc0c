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
    if proposal == nil { handle(.catchUp) }
    // After a commit whose outcome is unknown, from the revision before its group.
    let applied = proposal?.base ?? appliedRevision
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
          gate.refusal = unavailable(error)
          handle(.caughtUp)
          server.resumeChanges()
          // The poll pauses while a key is damaged: its retry goes on.
          if damage != nil { later(after: damageDelay) { [unowned self] in catchUp() } }
        }
      }
    }
  }

  func caughtUp(_ answer: TxnResponse, after proposal: Proposal?) {
    guard answer.responses.count == 2, case .range(let heads) = answer.responses[0],
      case .range(let logs) = answer.responses[1]
    else {
      return halt(at: headKey, "was not answered as read", unknown: proposal) { [unowned self] in catchUp() }
    }
    // What this host applied for certain: a commit whose outcome is unknown may not be.
    let committed = proposal?.base ?? appliedRevision
    let (head, revision, snapshot): (KeyValue, UInt64, UInt64)
    switch checkedHead(heads.kvs.first, applied: committed) {
    case .failure(let problem):
      return halt(at: headKey, problem.message, unknown: proposal) { [unowned self] in catchUp() }
    case .success(let checked): (head, revision, snapshot) = checked
    }
    seenRevision = max(seenRevision, revision)
    snapshotRevision = snapshot
    var pending = proposal
    for entry in logs.kvs {
      switch apply(entry, ownCommit: &pending) {
      case .applied: continue
      case .notNext:
        // The log was trimmed past what is applied (the head's snapshot revision may be older
        // than a snapshot in pieces written since): only the snapshot can help, if it reaches
        // past what is applied.
        if let unknown = pending { trimmedPast(unknown) }
        return adoptSnapshot(missing: logKey(appliedRevision + 1))
      case .damaged(let problem):
        return halt(at: entry.key, problem, unknown: pending) { [unowned self] in catchUp() }
      }
    }
    if let unknown = pending, revision <= unknown.base {
      // The head moved without an entry after ours (another host's fence): the group was not
      // committed, and can never be now.
      pending = nil
      notCommittedInCatchUp()
    }
    let applied = appliedRevision
    if applied >= revision {
      headRevision = head.modRevision
      // The head is the fleet's revision: a higher one a bad key showed no longer counts.
      seenRevision = revision
      repaired()
      finishCatchUp(pending)
    } else if !logs.kvs.isEmpty {
      catchUp(after: pending)
    } else {
      if let unknown = pending { trimmedPast(unknown) }
      adoptSnapshot(missing: logKey(appliedRevision + 1))
    }
  }

  /// The head read from etcd, checked: there, readable, of the fleet this host joined, and not
  /// before what this host applied (etcd's data went back: a restored backup, docs/FLEET.md).
  func checkedHead(_ head: KeyValue?, applied: UInt64) -> Result<(KeyValue, UInt64, UInt64), ProtocolError> {
    guard let head else {
      return .failure(ProtocolError(.unavailable, "is missing from a fleet that has a log"))
    }
    guard let (revision, snapshot, id) = parseHead(head.value) else {
      return .failure(
        ProtocolError(.unavailable, "is damaged: not `<revision> <snapshot revision> <fleet id>`"))
    }
    guard id == fleetID else {
      return .failure(
        ProtocolError(.unavailable, "names fleet \(id), not \(fleetID), the one this host joined"))
    }
    guard revision >= applied else {
      return .failure(
        ProtocolError(
          .unavailable,
          "names revision \(revision), before the \(applied) this host applied: etcd's data went back (restored from a backup?); see docs/FLEET.md, \"Restoring etcd from a backup\""
        ))
    }
    return .success((head, revision, snapshot))
  }
  func finishCatchUp(_ proposal: Proposal?) {
    // Still unknown (the head did not reach past it): the phase stays the commit's.
    guard proposal == nil else { return }
    handle(.caughtUp)
    server.resumeChanges()
  }

  /// The catch-up after a fence found the group not committed (another host's entry in its
  /// place, or a head that moved without one): its requests run again on the newer state
  /// once the catch-up is through.
  func notCommittedInCatchUp() {
    handle(.notCommitted(inCatchUp: true))
    server.finish(.retry)
  }

  /// The log no longer reaches the group whose outcome is unknown (trimmed past it): whether it
  /// was committed cannot be learned any more (the snapshot that replaces the log keeps no
  /// commit ids), so its requests are refused as of unknown outcome, not run again (a TOGGLE
  /// committed and run again would undo itself). The group is undone before the snapshot is
  /// adopted, which holds it if it was committed.
  func trimmedPast(_ proposal: Proposal) {
    handle(.notCommitted(inCatchUp: true))
    refuse(
      ProtocolError(
        .unavailable,
        "the fleet's log was trimmed past \(proposal) before its outcome was known; the change may have been applied (its outcome is unknown); reads are served from revision \(proposal.base)"
      ))
  }

  /// What became of one log entry (`apply`).
  enum Applied {
    /// Applied, or nothing to apply here (already applied, this host's own commit).
    case applied
    /// It begins past the next revision: the log before it is gone (trimmed) or missing.
    case notNext
    /// It cannot be applied: what is wrong with it.
    case damaged(String)
  }

  /// Applies one log entry if it is the next. Everything in it is checked before anything is
  /// applied: its key, its header's revision against the key's, its text and checksum
  /// (`FleetEntry.decode`), where its group begins, and each change against the state it
  /// applies to. An entry with the id of the commit whose outcome was unknown is that commit:
  /// the group applied here is kept; another host's entry in its place means it was never
  /// committed, and is run again.
  func apply(_ entry: KeyValue, ownCommit: inout Proposal?) -> Applied {
    guard let revision = logRevision(entry.key) else { return .damaged("is not a log entry's key") }
    let decoded: FleetEntry
    do {
      decoded = try FleetEntry.decode(entry.value)
    } catch {
      return .damaged("cannot be read: \(error.message)")
    }
    guard decoded.revision == revision else {
      return .damaged("holds the entry of revision \(decoded.revision), not \(revision)")
    }
    let first =
      switch decoded.body {
      case .changes(let changes, _): changes[0].revision
      case .state(_, let first): first
      }
    if let proposal = ownCommit {
      if revision <= proposal.base { return .applied }
      // Not the entry after the group's base: the log before it is gone, the group's with it.
      if first > proposal.base + 1 { return .notNext }
      ownCommit = nil
      if decoded.commit == proposal.commit {
        committed(proposal, at: entry.modRevision, by: .catchUp)
        return .applied
      }
      notCommittedInCatchUp()
    }
    let applied = appliedRevision
    if revision <= applied { return .applied }
    if first > applied + 1 { return .notNext }
    guard first == applied + 1 else {
      return .damaged("begins at revision \(first), which this host applied already")
    }
    do throws(ProtocolError) {
      switch decoded.body {
      case .changes(let changes, let authors):
        try server.applyFromElsewhere(changes, authors: authors, through: Array(decoded.host.utf8))
      case .state(let state, _):
        server.adopt(state, reloaded: true)
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
      return .damaged("does not apply to revision \(applied): \(error.message)")
    }
    headRevision = entry.modRevision
    logBytesSinceSnapshot += entry.value.count
    return .applied
  }

  func catchUpIfBehind() {
    if seenRevision > appliedRevision, canApply { catchUp() }
  }
}
