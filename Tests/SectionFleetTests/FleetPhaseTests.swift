import Etcd
import Testing

@testable import SectionFleet

/// The fleet's phase as one transition function: the table of `Fleet.Phase`, checked pair by
/// pair. `Phase.next(on:)` answers nil for an illegal event; `Fleet.handle` traps on that nil,
/// which a test cannot watch without ending the test process, so the refusal is checked here.
/// What each outcome does to the etcd keys and the clients is `FleetEtcdTests`' and the fleet
/// suites' (fleet.py, fleet-retry.py, fleet-faults.py), against a real etcd.
@Suite struct FleetPhaseTests {
  typealias Phase = Fleet.Phase
  typealias Event = Phase.Event

  static func proposal(_ commit: String) -> Fleet.Proposal {
    Fleet.Proposal(
      commit: commit, base: 4, revision: 5, txn: Txn(compare: [], success: []), snapshot: 0, pieces: nil,
      entryBytes: 150, deadline: 0, reload: false)
  }
  static let own = proposal("b.1")

  static let phases: [Phase] = [.joining, .idle, .committing(own), .catchingUp]
  static let events: [Event] = [
    .join, .joined, .propose(proposal("b.2")), .committed(by: .answer), .committed(by: .ownEntry),
    .committed(by: .catchUp), .notCommitted(inCatchUp: false), .notCommitted(inCatchUp: true), .catchUp,
    .readSnapshot, .caughtUp, .halted,
  ]

  /// Where each event takes each phase, written out as the doc comment's table says; nil:
  /// illegal.
  static func expected(_ event: Event, from phase: Phase) -> Phase? {
    switch (event, phase) {
    case (.join, .joining): .joining
    case (.joined, .joining): .idle
    case (.propose, .idle): .committing(proposal("b.2"))
    case (.committed(by: .answer), .committing), (.committed(by: .ownEntry), .committing): .idle
    case (.committed(by: .catchUp), .committing): .catchingUp
    case (.notCommitted(inCatchUp: false), .committing): .idle
    case (.notCommitted(inCatchUp: true), .committing): .catchingUp
    case (.catchUp, .idle), (.catchUp, .catchingUp): .catchingUp
    case (.readSnapshot, .idle), (.readSnapshot, .catchingUp): .catchingUp
    case (.caughtUp, .catchingUp): .idle
    case (.halted, .catchingUp), (.halted, .committing): .idle
    default: nil
    }
  }

  @Test func everyPhaseAndEventAsTheTableSays() {
    for phase in Self.phases {
      for event in Self.events {
        #expect(phase.next(on: event) == Self.expected(event, from: phase), "\(event) in \(phase)")
      }
    }
  }

  /// A commit is begun only when nothing is under way: never over another commit (whose
  /// outcome its clients wait for), a catch-up or the join.
  @Test func aCommitBeginsOnlyWhenIdle() {
    for phase in Self.phases {
      let next = phase.next(on: .propose(Self.own))
      #expect(next == (phase == .idle ? .committing(Self.own) : nil), "\(phase)")
    }
  }

  /// "Committed" arrives once, whichever signal came first: after it, the commit is no longer
  /// awaited, so the other signals (the answer after the watch's entry, or the watch's entry
  /// after the answer) are stale and dropped, and no signal can commit it a second time.
  @Test func committedArrivesOnceWhicheverSignalCameFirst() {
    for first in [Phase.Signal.answer, .ownEntry, .catchUp] {
      let committing = Phase.idle.next(on: .propose(Self.own))
      #expect(committing?.awaits(Self.own) == true)
      #expect(committing?.awaits(Self.proposal("b.9")) == false, "another commit's answer")
      guard let after = committing?.next(on: .committed(by: first)) else {
        Issue.record("committed by \(first) refused")
        continue
      }
      #expect(!after.awaits(Self.own), "after \(first)")
      for second in [Phase.Signal.answer, .ownEntry, .catchUp] {
        #expect(after.next(on: .committed(by: second)) == nil, "\(second) after \(first)")
      }
      // Found by the catch-up after a fence, the rest of the log is read before changes are
      // taken again; by the answer or the watch, changes are taken at once.
      #expect(after == (first == .catchUp ? .catchingUp : .idle), "after \(first)")
    }
  }

  /// Each outcome of a commit ends it: committed, retried on the newer state or refused,
  /// the host is sealed until it is through the catch-up that learned it, if one did.
  @Test func everyOutcomeEndsTheCommit() {
    let outcomes: [Event] = [
      .committed(by: .answer), .committed(by: .ownEntry), .committed(by: .catchUp),
      .notCommitted(inCatchUp: false), .notCommitted(inCatchUp: true), .halted,
    ]
    for outcome in outcomes {
      let after = Phase.committing(Self.own).next(on: outcome)
      #expect(after == .idle || after == .catchingUp, "\(outcome)")
      #expect(after?.awaits(Self.own) == false, "\(outcome)")
      // The next commit can begin once the host is idle, after the catch-up if there was one.
      let idle = after == .catchingUp ? after?.next(on: .caughtUp) : after
      #expect(
        idle?.next(on: .propose(Self.proposal("b.2"))) == .committing(Self.proposal("b.2")), "\(outcome)")
    }
  }
}
