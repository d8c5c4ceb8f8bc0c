extension Fleet {
  /// What this host's part in the fleet is doing, as one value that changes only through
  /// `next(on:)`: `Fleet.handle(_:)` applies an event and traps an illegal one, so a host can
  /// never, say, begin a commit while another is under way, or hear a commit's outcome when
  /// none is. Changes wait (the service is sealed) in every phase but `idle`.
  ///
  /// Events, and the changes they make (every other pair is illegal):
  ///
  /// | event | from | to |
  /// |---|---|---|
  /// | `join` (start, or the join reads the snapshot) | `joining` | `joining` |
  /// | `joined` (seeded, or adopted the fleet's list) | `joining` | `idle` |
  /// | `propose(p)` (a group's txn is sent) | `idle` | `committing(p)` |
  /// | `committed(by: .answer)`, `committed(by: .ownEntry)` | `committing` | `idle` |
  /// | `committed(by: .catchUp)` | `committing` | `catchingUp` |
  /// | `notCommitted(inCatchUp: false)` (retried or refused) | `committing` | `idle` |
  /// | `notCommitted(inCatchUp: true)` (another host's entry in its place) | `committing` | `catchingUp` |
  /// | `catchUp` | `idle`, `catchingUp` | `catchingUp` |
  /// | `readSnapshot` (the log no longer reaches) | `idle`, `catchingUp` | `catchingUp` |
  /// | `caughtUp` (or gave up for now: etcd did not answer) | `catchingUp` | `idle` |
  /// | `halted` (a damaged key) | `catchingUp`, `committing` | `idle` |
  ///
  /// "Committed" has one event whichever signal came first (the txn's answer, the host's own
  /// entry in its watch, a catch-up after a fence), and one path (`committed(_:at:by:)`); the
  /// signals that come later find no commit under way (`awaits`) and are dropped. A catch-up
  /// that finds the outcome goes on reading the log, so the host stays sealed until it is
  /// through. A catch-up after a fence that finds the log trimmed past the group ends the
  /// commit first (`notCommitted(inCatchUp: true)`, the group refused as of unknown outcome,
  /// `trimmedPast`), then reads the snapshot, which holds the group if it was committed.
  enum Phase: Equatable {
    /// Reading the head, seeding or adopting the fleet's list: changes are refused.
    case joining
    case idle
    /// A group's txn (or the fence after one whose outcome is unknown) is under way.
    case committing(Proposal)
    /// Reading and applying what other hosts committed.
    case catchingUp

    /// Where a commit's outcome was learned.
    enum Signal: Equatable {
      /// The txn's answer.
      case answer
      /// This host's own entry, back in its watch (often before the answer, `skipsOwn`).
      case ownEntry
      /// The catch-up after a fence: the log's entry after the group's base is this one.
      case catchUp
    }

    /// What happens to the host; see the table above for what each may change.
    enum Event: Equatable {
      case join
      case joined
      case propose(Proposal)
      case committed(by: Signal)
      case notCommitted(inCatchUp: Bool)
      case catchUp
      case readSnapshot
      case caughtUp
      case halted
    }

    /// Whether `proposal` is the commit under way: a signal about one that is not (its
    /// outcome was learned from another signal first) is stale.
    func awaits(_ proposal: Proposal) -> Bool { self == .committing(proposal) }

    /// The phase after `event`, or nil when the event is illegal here.
    func next(on event: Event) -> Phase? {
      switch (event, self) {
      case (.join, .joining): .joining
      case (.joined, .joining): .idle
      case (.propose(let proposal), .idle): .committing(proposal)
      case (.committed(.catchUp), .committing), (.notCommitted(inCatchUp: true), .committing): .catchingUp
      case (.committed, .committing), (.notCommitted(inCatchUp: false), .committing): .idle
      case (.catchUp, .idle), (.catchUp, .catchingUp): .catchingUp
      case (.readSnapshot, .idle), (.readSnapshot, .catchingUp): .catchingUp
      case (.caughtUp, .catchingUp): .idle
      case (.halted, .catchingUp), (.halted, .committing): .idle
      default: nil
      }
    }
  }
}
