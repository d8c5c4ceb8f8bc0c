import Etcd
import Posix
import SectionCore
import SectionServer

/// A group's commit: one txn comparing the head this host applied; on an unknown outcome,
/// the fence that finds out; retries within the deadline, then the refusal.
extension Fleet {
  func send(_ proposal: Proposal) {
    client.txn(proposal.txn, isStale: { [unowned self] in !awaits(proposal) }) { [unowned self] result in
      // Its entry came back in the watch first (`skipsOwn`): committed, nothing left to learn.
      guard awaits(proposal) else { return }
      switch result {
      case .success(let answer) where answer.succeeded:
        let pointer: RangeResponse? =
          if case .range(let range)? = answer.responses.last { range } else { nil }
        committed(proposal, at: answer.header.revision, by: .answer, pointer: pointer)
      case .success:
        contact()
        handle(.notCommitted(inCatchUp: false))
        server.finish(.retry)
        catchUp()
      case .failure(let error) where error.kind == .tooLarge:
        contact()
        handle(.notCommitted(inCatchUp: false))
        refuse(
          ProtocolError(.limit, "etcd refused the group as too large (\(error.detail)); nothing was applied"))
      case .failure(let error) where error.kind == .noSpace:
        // etcd answered: it will not take the group until an operator frees room.
        handle(.notCommitted(inCatchUp: false))
        refuse(refusedForSpace(error))
      case .failure(let error) where error.outcomeUnknown:
        failed(error)
        fence(proposal)
      case .failure(let error):
        failed(error)
        retry(proposal, because: error) { [unowned self] in send(proposal) }
      }
    }
  }

  /// Whether `proposal` is the commit under way: an answer about one that is not (its entry
  /// came back in the watch before the answer) is stale.
  func awaits(_ proposal: Proposal) -> Bool { phase.awaits(proposal) }

  /// etcd committed the group, its entry's mod revision `revision`: the one path of a commit,
  /// whichever signal came first. The txn's answer says so or, often sooner, the watch, which
  /// sends the entry back before the answer comes (`skipsOwn`); after a fence, the catch-up
  /// finds the entry in the log (`apply`), and goes on reading it. `pointer`: the txn's read
  /// of the snapshot's pointer, when the state is to be written in pieces (only the answer
  /// has it).
  func committed(
    _ proposal: Proposal, at revision: Int64, by signal: Phase.Signal, pointer: RangeResponse? = nil
  ) {
    contact()
    roomAgain()
    headRevision = revision
    // A catch-up read the head, and its snapshot revision, already: never one back.
    if proposal.snapshot > snapshotRevision {
      snapshotKnown(proposal.snapshot, bytes: 0)
      compactHistory(before: revision)
      snapshotRevision = proposal.snapshot
    }
    logBytesSinceSnapshot += proposal.entryBytes
    handle(.committed(by: signal))
    server.finish(.committed(revision: proposal.revision))
    if proposal.reload { reloadedHere(at: proposal.revision) }
    if let pieces = proposal.pieces, let pointer { writeSnapshot(pieces, replacing: pointer.kvs.first) }
    if signal != .catchUp { catchUpIfBehind() }
  }

  /// This host's RELOAD is committed: it replaced the list on every host, which its log says
  /// once, as every other host's does when it applies it.
  func reloadedHere(at revision: UInt64) {
    listSource = "this host's config (reloaded for every host at revision \(revision))"
    Log.notice(
      "fleet: this host's reload replaced the list on every host of the fleet, at revision \(revision)")
  }

  /// After a txn whose outcome is unknown: re-puts the head under the same compare. If that
  /// succeeds the earlier txn can never commit any more (the head it compared has moved), so
  /// the group is run again; if the compare fails, the head moved, and the catch-up finds
  /// whether the group is the entry after ours (`apply`).
  func fence(_ proposal: Proposal) {
    let txn = Txn(
      compare: [Compare(key: headKey, .modRevision(headRevision))],
      success: [.put(key: headKey, value: headValue(proposal.base, snapshot: snapshotRevision))])
    client.txn(txn) { [unowned self] result in
      guard awaits(proposal) else { return }
      switch result {
      case .success(let answer) where answer.succeeded:
        contact()
        headRevision = answer.header.revision
        handle(.notCommitted(inCatchUp: false))
        server.finish(.retry)
      case .success:
        contact()
        // The head moved: ours, or another host's. `apply` tells them apart by the commit id,
        // the phase still the commit's.
        catchUp(after: proposal)
      case .failure(let error):
        failed(error)
        retry(proposal, because: error, mayBeApplied: true) { [unowned self] in
          fence(proposal)
        }
      }
    }
  }

  func retry(
    _ proposal: Proposal, because error: EtcdError, mayBeApplied: Bool = false, _ again: @escaping () -> Void
  ) {
    // Only an attempt that can end before the deadline: a change is never held past it.
    guard monotonicMicroseconds() + Fleet.retryDelay + Fleet.attemptTimeout < proposal.deadline else {
      handle(.notCommitted(inCatchUp: false))
      let note =
        error.outcomeUnknown || mayBeApplied
        ? "; the change may have been applied (its outcome is unknown)" : "; nothing was applied"
      refuse(unavailable(error, note))
      gate.refusal = unavailable(error)
      return
    }
    // Not if the watch showed the group committed meanwhile.
    later { [unowned self] in if awaits(proposal) { again() } }
  }

  /// The group under way cannot be committed (etcd unreachable in time, too large): every
  /// request held for it is answered with `refusal`.
  func refuse(_ refusal: ProtocolError) {
    server.finish(refused(refusal))
  }

  /// The outcome that refuses the group, logged once.
  func refused(_ refusal: ProtocolError) -> CommitOutcome {
    Log.warning("changes refused: \(refusal.message)")
    return .refused(refusal)
  }

  static let retryDelay: UInt64 = 250_000

  func later(after delay: UInt64 = Fleet.retryDelay, _ action: @escaping () -> Void) {
    retryAction = action
    retryTimer?.rearm(after: delay)
    retryTimer?.setEnabled(true)
  }
}
