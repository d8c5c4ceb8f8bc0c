import Testing

@testable import SectionCore

@Suite struct EditServiceTests {
  @Test func editsReplyWithTheRevisionAndRenderTheirEvents() {
    let harness = Harness()
    #expect(harness.send("INSERT 0 news Latest news") == ("OK 1\n", .changed))
    #expect(harness.send("ITEM INSERT news end Hello world") == ("OK 2\n", .changed))
    #expect(harness.send("MOVE news 3") == ("OK 3\n", .changed))
    #expect(harness.send("RENAME 3 The news") == ("OK 4\n", .changed))
    #expect(harness.send("DELETE b") == ("OK 5\n", .changed))
    #expect(
      harness.commit() == """
        !inserted 1 0 news
        !items 2 0 news 1
        !moved 3 0 3 news
        !renamed 4 3 news
        !deleted 5 1 b

        """)
    #expect(
      harness.reply("LIST")
        == "section 0 a closed 2 A\nsection 1 c closed 0 C\nsection 2 news closed 1 The news\nOK 5\n")
    #expect(harness.reply("ITEMS news") == "item 2 0 Hello world\nOK 5\n")
    #expect(harness.send("ITEM SET 2 0 Hi") == ("OK 6\n", .changed))
    #expect(harness.send("OPEN news") == ("section 2 news open 1 The news\nOK 7\n", .changed))
    _ = harness.commit()
    #expect(harness.reply("VIEW").contains("section 2 news open 1 The news\nitem 2 0 Hi\n"))
  }

  @Test func refusedEditsAreErrorsAndChangeNothing() {
    let harness = Harness()
    #expect(harness.send("DELETE zz") == ("ERR NOSECTION no section \"zz\": there are 3 (0-2)\n", .replied))
    #expect(
      harness.send("INSERT end a Again").0
        == "ERR EXISTS id \"a\" is already used by section 0; ids must be unique\n")
    #expect(harness.send("ITEM DELETE c 0").0.hasPrefix("ERR NOITEM no item 0 in section \"c\""))
    #expect(!harness.service.hasUnsavedChanges)
    #expect(harness.events == "")
  }

  @Test func editsAreRefusedOnTheReadOnlySocket() {
    let harness = Harness()
    for line in ["INSERT 0 x X", "DELETE a", "MOVE a 1", "RENAME a T", "ITEM SET a 0 x", "BATCH", "END"] {
      #expect(harness.send(line, access: .readOnly).0.hasPrefix("ERR READONLY "), "\(line)")
    }
    #expect(harness.batch == nil)
  }

  @Test func aNoOpEditWhileOthersAreUnsavedWaits() {
    let harness = Harness()
    _ = harness.send("TOGGLE a")
    #expect(harness.send("RENAME b B") == ("", .deferred))
    _ = harness.commit()
    #expect(harness.send("RENAME b B") == ("OK 1\n", .replied))
  }

  @Test func aBatchIsOneChangeWithOneReply() {
    let harness = Harness()
    #expect(harness.send("BATCH") == ("", nil))
    #expect(harness.send("INSERT end n News") == ("", nil))
    #expect(harness.send("") == ("", nil))
    #expect(harness.send("ITEM INSERT n end one") == ("", nil))
    #expect(harness.send("MOVE n 0") == ("", nil))
    #expect(harness.send("OPEN n") == ("", nil))
    #expect(harness.send("end") == ("OK 4\n", .changed))
    #expect(harness.batch == nil)
    // Each event names the index as it was at its step.
    #expect(harness.commit() == "!inserted 1 3 n\n!items 2 3 n 1\n!moved 3 3 0 n\n!opened 4 0 n\n")
    #expect(harness.reply("LIST").hasPrefix("section 0 n open 1 News\nsection 1 a closed"))
  }

  @Test func aFailingBatchAppliesNothing() {
    let harness = Harness()
    _ = harness.send("BATCH")
    _ = harness.send("INSERT end n News")
    _ = harness.send("DELETE a")
    _ = harness.send("ITEM DELETE n 0")
    #expect(
      harness.send("END")
        == ("ERR NOITEM line 3: no item 0 in section \"n\": it has 0 items; it has none\n", .replied))
    #expect(harness.batch == nil)
    #expect(!harness.service.hasUnsavedChanges)
    #expect(harness.reply("LIST") == Harness().reply("LIST"))
    #expect(harness.service.journal.isEmpty)
  }

  @Test func batchLinesAreCheckedBeforeAnyIsApplied() {
    let harness = Harness()
    _ = harness.send("BATCH")
    _ = harness.send("INSERT end n News")
    _ = harness.send("LIST")
    #expect(harness.send("END").0 == "ERR SYNTAX line 2: LIST cannot be in a batch; only changes can\n")
    _ = harness.send("BATCH")
    _ = harness.send("FROB")
    #expect(
      harness.send("END").0 == "ERR UNKNOWN line 1: unknown command \"FROB\"; HELP lists the commands\n")
    #expect(harness.send("END").0 == "ERR SYNTAX END without BATCH\n")
  }

  @Test func batchLimitAndOverlongLines() {
    var limits = EditLimits()
    limits.batchLines = 2
    let harness = Harness(limits: limits)
    _ = harness.send("BATCH")
    for id in ["x", "y", "z"] { _ = harness.send("INSERT end \(id) T") }
    #expect(
      harness.send("END").0 == "ERR LIMIT line 3: batch lines: at most 2 (sectiond --max-batch-lines)\n")
    _ = harness.send("BATCH")
    harness.batch?.addTooLong()
    _ = harness.send("INSERT end x T")
    #expect(harness.send("END").0 == "ERR TOOLONG line 1: request longer than 4096 bytes\n")
    let large = Harness()
    _ = large.send("BATCH")
    let long = "ITEM INSERT a end " + String(repeating: "x", count: 4000)
    for _ in 0..<(Batch.byteLimit / long.utf8.count + 1) { _ = large.send(long) }
    #expect(large.send("END").0 == "ERR LIMIT line 261: batch size: at most 1048576 bytes of lines\n")
    #expect(harness.reply("LIST") == Harness().reply("LIST"))
    // Blank lines are not kept, but count against the size: what a batch makes the daemon hold
    // is bounded however it is made up (a fleet keeps a batch's input to run it again).
    let blank = Harness()
    _ = blank.send("BATCH")
    _ = blank.send("INSERT end x T")
    let spaces = String(repeating: " ", count: 4000)
    for _ in 0..<(Batch.byteLimit / (spaces.utf8.count + 1) + 1) { _ = blank.send(spaces) }
    #expect(blank.send("END").0 == "ERR LIMIT line 264: batch size: at most 1048576 bytes of lines\n")
    #expect(blank.reply("LIST") == Harness().reply("LIST"))
  }

  @Test func aBatchWhoseReplyWouldShowOthersUnsavedStateWaitsWhole() {
    let harness = Harness()
    _ = harness.send("TOGGLE a")
    _ = harness.send("BATCH")
    _ = harness.send("DELETE zz")
    #expect(harness.send("END") == ("", .deferred))
    #expect(harness.batch != nil)
    _ = harness.commit()
    #expect(harness.send("END").0.hasPrefix("ERR NOSECTION line 1:"))
  }

  @Test func aBatchWithOthersUnsavedKeepsThemOnFailure() {
    let harness = Harness()
    _ = harness.send("TOGGLE a")
    _ = harness.send("BATCH")
    _ = harness.send("INSERT 0 n N")
    _ = harness.send("DELETE zz")
    #expect(harness.send("END") == ("", .deferred))
    #expect(harness.service.model.sections.map(\.id) == ["a", "b", "c"])
    #expect(harness.service.model.openIndices == [0])
    #expect(harness.events == "!opened 1 0 a\n")
  }

  @Test func rollbackUndoesEditsAndTheirPieces() {
    let harness = Harness()
    let list = harness.reply("LIST")
    _ = harness.send("INSERT 0 n N")
    _ = harness.send("ITEM INSERT a 0 z")
    harness.service.rollback()
    #expect(harness.reply("LIST") == list)
    #expect(harness.reply("ITEMS 0") == "item 0 0 a1\nitem 0 1 a2\nOK 0\n")
    #expect(harness.service.journal.isEmpty)
  }

  @Test func theJournalHoldsEveryChangeAndAReloadNeedsTheWholeState() throws {
    let harness = Harness()
    _ = harness.send("OPEN b")
    _ = harness.send("INSERT 1 n N")
    #expect(String(decoding: harness.service.journal, as: UTF8.self) == "open 1 1\ninsert 2 1 n N\n")
    #expect(!harness.service.needsSnapshot)
    _ = harness.commit()
    #expect(harness.service.journal.isEmpty)
    var reply = OutputQueue()
    _ = try harness.service.reload(config(.multi, [("z", [], false)]), by: harness.author, reply: &reply)
    #expect(harness.service.needsSnapshot)
  }

  /// RELOAD FRESH takes the config as it is: what clients inserted goes, what they deleted
  /// comes back, what they edited takes the config's text again; open sections stay open
  /// (a way back to the config without deleting files by hand).
  @Test func reloadFreshDropsClientsEdits() throws {
    let harness = Harness()
    _ = harness.send("INSERT end n New")
    _ = harness.send("DELETE c")
    _ = harness.send("RENAME a Renamed")
    _ = harness.send("OPEN b")
    _ = harness.commit()
    #expect(harness.send("RELOAD FRESH") == ("", .reload))
    var reply = OutputQueue()
    #expect(try harness.service.reload(abc(), by: harness.author, reply: &reply) == .changed)
    _ = harness.commit()
    #expect(
      harness.reply("LIST") == "section 0 a closed 2 A\nsection 1 b open 1 B\nsection 2 c closed 0 C\nOK 5\n")
    // The edits are forgotten: a plain reload now follows the config everywhere.
    var again = OutputQueue()
    _ = try harness.service.reload(
      config(.multi, [("a", [], false), ("b", [], false)]), by: harness.author, reply: &again)
    _ = harness.commit()
    #expect(harness.reply("LIST") == "section 0 a closed 0 A\nsection 1 b open 0 B\nOK 6\n")
    // Without edits, RELOAD FRESH of the same config changes nothing.
    #expect(harness.send("RELOAD FRESH").1 == .reload)
    var same = OutputQueue()
    #expect(
      try harness.service.reload(
        config(.multi, [("a", [], false), ("b", [], false)]), by: harness.author, reply: &same)
        == .replied)
    #expect(harness.send("RELOAD again").0.hasPrefix("ERR SYNTAX"))
  }
}
