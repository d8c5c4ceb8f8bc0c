import Testing

@testable import SectionCore
@testable import SectionServer
@testable import ServerHarnessSupport

/// A connection's life as one transition function: the table of
/// `Connection.Life`, checked pair by pair, and the turn's bookkeeping left empty after a turn.
/// `Life.next(on:)` answers nil for an illegal event; `Connection.handle` traps on that nil,
/// which a test cannot watch without ending the test process, so the refusal is checked here.
@Suite struct ConnectionLifeTests {
  typealias Life = Connection.Life
  typealias State = Connection.State
  typealias Event = Life.Event

  static let states: [State] = [
    .ready, .awaitingSave(replyStart: 10, replies: 2), .awaitingOthersSave, .outputBlocked, .quitting,
    .closed,
  ]
  static let phaseEvents: [Event] = [
    .changed(replyStart: 7), .replied, .outputMoved(by: 4), .waitForOthers, .released, .park, .outputFull,
    .outputDrained, .quit, .close,
  ]

  /// Where each event that changes what a connection waits for takes each state, written out
  /// as the doc comment's table says; nil: illegal. The subscription is `none` and the input
  /// not ended.
  static func expected(_ event: Event, from state: State) -> State? {
    switch (event, state) {
    case (.changed, .ready): .awaitingSave(replyStart: 7, replies: 1)
    case (.changed, .awaitingSave): .awaitingSave(replyStart: 10, replies: 3)
    case (.replied, .ready): .ready
    case (.replied, .awaitingSave): .awaitingSave(replyStart: 10, replies: 3)
    case (.outputMoved, .awaitingSave): .awaitingSave(replyStart: 6, replies: 2)
    case (.waitForOthers, .ready): .awaitingOthersSave
    case (.released, .awaitingSave), (.released, .awaitingOthersSave): .ready
    case (.park, .awaitingSave), (.park, .awaitingOthersSave): state
    case (.outputFull, .ready): .outputBlocked
    case (.outputDrained, .outputBlocked): .ready
    case (.quit, .ready): .quitting
    case (.close, .closed): nil
    case (.close, _): .closed
    default: nil
    }
  }

  @Test func everyStateAndEventAsTheTableSays() {
    for state in Self.states {
      for event in Self.phaseEvents {
        let next = Life(state: state).next(on: event)
        #expect(next?.state == Self.expected(event, from: state), "\(event) in \(state)")
        // None of these touches the input or the subscription.
        #expect(next.map { !$0.inputEnded && $0.subscription == .none } ?? true, "\(event) in \(state)")
      }
    }
  }

