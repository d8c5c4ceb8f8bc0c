import SectionGrammar
import Testing

@testable import SectionCore

/// The levels read < operate < edit: which request needs which, and what a connection at each
/// level is answered.
@Suite struct AccessLevelTests {
  /// Every request of the protocol with the level it needs, as PROTOCOL.md's table states it.
  static let table: [(String, AccessLevel)] = [
    ("PING", .read), ("VERSION", .read), ("LIST", .read), ("VIEW", .read), ("ITEMS 0", .read),
    ("MODE", .read), ("SUBSCRIBE", .read), ("SUBSCRIBE FROM 0", .read), ("UNSUBSCRIBE", .read),
    ("HELP", .read), ("STATUS", .read), ("HISTORY", .read), ("HISTORY FROM 0", .read),
    ("CLIENT NAME kiosk", .read), ("QUIT", .read),
    ("OPEN 0", .operate), ("CLOSE b", .operate), ("TOGGLE 1", .operate), ("OPEN ALL", .operate),
    ("CLOSE ALL", .operate), ("BATCH", .operate), ("END", .operate),
    ("MODE exclusive", .edit), ("RELOAD", .edit), ("RELOAD FRESH", .edit), ("INSERT end d D", .edit),
    ("DELETE a", .edit), ("MOVE a 2", .edit), ("RENAME a New", .edit), ("ITEM INSERT a end x", .edit),
    ("ITEM DELETE a 0", .edit), ("ITEM MOVE a 0 1", .edit), ("ITEM SET a 0 y", .edit),
  ]

  @Test func theLevelsAreOrdered() {
    #expect(AccessLevel.read < .operate && AccessLevel.operate < .edit && AccessLevel.read < .edit)
    #expect(AccessLevel.allCases.sorted() == [.read, .operate, .edit])
  }

  @Test func everyVerbHasTheLevelTheTableSays() throws {
    let verbs = Set(Self.table.map { $0.0.split(separator: " ")[0].uppercased() })
    #expect(verbs == Set(Verb.allCases.map(\.name)), "the table leaves a verb out")
    for (line, level) in Self.table {
      let request = try #require(try RequestParser.parse(ArraySlice(line.utf8))?.get(), "\(line)")
      #expect(request.level == level, "\(line)")
    }
  }

  /// At each level on the control socket, every request at or below it goes through, and every
  /// one above it is `ERR DENIED <needs> <has>` and changes nothing.
  @Test(arguments: AccessLevel.allCases)
  func eachLevelIsAllowedWhatTheTableSays(level: AccessLevel) {
    for (line, needs) in Self.table where line != "END" && line != "QUIT" {
      let harness = Harness()
      let before = harness.stateFile()
      let (reply, _) = harness.send(line, access: .init(level: level))
      if needs <= level {
        #expect(!reply.hasPrefix("ERR DENIED"), "\(line) at \(level): \(reply)")
      } else {
        #expect(reply.hasPrefix("ERR DENIED \(needs.rawValue) \(level.rawValue) "), "\(line): \(reply)")
        #expect(harness.events == "" && !harness.service.hasUnsavedChanges, "\(line)")
        #expect(harness.stateFile() == before && harness.service.model == SectionModel(config: abc()))
        #expect(harness.batch == nil)
      }
    }
  }

  @Test func theRefusalNamesBothLevelsTheRequestAndTheFix() {
    let harness = Harness()
    #expect(
      harness.reply("delete a", access: .init(level: .operate))
        == "ERR DENIED edit operate DELETE needs the edit level and this connection has operate; nothing was changed; sectiond's access rules grant levels (sectiond(8), ACCESS)\n"
    )
  }

  /// A batch is one change: a line above the level refuses it whole at END, with none of its
  /// lines applied, whichever line it is.
  @Test(arguments: [
    ["OPEN a", "DELETE b"], ["MODE exclusive", "OPEN a"], ["TOGGLE a", "TOGGLE b", "ITEM SET a 0 z"],
  ])
  func aBatchMixingLevelsIsRefusedWhole(lines: [String]) {
    let harness = Harness()
    let operate = SectionService.Access(level: .operate)
    #expect(harness.send("BATCH", access: operate).1 == nil)
    for line in lines { #expect(harness.send(line, access: operate).1 == nil) }
    let (reply, outcome) = harness.send("END", access: operate)
    let denied = lines.firstIndex { !$0.hasPrefix("OPEN") && !$0.hasPrefix("TOGGLE") }! + 1
    #expect(reply.hasPrefix("ERR DENIED edit operate line \(denied) of the batch, "), "\(reply)")
    #expect(outcome == .replied)
    #expect(harness.events == "" && !harness.service.hasUnsavedChanges)
    #expect(harness.service.model == SectionModel(config: abc()))
    #expect(harness.batch == nil)
    // The same lines without the edit go through at operate.
    #expect(harness.send("BATCH", access: operate).1 == nil)
    _ = harness.send("OPEN a", access: operate)
    _ = harness.send("TOGGLE b", access: operate)
    #expect(harness.send("END", access: operate).1 == .changed)
  }

  @Test func statusTellsTheConnectionItsLevel() {
    for level in AccessLevel.allCases {
      #expect(
        Harness().reply("STATUS", access: .init(level: level)).hasPrefix("status access \(level.rawValue)\n"))
    }
    // The read-only socket's STATUS stays what it was: its level is read, whoever connects.
    #expect(!Harness().reply("STATUS", access: .readOnly).contains("access"))
  }

  /// Who may see who made each change: every level above read, as the control socket always did.
  @Test func onlyReadIsToldLessAboutWhoChanged() {
    #expect(!SectionService.Access.readOnly.seesWho)
    #expect(!SectionService.Access(level: .read).seesWho)
    #expect(SectionService.Access(level: .operate).seesWho && SectionService.Access.control.seesWho)
  }
}
