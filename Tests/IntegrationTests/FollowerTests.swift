import Foundation
import Posix
import SectionClient
import Testing

/// `Follower`, the library's front for a poll(2) loop (`sectionctl ui` and `shell` run on
/// it), against the real daemon: the state with the open sections' items, the answers to
/// requests, the events, and a subscription that outlives the daemon.
@Suite struct FollowerTests {
  static let config = """
    {"mode": "multi", "sections": [{"id": "a", "title": "A", "items": ["a0", "a1"]},
      {"id": "b", "title": "B", "items": ["b0"]}]}
    """

  /// What a follower has said so far.
  struct Heard {
    var state: SectionState?
    var current = 0
    var lost = 0
    var answers: [Int: ClientError?] = [:]
    var snapshots: [StateSnapshot] = []
    var events: [Event] = []
  }

  /// Polls `follower`'s descriptor, as a program's loop would, until `done` holds.
  private func listen(
    _ follower: Follower, _ heard: inout Heard, for what: String, until done: (Heard) -> Bool
  ) throws {
    let deadline = Date().addingTimeInterval(10)
    while !done(heard) {
      guard Date() < deadline else { throw TestFailure("\(what): not within 10 s; heard \(heard)") }
      _ = try Poll.wait([(FileDescriptor(rawValue: follower.descriptor), .readable)], milliseconds: 100)
      for update in follower.take() {
        switch update {
        case .state(let state): heard.state = state
        case .current: heard.current += 1
        case .news(.lost): heard.lost += 1
        case .answered(let ticket, let error): heard.answers[ticket] = error
        case .subscribed(let snapshot): heard.snapshots.append(snapshot)
        case .event(let event): heard.events.append(event)
        case .news, .bye, .problem, .ended: break
        }
      }
    }
  }

  @Test func theStateHasTheOpenSectionsItemsAndRequestsAreAnswered() throws {
    let daemon = try TestDaemon(config: Self.config)
    let follower = try Follower(path: daemon.socketPath, name: "follower-test")
    var heard = Heard()
    try listen(follower, &heard, for: "the first state") { $0.current == 1 && $0.state != nil }
    #expect(heard.state?.sections.map(\.id) == ["a", "b"])
    #expect(heard.state?.items == [:])
    let opened = follower.perform(Request.open("a"))
    try listen(follower, &heard, for: "a opened with its items") {
      $0.answers[opened] != nil && $0.state?.items["a"] == ["a0", "a1"]
    }
    #expect(heard.answers[opened]! == nil)
    #expect(heard.state?.openIDs == ["a"])
    // Another client's edit of the list: the follower asks for it again, items and all.
    #expect(try daemon.connect().request("ITEM SET a 0 changed").last?.hasPrefix("OK") == true)
    try listen(follower, &heard, for: "the edited item") { $0.state?.items["a"] == ["changed", "a1"] }
    let refused = follower.perform(Request.open("nope"))
    try listen(follower, &heard, for: "the refusal") { $0.answers[refused] != nil }
    guard case .daemon(let code, _)?? = heard.answers[refused] else {
      throw TestFailure("not the daemon's refusal: \(String(describing: heard.answers[refused]))")
    }
    #expect(code == "NOSECTION")
  }

  @Test func theSubscriptionOutlivesTheDaemon() throws {
    let daemon = try TestDaemon(config: Self.config)
    let follower = try Follower(path: daemon.socketPath)
    var heard = Heard()
    try listen(follower, &heard, for: "the first state") { $0.current == 1 }
    daemon.stop()
    try listen(follower, &heard, for: "the connection lost") { $0.lost == 1 }
    try daemon.start()
    try listen(follower, &heard, for: "subscribed again") { $0.current == 2 }
    #expect(try daemon.connect().request("OPEN b").last?.hasPrefix("OK") == true)
    try listen(follower, &heard, for: "b opened with its items") { $0.state?.items["b"] == ["b0"] }
    #expect(heard.state?.openIDs == ["b"])
  }

  @Test func withoutADaemonItFailsAtOnce() {
    #expect(throws: ClientError.self) { try Follower(path: "/tmp/no-such-sectiond.sock") }
  }

  @Test func eventsComeAsTheyHappen() throws {
    let daemon = try TestDaemon(config: Self.config)
    let follower = try Follower(path: daemon.socketPath, following: .events(after: nil))
    var heard = Heard()
    try listen(follower, &heard, for: "the snapshot") { $0.snapshots.count == 1 && $0.current == 1 }
    #expect(try daemon.connect().request("OPEN b").last?.hasPrefix("OK") == true)
    try listen(follower, &heard, for: "the event") { !$0.events.isEmpty }
    #expect(heard.events == [.opened(revision: 1, index: 1, id: "b")])
    #expect(heard.state == nil, "a follower of events keeps no state")
  }

  /// A program that does not take the events (a shell running a long command) does not make
  /// this process hold them all: the subscription stops reading, and the daemon sends a
  /// `!state` in place of what it skipped.
  @Test func eventsNotTakenAreBounded() throws {
    let daemon = try TestDaemon(config: Self.config)
    let follower = try Follower(path: daemon.socketPath, following: .events(after: nil))
    var heard = Heard()
    try listen(follower, &heard, for: "the snapshot") { $0.current == 1 }
    let changes = 30_000
    let other = try daemon.connect()
    for _ in 0..<(changes / 1000) {
      try other.send(String(repeating: "TOGGLE a\n", count: 1000))
      for _ in 0..<1000 { _ = try other.readReply() }
    }
    let last = UInt64(changes)
    try listen(follower, &heard, for: "caught up") {
      $0.events.contains { event in
        if case .state(let snapshot) = event { snapshot.revision == last } else { event.revision == last }
      }
    }
    #expect(heard.events.count < changes)
    #expect(heard.events.contains { if case .state = $0 { true } else { false } })
  }
}