  /// A client that hung up while its connection waits for a save is parked (out of the epoll
  /// set) once, only while it waits; parking changes no other event's legality, and only the
  /// end of the wait (`released`) or `close` ends it: a parked connection is always one that
  /// waits for a save, and every release is seen to unpark.
  @Test func parkedOnlyWhileWaitingForASave() {
    func waiting(_ state: State) -> Bool {
      switch state {
      case .awaitingSave, .awaitingOthersSave: true
      case .ready, .outputBlocked, .quitting, .closed: false
      }
    }
    for state in Self.states {
      let parked = Life(state: state).next(on: .park)
      #expect(parked == (waiting(state) ? Life(state: state, parked: true) : nil), "\(state)")
      guard let parked else { continue }
      #expect(parked.next(on: .park) == nil, "parked twice in \(state)")
      for event in Self.phaseEvents + [.endOfInput, .subscribe] where event != .park {
        var unparked = Life(state: state).next(on: event)
        #expect((parked.next(on: event) == nil) == (unparked == nil), "\(event) in \(state)")
        guard let next = parked.next(on: event) else { continue }
        #expect(next.parked == waiting(next.state), "\(event) in \(state): \(next)")
        unparked?.parked = next.parked
        #expect(next == unparked, "\(event) in \(state)")
      }
    }
    #expect(Life(state: .awaitingOthersSave, parked: true).next(on: .released) == Life(state: .ready))
    #expect(
      Life(state: .awaitingSave(replyStart: 0, replies: 1), parked: true).next(on: .close)
        == Life(state: .closed))
  }

  /// Illegal events are refused, not applied: a connection never takes a request after QUIT,
  /// is never released from a save it did not wait for, never closed twice.
  @Test func illegalTransitionsAreRefused() {
    #expect(Life(state: .quitting).next(on: .changed(replyStart: 0)) == nil)
    #expect(Life(state: .ready).next(on: .released) == nil)
    #expect(Life(state: .outputBlocked).next(on: .waitForOthers) == nil)
    #expect(Life(state: .awaitingOthersSave).next(on: .quit) == nil)
    #expect(Life(state: .ready).next(on: .park) == nil)
    #expect(Life(state: .closed).next(on: .close) == nil)
    #expect(Life(inputEnded: true).next(on: .endOfInput) == nil)
    #expect(Life(state: .closed).next(on: .endOfInput) == nil)
    // A subscriber is unsubscribed before it is closed (it must leave the subscriber list).
    #expect(Life(subscription: .live).next(on: .close) == nil)
  }

  @Test func endOfInputHappensOnceInAnyOpenState() {
    for state in Self.states where state != .closed {
      let next = Life(state: state).next(on: .endOfInput)
      #expect(next == Life(state: state, inputEnded: true), "\(state)")
      #expect(next?.next(on: .endOfInput) == nil, "\(state)")
    }
  }

  /// The subscription's own changes, in any open state: subscribe, replay, end of a replay
  /// (caught up or not), falling behind, the snapshot that makes it live again, unsubscribe.
  @Test func subscriptionTransitions() {
    let subscriptions: [Subscription] = [.none, .live, .replaying, .owedSnapshot]
    let events: [Event] = [
      .subscribe, .replay, .replayEnded(caughtUp: true), .replayEnded(caughtUp: false), .fellBehind,
      .snapshotSent, .unsubscribe,
    ]
    func expected(_ event: Event, _ from: Subscription) -> Subscription? {
      switch (event, from) {
      case (.subscribe, .none): .live
      case (.replay, .live): .replaying
      case (.replayEnded(caughtUp: true), .replaying): .live
      case (.replayEnded(caughtUp: false), .replaying): .owedSnapshot
      case (.fellBehind, .live): .owedSnapshot
      case (.snapshotSent, .owedSnapshot): .live
      case (.unsubscribe, .none): nil
      case (.unsubscribe, _): Subscription.none
      default: nil
      }
    }
    for state in Self.states {
      for subscription in subscriptions {
        for event in events {
          let next = Life(state: state, subscription: subscription).next(on: event)
          let wanted = state == .closed ? nil : expected(event, subscription)
          #expect(next?.subscription == wanted, "\(event) in \(state), \(subscription)")
          #expect(next.map { $0.state == state } ?? true, "\(event) in \(state)")
        }
      }
    }
  }

  /// After a turn with a change, a read that waited for it, a subscriber and a pipelined
  /// flood, nothing is left held, waiting, released or queued, and every connection is ready.
  @Test func aTurnLeavesNothingBehind() throws {
    let harness = try ServerHarness()
    let subscriber = try harness.subscriber()
    let writer = try harness.connect()
    let reader = try harness.connect(.readOnly)
    try writer.send("TOGGLE a\nTOGGLE b\nLIST\nPING\n")
    try reader.send("LIST\nPING\n")
    #expect(
      try harness.run(until: {
        writer.hasReplies(4) && reader.hasReplies(2) && subscriber.hasEvents(2) && harness.server.turn.isOver
      }))
    #expect(harness.server.turn.isOver)
    for connection in harness.server.connections.values {
      #expect(connection.state == .ready)
    }
    #expect(writer.statuses.prefix(2) == ["OK 1", "OK 2"])
  }
}
