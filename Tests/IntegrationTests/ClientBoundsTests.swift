import Foundation
import SectionClient
import SectionCore
import Testing

/// What the blocking `Client` holds against a server that floods it: the events
/// that come before a reply are bounded and drained in linear time, and a `!state` takes the
/// place of those before it.
@Suite struct ClientBoundsTests {
  /// `count` events, revisions from `first`, of section `id`.
  private static func events(_ count: Int, from first: Int = 1, id: String = "a") -> String {
    (first..<first + count).map { "!opened \($0) 0 \(id)\n" }.joined()
  }

  /// An id of 1,000 bytes: fewer events reach the bound, and the tests stay quick.
  private static let long = String(repeating: "x", count: 1000)

  /// 200,000 events before a reply (16.2 MB as the client counts them, just under its bound):
  /// all kept, in order, and taken one by one in about a second in a debug build (draining by
  /// removeFirst, O(n^2), took 20 s).
  @Test func eventsBeforeAReplyDrainInLinearTime() throws {
    let peer = try ScriptedPeer()
    let count = 200_000
    let flood = ClientBoundsTests.events(count)
    peer.script = { _, lines in lines.last == "LIST" ? .answer(flood + "OK 1\n") : .wait }
    let client = try Client(path: peer.path)
    #expect(try client.request("LIST").revision == 1)
    let start = Date()
    var taken = 0
    var last: UInt64 = 0
    while client.hasPendingEvents, Date().timeIntervalSince(start) < 8 {
      last = try #require(try client.nextEvent()?.revision)
      taken += 1
    }
    #expect(taken == count && last == UInt64(count))
    #expect(Date().timeIntervalSince(start) < 8, "drained \(taken) of \(count) events in 8 s")
  }

  /// A server that streams events and never answers: the request fails once the events pass
  /// `Client.maximumPendingEventBytes`, rather than growing the client without end.
  @Test func eventsWithoutAReplyEndTheRequest() throws {
    let peer = try ScriptedPeer()
    let flood = ClientBoundsTests.events(20_000, id: ClientBoundsTests.long)
    peer.script = { _, lines in lines.last == "LIST" ? .answer(flood) : .wait }
    let client = try Client(path: peer.path, timeout: 30)
    #expect(throws: ClientError.tooManyEvents(path: peer.path)) { try client.request("LIST") }
    // The connection is dropped with what it held: nothing more is read out of step.
    #expect(!client.hasPendingEvents)
    #expect(throws: ClientError.connectionLost(path: peer.path)) { try client.request("PING") }
  }

  /// A `!state` says all that the events before it said: it takes their place, so a daemon
  /// that sends many events, then a snapshot, then more, stays within the bound.
  @Test func aStateTakesThePlaceOfTheEventsBeforeIt() throws {
    let peer = try ScriptedPeer()
    let half = 10_000
    let before = ClientBoundsTests.events(half, id: ClientBoundsTests.long)
    let after = ClientBoundsTests.events(half, from: half + 2, id: ClientBoundsTests.long)
    let snapshot = "!state \(half + 1) multi a\n"
    peer.script = { _, lines in lines.last == "LIST" ? .answer(before + snapshot + after + "OK 9\n") : .wait }
    let client = try Client(path: peer.path)
    #expect(try client.request("LIST").revision == 9)
    #expect(
      try client.nextEvent()
        == .state(StateSnapshot(revision: UInt64(half + 1), mode: .multi, openIDs: ["a"])))
    #expect(try client.nextEvent()?.revision == UInt64(half + 2))
  }
}
