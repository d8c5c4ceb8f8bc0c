import Foundation
import Glibc
import Testing

/// Runtime edits over real sockets: replies, events, batches, durability and reloads.
@Suite struct EditTests {
  @Test func aListBuiltFromNothingIsServedAndFollowed() throws {
    let daemon = try TestDaemon(config: #"{"sections":[{"title":"Placeholder"}]}"#)
    let watcher = try daemon.connect()
    #expect(try watcher.request("SUBSCRIBE") == ["state 0 multi -", "OK 0"])
    let client = try daemon.connect()
    #expect(try client.request("DELETE placeholder") == ["OK 1"])
    #expect(try client.request("LIST") == ["OK 1"])
    #expect(try client.request("INSERT end inbox Inbox") == ["OK 2"])
    #expect(try client.request("INSERT 0 urgent Urgent things") == ["OK 3"])
    #expect(try client.request("ITEM INSERT inbox end Call Bob") == ["OK 4"])
    #expect(try client.request("ITEM INSERT inbox 0 Pay rent") == ["OK 5"])
    #expect(try client.request("MOVE inbox 0") == ["OK 6"])
    #expect(try client.request("RENAME urgent Urgent") == ["OK 7"])
    #expect(try client.request("ITEM SET inbox 1 Call Alice") == ["OK 8"])
    #expect(try client.request("OPEN inbox") == ["section 0 inbox open 2 Inbox", "OK 9"])
    #expect(
      try client.request("VIEW") == [
        "section 0 inbox open 2 Inbox", "item 0 0 Pay rent", "item 0 1 Call Alice",
        "section 1 urgent closed 0 Urgent", "OK 9",
      ])
    var events: [String] = []
    for _ in 0..<9 { events.append(try #require(try watcher.readEvent())) }
    #expect(
      events == [
        "!deleted 1 0 placeholder", "!inserted 2 0 inbox", "!inserted 3 0 urgent", "!items 4 1 inbox 1",
        "!items 5 1 inbox 2", "!moved 6 1 0 inbox", "!renamed 7 1 urgent", "!items 8 0 inbox 2",
        "!opened 9 0 inbox",
      ])
  }

  @Test func aBatchIsAllOrNothingAndItsEventsComeTogether() throws {
    let daemon = try TestDaemon()
    let watcher = try daemon.connect()
    _ = try watcher.request("SUBSCRIBE")
    let client = try daemon.connect()
    try client.send("BATCH\nINSERT end todo To do\nITEM INSERT todo end one\nOPEN todo\nEND\n")
    #expect(try client.readReply() == ["OK 3"])
    #expect(try watcher.readEvent() == "!inserted 1 3 todo")
    #expect(try watcher.readEvent() == "!items 2 3 todo 1")
    #expect(try watcher.readEvent() == "!opened 3 3 todo")
    try client.send("batch\nDELETE todo\nDELETE nothing\nend\n")
    #expect(try client.readReply() == ["ERR NOSECTION line 2: no section \"nothing\": there are 3 (0-2)"])
    #expect(try client.request("LIST").last == "OK 3")
    // A line too long poisons the whole batch; the lines after it are still read up to END.
    try client.send("BATCH\nDELETE todo\nRENAME first " + String(repeating: "x", count: 5000) + "\nEND\n")
    #expect(try client.readReply() == ["ERR TOOLONG line 2: request longer than 4096 bytes"])
    #expect(try client.request("ITEMS todo") == ["item 3 0 one", "OK 3"])
    #expect(try client.request("PING") == ["OK"])
  }

  @Test func aBatchLeftOpenAtDisconnectIsDiscarded() throws {
    let daemon = try TestDaemon()
    do {
      let client = try daemon.connect()
      try client.send("BATCH\nDELETE first\nDELETE second\n")
      let answer = try client.request("PING", timeout: 0.3)
      Issue.record("a line of a batch was answered: \(answer)")
    } catch is TestFailure {
      // No reply, as expected: the client closes here with its batch open.
    }
    #expect(try daemon.connect().request("LIST").count == 4)
  }

  @Test func editsAreRefusedOnTheReadOnlySocket() throws {
    let daemon = try TestDaemon()
    let viewer = try LineClient(path: daemon.directory.file("readonly.sock"))
    #expect(
      try viewer.request("INSERT 0 x X") == ["ERR READONLY INSERT changes state; use the control socket"])
    #expect(try viewer.request("BATCH") == ["ERR READONLY BATCH changes state; use the control socket"])
    #expect(try viewer.request("ITEM SET 0 0 x").first?.hasPrefix("ERR READONLY") == true)
  }

