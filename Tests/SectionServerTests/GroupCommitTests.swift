import Testing

@testable import SectionCore
@testable import SectionServer
@testable import ServerHarnessSupport

/// The group commit, driven in this process: what a client is told, and what another one
/// reads, is always what the state file holds.
///
/// The state file is looked at between loop iterations: that catches a reply or an event
/// sent in the turn that made the change, before the turn's save. What is sent within the
/// save's own iteration but ahead of it, a failed save shows: an `OK` or an event already out
/// could no longer be taken back (`aFailedSaveRefusesTheWholeGroup`).
@Suite struct GroupCommitTests {
  /// A change's `OK` is not on the socket until the state file has the change: looked at
  /// after every loop iteration, from the request to the reply.
  @Test func noOKBeforeTheSave() throws {
    let harness = try ServerHarness()
    let client = try harness.connect()
    try client.send("TOGGLE a\nTOGGLE b\n")
    var iterationsBeforeReply = 0
    let answered = try harness.run(until: { client.hasReplies(2) }) {
      client.receive()
      if client.statuses.isEmpty { iterationsBeforeReply += 1 }
      for status in client.statuses {
        let revision = UInt64(status.split(separator: " ").last ?? "") ?? .max
        let saved = try harness.saved()?.revision ?? 0
        #expect(saved >= revision, "\(status) sent before the save")
      }
    }
    #expect(answered)
    #expect(client.statuses == ["OK 1", "OK 2"])
    #expect(try harness.savedOpen() == ["a", "b"])
    // The requests were handled in one iteration and saved in another: the check above saw
    // the state before the save too.
    #expect(iterationsBeforeReply >= 1)
  }

  /// Another connection's read in the same turn waits for the change to be saved, and then
  /// shows it; a subscriber's event for it comes after the save too: nothing another client
  /// is sent shows a change the state file does not have.
  @Test func aReaderSeesAChangeOnlyOnceSaved() throws {
    let harness = try ServerHarness()
    let subscriber = try harness.subscriber()
    let writer = try harness.connect()
    let reader = try harness.connect(.readOnly)
    // The writer's request first: epoll hands the server ready sockets in the order they
    // became ready, so the read is handled after the change, in the same turn.
    try writer.send("OPEN b\n")
    try reader.send("LIST\n")
    let answered = try harness.run(until: {
      writer.hasReplies(1) && reader.hasReplies(1) && subscriber.hasEvents(1)
    }) {
      reader.receive()
      subscriber.receive()
      guard reader.lines.contains("section 1 b open 0 B") || !subscriber.events.isEmpty else { return }
      let saved = try harness.savedOpen()
      #expect(saved.contains("b"), "b shown open before the save: \(reader.received) \(subscriber.events)")
    }
    #expect(answered)
    #expect(writer.statuses == ["OK 1"])
    #expect(
      reader.lines == ["section 0 a closed 0 A", "section 1 b open 0 B", "section 2 c closed 0 C", "OK 1"])
    #expect(subscriber.events == ["!opened 1 1 b"])
  }

  /// Changes that several clients make in one loop turn are saved once, together; a change
  /// in a later turn is a save of its own.
  @Test func oneTurnOneSave() throws {
    let harness = try ServerHarness()
    let first = try harness.connect()
    let second = try harness.connect()
    try first.send("OPEN a\nOPEN b\n")
    try second.send("OPEN c\n")
    #expect(try harness.run(until: { first.hasReplies(2) && second.hasReplies(1) }))
    #expect(first.statuses + second.statuses == ["OK 1", "OK 2", "OK 3"])
    #expect(try harness.journalCommits() == ["3"])

    try second.send("CLOSE a\n")
    #expect(try harness.run(until: { second.hasReplies(2) }))
    #expect(try harness.journalCommits() == ["3", "4"])
  }

  /// A save that fails refuses every change of its group with the error, and no one (a read
  /// in the same turn, a subscriber, a read after it) ever sees them; the next save, once
  /// the disk is back, has none of them.
  @Test func aFailedSaveRefusesTheWholeGroup() throws {
    let harness = try ServerHarness()
    let subscriber = try harness.subscriber()
    #expect(subscriber.lines == ["state 0 multi -", "OK 0"])

    harness.breakSaves()
    let writer = try harness.connect()
    let reader = try harness.connect(.readOnly)
    try writer.send("OPEN a\nTOGGLE b\nOPEN c\n")
    try reader.send("LIST\n")
    #expect(try harness.run(until: { writer.hasReplies(3) && reader.hasReplies(1) }))
    #expect(writer.statuses.count == 3)
    #expect(writer.statuses.allSatisfy { $0.hasPrefix("ERR INTERNAL state not saved") }, "\(writer.received)")
    #expect(
      reader.lines == ["section 0 a closed 0 A", "section 1 b closed 0 B", "section 2 c closed 0 C", "OK 0"])

    harness.mendSaves()
    try reader.send("LIST\n")
    try writer.send("OPEN b\n")
    #expect(
      try harness.run(until: { reader.hasReplies(2) && writer.hasReplies(4) && subscriber.hasEvents(1) }))
    #expect(
      reader.lines.suffix(4) == [
        "section 0 a closed 0 A", "section 1 b closed 0 B", "section 2 c closed 0 C", "OK 0",
      ])
    #expect(writer.statuses.last == "OK 1")
    #expect(subscriber.events == ["!opened 1 1 b"])
    #expect(try harness.savedOpen() == ["b"])
    #expect(try harness.saved()?.revision == 1)
  }
}