  @Test func limitsAreFlags() throws {
    let daemon = try TestDaemon(arguments: ["--max-sections", "4", "--max-section-items", "1"])
    let client = try daemon.connect()
    #expect(try client.request("INSERT end x X") == ["OK 1"])
    #expect(
      try client.request("INSERT end y Y") == ["ERR LIMIT sections: at most 4 (sectiond --max-sections)"])
    #expect(try client.request("ITEM INSERT x 0 a") == ["OK 2"])
    #expect(
      try client.request("ITEM INSERT x 0 b")
        == ["ERR LIMIT items per section: at most 1 (sectiond --max-section-items)"])
  }

  @Test func acknowledgedEditsSurviveSigkillAndCompaction() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    _ = try client.request("INSERT 1 n News")
    for number in 0..<50 { _ = try client.request("ITEM INSERT n end item \(number)") }
    _ = try client.request("OPEN n")
    let list = try client.request("VIEW")
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("VIEW") == list)
    // A start that replayed the journal writes the whole state and empties the journal; the
    // next saves append to it, each group ending with its revision and checksum.
    let again = try daemon.connect()
    let journal = daemon.statePath + ".journal"
    #expect(try String(contentsOfFile: journal, encoding: .utf8) == "")
    #expect(try again.request("ITEM DELETE n 0") == ["OK 53"])
    #expect(try again.request("TOGGLE 0") == ["section 0 first open 10 First", "OK 54"])
    let lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 6 && lines[3].hasPrefix("by ") && lines[4] == "open 54 0", "\(lines)")
    #expect(lines[2].hasPrefix("commit 53 ") && lines[5].hasPrefix("commit 54 "), "\(lines)")
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("ITEMS n").first == "item 1 0 item 1")
    #expect(try daemon.connect().request("LIST").first == "section 0 first open 10 First")
  }

  @Test func theJournalIsCompactedOnceItOutgrowsTheStateFile() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    #expect(try client.request("INSERT end big Big") == ["OK 1"])
    let text = String(repeating: "x", count: 3900)
    let journal = daemon.statePath + ".journal"
    func size(_ path: String) throws -> Int {
      try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? -1
    }
    // Each edit journals about 4 KB; past 1 MiB (and twice the state file) the whole state
    // is written, with every item, and the journal starts again.
    for round in 0..<8 {
      try client.send(String(repeating: "ITEM INSERT big end \(text)\n", count: 50))
      for number in 0..<50 { #expect(try client.readReply() == ["OK \(round * 50 + number + 2)"]) }
    }
    // 1.6 MB journaled in all: the state file holds the first 1 MiB or so (about 267 items),
    // the journal the rest (about 130 items, half a megabyte). The compaction finishes in the
    // background (see StateSyncer): until then the new journal has a name of its own.
    for _ in 0..<100 where FileManager.default.fileExists(atPath: journal + ".next") { usleep(50_000) }
    #expect(try size(daemon.statePath) > 1_000_000)
    #expect(try (300_000..<700_000).contains(size(journal)))
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("LIST").last == "OK 401")
    #expect(try daemon.connect().request("ITEMS big").count == 401)
  }

  @Test func aReloadKeepsWhatClientsDid() throws {
    let directory = TemporaryDirectory()
    let daemon = try TestDaemon(
      config: #"{"sections":[{"title":"A"},{"title":"B"},{"title":"C"}]}"#, directory: directory)
    let client = try daemon.connect()
    _ = try client.request("INSERT 1 mine Mine")
    _ = try client.request("DELETE c")
    _ = try client.request("RENAME b Bee")
    _ = directory.write(
      "sections.json",
      #"{"sections":[{"title":"A","items":["new"]},{"title":"B","items":["x"]},{"title":"C"},{"title":"D"}]}"#
    )
    #expect(try client.request("RELOAD") == ["OK 4"])
    let expected = [
      "section 0 a closed 1 A", "section 1 mine closed 0 Mine", "section 2 b closed 0 Bee",
      "section 3 d closed 0 D", "OK 4",
    ]
    #expect(try client.request("LIST") == expected)
    // A restart with the same changed config leads to the same list.
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("LIST") == expected)
  }
}
