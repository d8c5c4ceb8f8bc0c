import Testing

@testable import SectionCore

/// A service over a config, and a way to send it one line and read the reply as text.
final class Harness {
  let service: SectionService
  /// The BATCH this client has open, as the server keeps it per connection.
  var batch: Batch?
  /// Who makes this client's changes: what its session carries into the service.
  var author = Harness.daemon()
  /// The author of changes made by nobody in particular (the daemon's, as at a start).
  static func daemon() -> Author { Author(via: .reload, uid: nil, pid: nil, name: "sectiond") }

  init(
    _ config: Config = abc(), saved: SavedState? = nil, limits: EditLimits = EditLimits(),
    history: History = History(capacity: 0)
  ) {
    service = SectionService(
      model: SectionModel(config: config, saved: saved), limits: limits, history: history)
  }

  /// The reply to `line` and what the server must do next.
  func send(_ line: String, access: SectionService.Access = .control) -> (String, SectionService.Outcome?) {
    send(Array(line.utf8), access: access)
  }

  func send(_ line: [UInt8], access: SectionService.Access = .control) -> (String, SectionService.Outcome?) {
    var reply = OutputQueue()
    var session = Session(access: access, author: author)
    let outcome = service.handle(ArraySlice(line), session: &session, batch: &batch, reply: &reply)
    // CLIENT NAME names the client for its next requests.
    author = session.author
    // A long answer whole, as a client that reads gets it.
    if outcome == .streaming, var stream = service.takeStream() {
      _ = service.continueStream(&stream, to: &reply, limit: .max)
    }
    return (String(decoding: reply.unsentBytes, as: UTF8.self), outcome)
  }

  /// Just the reply.
  func reply(_ line: String, access: SectionService.Access = .control) -> String {
    send(line, access: access).0
  }

  var events: String { String(decoding: service.pendingEvents, as: UTF8.self) }

  func commit() -> String { String(decoding: service.commit().events, as: UTF8.self) }

  /// The first line of what the server would save now as a whole state file (revision, mode
  /// and open sections), closed as a JSON object.
  func stateFile() -> String {
    var bytes: [UInt8] = []
    service.encodeState(into: &bytes)
    return String(decoding: bytes.prefix { $0 != 0x0A }.dropLast(), as: UTF8.self) + "}"
  }
}

@Suite struct SectionServiceReplyTests {
  @Test func ping() {
    let harness = Harness()
    #expect(harness.send("PING") == ("OK\n", .replied))
  }

  @Test func version() {
    #expect(Harness().send("VERSION") == ("version 0.1.0 1\nOK\n", .replied))
  }

  @Test func blankLinesGetNoReply() {
    let harness = Harness()
    #expect(harness.send("") == ("", nil))
    #expect(harness.send(" \t ") == ("", nil))
  }

  @Test func list() {
    let harness = Harness()
    #expect(
      harness.send("LIST")
        == ("section 0 a closed 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 0\n", .replied))
  }

  @Test func listOfTheDemo() {
    #expect(
      Harness(Config.demo).reply("list")
        == "section 0 first closed 10 First\nsection 1 second closed 8 Second\nsection 2 third closed 6 Third\nOK 0\n"
    )
  }

  @Test func titlesWithSpacesAreTheRestOfTheLine() {
    let harness = Harness(
      Config(mode: .multi, sections: [Section(id: "fv", title: "Fruit & Veg", items: ["a b"])]))
    #expect(harness.reply("LIST") == "section 0 fv closed 1 Fruit & Veg\nOK 0\n")
    #expect(harness.reply("ITEMS fv") == "item 0 0 a b\nOK 0\n")
  }

  @Test func items() {
    let harness = Harness()
    #expect(harness.send("ITEMS 0") == ("item 0 0 a1\nitem 0 1 a2\nOK 0\n", .replied))
    #expect(harness.reply("ITEMS b") == "item 1 0 b1\nOK 0\n")
    #expect(harness.reply("ITEMS c") == "OK 0\n")
    // ITEMS shows every item whether the section is open or not.
    _ = harness.send("OPEN a")
    _ = harness.commit()
    #expect(harness.reply("ITEMS a") == "item 0 0 a1\nitem 0 1 a2\nOK 1\n")
  }

  @Test func itemsOfTheDemo() {
    #expect(
      Harness(Config.demo).reply("ITEMS third")
        == "item 2 0 1\nitem 2 1 2\nitem 2 2 3\nitem 2 3 4\nitem 2 4 5\nitem 2 5 6\nOK 0\n")
  }

  @Test func view() {
    let harness = Harness()
    #expect(
      harness.reply("VIEW")
        == "section 0 a closed 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 0\n")
    _ = harness.send("OPEN 0")
    _ = harness.send("OPEN 1")
    _ = harness.send("OPEN 2")
    _ = harness.commit()
    #expect(
      harness.reply("VIEW")
        == "section 0 a open 2 A\nitem 0 0 a1\nitem 0 1 a2\nsection 1 b open 1 B\nitem 1 0 b1\nsection 2 c open 0 C\nOK 3\n"
    )
    _ = harness.send("CLOSE 0")
    _ = harness.commit()
    #expect(
      harness.reply("VIEW")
        == "section 0 a closed 2 A\nsection 1 b open 1 B\nitem 1 0 b1\nsection 2 c open 0 C\nOK 4\n")
  }

  @Test func noSuchSection() {
    let harness = Harness()
    #expect(harness.send("OPEN 7") == ("ERR NOSECTION no section \"7\": there are 3 (0-2)\n", .replied))
    #expect(harness.reply("ITEMS 3") == "ERR NOSECTION no section \"3\": there are 3 (0-2)\n")
    #expect(harness.reply("TOGGLE zz") == "ERR NOSECTION no section \"zz\": there are 3 (0-2)\n")
    #expect(harness.reply("CLOSE A") == "ERR NOSECTION no section \"A\": there are 3 (0-2)\n")
    #expect(harness.reply("TOGGLE -1") == "ERR NOSECTION no section \"-1\": there are 3 (0-2)\n")
    #expect(
      harness.reply("ITEMS 99999999999999999999999")
        == "ERR NOSECTION no section \"(too large)\": there are 3 (0-2)\n")
    // Leading zeros still name an index.
    #expect(harness.reply("TOGGLE 007") == "ERR NOSECTION no section \"7\": there are 3 (0-2)\n")
    #expect(harness.reply("TOGGLE 002") == "section 2 c open 0 C\nOK 1\n")
    #expect(harness.service.model.revision == 1)
  }

  @Test func parseErrorsAreReplies() {
    let harness = Harness()
    #expect(
      harness.send("FROB") == ("ERR UNKNOWN unknown command \"FROB\"; HELP lists the commands\n", .replied))
    #expect(
      harness.send("OPEN") == ("ERR SYNTAX OPEN needs a section: usage: OPEN <index|id|ALL>\n", .replied))
    #expect(harness.send([0x50, 0x00]) == ("ERR SYNTAX NUL byte in request\n", .replied))
    #expect(harness.send([0x50, 0x1B]) == ("ERR SYNTAX control character 0x1b in request\n", .replied))
    #expect(harness.send([0x50, 0xFF]) == ("ERR SYNTAX request is not valid UTF-8\n", .replied))
  }

  @Test func openCloseToggleInMulti() {
    let harness = Harness()
    #expect(harness.send("OPEN 1") == ("section 1 b open 1 B\nOK 1\n", .changed))
    #expect(harness.events == "!opened 1 1 b\n")
    #expect(harness.send("toggle a") == ("section 0 a open 2 A\nOK 2\n", .changed))
    #expect(harness.send("CLOSE b") == ("section 1 b closed 1 B\nOK 3\n", .changed))
    #expect(harness.send("TOGGLE 0") == ("section 0 a closed 2 A\nOK 4\n", .changed))
    #expect(harness.events == "!opened 1 1 b\n!opened 2 0 a\n!closed 3 1 b\n!closed 4 0 a\n")
  }

  @Test func noOpChangesKeepTheRevisionAndSendNoEvent() {
    let harness = Harness(abc(open: ["a"]))
    #expect(harness.send("OPEN 0") == ("section 0 a open 2 A\nOK 0\n", .replied))
    #expect(harness.send("CLOSE 1") == ("section 1 b closed 1 B\nOK 0\n", .replied))
    #expect(harness.send("MODE multi") == ("mode multi\nOK 0\n", .replied))
    #expect(harness.send("CLOSE ALL") == ("OK 1\n", .changed))
    #expect(harness.commit() == "!closed 1 0 a\n")
    #expect(harness.send("CLOSE ALL") == ("OK 1\n", .replied))
    #expect(harness.events == "")
    #expect(!harness.service.hasUnsavedChanges)
  }

  @Test func openAllAndCloseAllInMulti() {
    let harness = Harness()
    _ = harness.send("OPEN 1")
    _ = harness.commit()
    #expect(harness.send("OPEN ALL") == ("OK 3\n", .changed))
    #expect(harness.commit() == "!opened 2 0 a\n!opened 3 2 c\n")
    #expect(harness.send("OPEN all") == ("OK 3\n", .replied))
    #expect(harness.send("close all") == ("OK 6\n", .changed))
    #expect(harness.commit() == "!closed 4 0 a\n!closed 5 1 b\n!closed 6 2 c\n")
  }

  @Test func exclusiveMode() {
    let harness = Harness(abc(.exclusive))
    #expect(
      harness.send("OPEN ALL") == (
        "ERR MODE OPEN ALL needs multi mode; in exclusive mode one section is open at a time\n", .replied
      ))
    #expect(harness.send("OPEN 0") == ("section 0 a open 2 A\nOK 1\n", .changed))
    #expect(harness.commit() == "!opened 1 0 a\n")
    #expect(harness.send("OPEN 2") == ("section 2 c open 0 C\nOK 3\n", .changed))
    #expect(harness.commit() == "!closed 2 0 a\n!opened 3 2 c\n")
    #expect(harness.send("TOGGLE b") == ("section 1 b open 1 B\nOK 5\n", .changed))
    #expect(harness.commit() == "!closed 4 2 c\n!opened 5 1 b\n")
    #expect(harness.send("TOGGLE b") == ("section 1 b closed 1 B\nOK 6\n", .changed))
    #expect(harness.commit() == "!closed 6 1 b\n")
    #expect(
      harness.reply("LIST")
        == "section 0 a closed 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 6\n")
    _ = harness.send("OPEN c")
    #expect(harness.send("CLOSE ALL") == ("OK 8\n", .changed))
    #expect(harness.commit() == "!opened 7 2 c\n!closed 8 2 c\n")
  }

  @Test func mode() {
    let harness = Harness()
    #expect(harness.send("MODE") == ("mode multi\nOK 0\n", .replied))
    _ = harness.send("OPEN 2")
    _ = harness.send("OPEN 0")
    _ = harness.commit()
    #expect(harness.send("MODE exclusive") == ("mode exclusive\nOK 4\n", .changed))
    #expect(harness.commit() == "!closed 3 2 c\n!mode 4 exclusive\n")
    #expect(harness.reply("mode") == "mode exclusive\nOK 4\n")
    #expect(harness.send("MODE Exclusive") == ("mode exclusive\nOK 4\n", .replied))
    #expect(harness.send("MODE MULTI") == ("mode multi\nOK 5\n", .changed))
    #expect(harness.commit() == "!mode 5 multi\n")
    #expect(
      harness.reply("LIST") == "section 0 a open 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 5\n")
  }

  @Test func subscribe() {
    let harness = Harness()
    #expect(harness.send("SUBSCRIBE") == ("state 0 multi -\nOK 0\n", .subscribe))
    _ = harness.send("OPEN 2")
    _ = harness.send("OPEN 0")
    _ = harness.commit()
    #expect(harness.send("subscribe") == ("state 2 multi a,c\nOK 2\n", .subscribe))
    var event = OutputQueue()
    harness.service.appendStateEvent(to: &event)
    #expect(String(decoding: event.unsentBytes, as: UTF8.self) == "!state 2 multi a,c\n")
    _ = harness.send("MODE exclusive")
    _ = harness.commit()
    event = OutputQueue()
    harness.service.appendStateEvent(to: &event)
    #expect(String(decoding: event.unsentBytes, as: UTF8.self) == "!state 4 exclusive a\n")
  }

  @Test func unsubscribeAndQuit() {
    let harness = Harness()
    #expect(harness.send("UNSUBSCRIBE") == ("OK\n", .unsubscribe))
    #expect(harness.send("QUIT") == ("OK\n", .quit))
  }

  @Test func help() {
    let expected = """
      help PING - check that the daemon answers
      help VERSION - daemon version and protocol version
      help LIST - every section: index, id, open or closed, item count, title
      help ITEMS <index|id> - every item of one section, open or not
      help VIEW - what an accordion shows: sections, and the items of open ones
      help OPEN <index|id|ALL> - open a section (in exclusive mode, closing the open one), or all (multi mode only)
      help CLOSE <index|id|ALL> - close a section, or all
      help TOGGLE <index|id> - open a closed section or close an open one
      help MODE [exclusive|multi] - show the mode, or switch it (to exclusive keeps the most recently opened section)
      help SUBSCRIBE [FROM <rev>] - current state, then one event line per change; FROM <rev>: the changes after rev, when all are kept, instead of the state
      help UNSUBSCRIBE - stop receiving events
      help HELP - this list
      help QUIT - close the connection
      help RELOAD [FRESH] - re-read the config file, keeping clients' edits; FRESH drops them (control socket only)
      help STATUS - the daemon's process, paths, uptime, clients and subscribers
      help HISTORY [n] | HISTORY FROM <rev> - who changed what, when: the last n changes (default 20), or those after rev
      help CLIENT NAME <name> - name this connection in the history (A-Z a-z 0-9 . _ : @ -, at most 64)
      help INSERT <index|end> <id> <title> - insert a new closed section with no items (control socket only)
      help DELETE <index|id> - delete a section (control socket only)
      help MOVE <index|id> <index> - move a section to an index (control socket only)
      help RENAME <index|id> <title> - give a section a new title; the id stays (control socket only)
      help ITEM INSERT <index|id> <pos|end> <text> | ITEM DELETE <index|id> <pos> | ITEM MOVE <index|id> <from> <to> | ITEM SET <index|id> <pos> <text> - insert, delete, move or replace one item of a section (control socket only)
      help BATCH - collect the lines up to END and apply them as one change: all or none
      help END - end a BATCH
      OK

      """
    #expect(Harness().send("HELP") == (expected, .replied))
  }

  @Test func linesAreSlicesOfTheSharedReadBuffer() {
    let service = SectionService(model: SectionModel(config: abc()))
    let buffer = Array("PING\ntoggle\tb\nLIST\n".utf8)
    var reply = OutputQueue()
    var batch: Batch?
    var control = Session(access: .control, author: Harness.daemon())
    var readOnly = Session(access: .readOnly, author: Harness.daemon())
    #expect(service.handle(buffer[5..<13], session: &control, batch: &batch, reply: &reply) == .changed)
    #expect(service.handle(buffer[5..<13], session: &readOnly, batch: &batch, reply: &reply) == .replied)
    #expect(
      String(decoding: reply.unsentBytes, as: UTF8.self)
        == "section 1 b open 1 B\nOK 1\nERR READONLY TOGGLE changes state; use the control socket\n")
    #expect(String(decoding: service.commit().events, as: UTF8.self) == "!opened 1 1 b\n")
  }

  @Test func revisionsContinueFromTheSavedState() {
    let harness = Harness(abc(), saved: SavedState(revision: 41, mode: .multi, sections: ["b": 40]))
    #expect(
      harness.reply("LIST") == "section 0 a closed 2 A\nsection 1 b open 1 B\nsection 2 c closed 0 C\nOK 41\n"
    )
    #expect(harness.send("TOGGLE 0") == ("section 0 a open 2 A\nOK 42\n", .changed))
    #expect(harness.events == "!opened 42 0 a\n")
  }

  /// Near the top of the range every change, reload included, is refused and nothing moves, so
  /// the state file never holds a revision its reader would refuse.
  @Test func changesPastTheRevisionLimitAreRefused() {
    let top = SectionModel.maxRevision - 4
    let harness = Harness(abc(), saved: SavedState(revision: top, mode: .multi, sections: [:]))
    #expect(harness.send("TOGGLE 0").1 == .changed)
    _ = harness.commit()
    let before = harness.service.model
    for request in ["TOGGLE 0", "OPEN 1", "CLOSE ALL", "MODE exclusive"] {
      let (reply, outcome) = harness.send(request)
      #expect(reply.hasPrefix("ERR INTERNAL the revision is at its limit"), "\(request): \(reply)")
      #expect(outcome == .replied)
    }
    var reply = OutputQueue()
    #expect(throws: ProtocolError.revisionsExhausted) {
      try harness.service.reload(abc(open: ["c"]), by: harness.author, reply: &reply)
    }
    #expect(reply.unsentBytes.isEmpty)
    #expect(harness.service.model == before)
    #expect(harness.events == "")
  }
}

@Suite struct SectionServiceReadOnlyTests {
  @Test(arguments: [
    ("OPEN 0", "OPEN"), ("open all", "OPEN"), ("CLOSE ALL", "CLOSE"), ("close 1", "CLOSE"),
    ("TOGGLE a", "TOGGLE"),
    ("\t mode exclusive", "MODE"), ("MODE multi", "MODE"), ("RELOAD", "RELOAD"), ("OPEN 99", "OPEN"),
  ])
  func stateChangesAreRefused(line: String, verb: String) {
    let harness = Harness()
    #expect(
      harness.send(line, access: .readOnly) == (
        "ERR READONLY \(verb) changes state; use the control socket\n", .replied
      ))
    #expect(harness.service.model == SectionModel(config: abc()))
    #expect(harness.events == "")
    #expect(!harness.service.hasUnsavedChanges)
  }

  @Test func readingIsAllowed() {
    let harness = Harness()
    #expect(harness.send("LIST", access: .readOnly).1 == .replied)
    #expect(harness.send("MODE", access: .readOnly) == ("mode multi\nOK 0\n", .replied))
    #expect(harness.send("ITEMS 1", access: .readOnly) == ("item 1 0 b1\nOK 0\n", .replied))
    #expect(harness.send("VIEW", access: .readOnly).1 == .replied)
    #expect(harness.send("SUBSCRIBE", access: .readOnly) == ("state 0 multi -\nOK 0\n", .subscribe))
    #expect(harness.send("UNSUBSCRIBE", access: .readOnly) == ("OK\n", .unsubscribe))
    #expect(harness.send("PING", access: .readOnly) == ("OK\n", .replied))
    #expect(harness.send("HELP", access: .readOnly).1 == .replied)
    #expect(harness.send("QUIT", access: .readOnly) == ("OK\n", .quit))
  }

  @Test func syntaxErrorsComeBeforeReadOnly() {
    let harness = Harness()
    #expect(
      harness.send("OPEN", access: .readOnly) == (
        "ERR SYNTAX OPEN needs a section: usage: OPEN <index|id|ALL>\n", .replied
      ))
  }
}

@Suite struct SectionServiceCommitTests {
  @Test func commitHandsOverTheEventsOnce() {
    let harness = Harness()
    #expect(!harness.service.hasUnsavedChanges)
    _ = harness.send("OPEN 0")
    #expect(harness.service.hasUnsavedChanges)
    _ = harness.send("OPEN 1")
    // A no-op's reply would show the unsaved state: it waits for the save.
    #expect(harness.send("OPEN 1") == ("", .deferred))
    #expect(harness.service.hasUnsavedChanges)
    #expect(harness.commit() == "!opened 1 0 a\n!opened 2 1 b\n")
    #expect(!harness.service.hasUnsavedChanges)
    #expect(harness.events == "")
    #expect(harness.commit() == "")
    #expect(harness.service.model.revision == 2)
  }

  @Test func rollbackRestoresTheModelAndDropsTheEvents() {
    let harness = Harness()
    _ = harness.send("OPEN 2")
    _ = harness.commit()
    let committed = harness.service.model
    _ = harness.send("OPEN 0")
    _ = harness.send("MODE exclusive")
    #expect(harness.service.model.revision == 4)
    #expect(harness.events == "!opened 2 0 a\n!closed 3 2 c\n!mode 4 exclusive\n")
    harness.service.rollback()
    #expect(harness.service.model == committed)
    #expect(harness.events == "")
    #expect(!harness.service.hasUnsavedChanges)
    #expect(harness.commit() == "")
    #expect(
      harness.reply("LIST") == "section 0 a closed 2 A\nsection 1 b closed 1 B\nsection 2 c open 0 C\nOK 1\n")
    // The revisions that were rolled back are used again: no reply or event ever showed them
    // (replies that would have shown them wait for the save), so each still names one state.
    #expect(harness.send("OPEN 1") == ("section 1 b open 1 B\nOK 2\n", .changed))
    #expect(harness.commit() == "!opened 2 1 b\n")
  }

  @Test func rollbackWithNothingUnsavedDoesNothing() {
    let harness = Harness()
    _ = harness.send("OPEN 0")
    _ = harness.commit()
    let before = harness.service.model
    harness.service.rollback()
    #expect(harness.service.model == before)
  }

  @Test func listAndViewCachesFollowChangesAndRollbacks() {
    let harness = Harness()
    let closed = "section 0 a closed 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 0\n"
    #expect(harness.reply("LIST") == closed)
    #expect(harness.reply("VIEW") == closed)
    _ = harness.send("OPEN 0")
    harness.service.rollback()
    #expect(harness.reply("LIST") == closed)
    #expect(harness.reply("VIEW") == closed)
    _ = harness.send("OPEN 0")
    _ = harness.commit()
    #expect(
      harness.reply("LIST") == "section 0 a open 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 1\n")
    #expect(
      harness.reply("VIEW")
        == "section 0 a open 2 A\nitem 0 0 a1\nitem 0 1 a2\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 1\n"
    )
    _ = harness.send("CLOSE 0")
    _ = harness.commit()
    let closedAgain = "section 0 a closed 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 2\n"
    #expect(harness.reply("LIST") == closedAgain)
    // A no-op leaves the caches as they are and they are still right.
    _ = harness.send("CLOSE 0")
    #expect(harness.reply("LIST") == closedAgain)
    _ = harness.send("MODE exclusive")
    _ = harness.commit()
    #expect(
      harness.reply("LIST")
        == "section 0 a closed 2 A\nsection 1 b closed 1 B\nsection 2 c closed 0 C\nOK 3\n")
  }
}

@Suite struct SectionServiceReloadTests {
  let next = config(.multi, [("c", ["c1", "c2"], false), ("d", ["d1"], true), ("a", ["x"], false)])

  @Test func reloadIsAskedForThenApplied() throws {
    let harness = Harness()
    _ = harness.send("OPEN a")
    _ = harness.send("OPEN b")
    _ = harness.commit()
    #expect(harness.send("RELOAD") == ("", .reload))
    var reply = OutputQueue()
    #expect(try harness.service.reload(next, by: harness.author, reply: &reply) == .changed)
    #expect(String(decoding: reply.unsentBytes, as: UTF8.self) == "OK 3\n")
    #expect(harness.commit() == "!reload 3\n")
    #expect(
      harness.reply("LIST") == "section 0 c closed 2 C\nsection 1 d open 1 D\nsection 2 a open 1 A\nOK 3\n")
    #expect(harness.reply("ITEMS 0") == "item 0 0 c1\nitem 0 1 c2\nOK 3\n")
    #expect(harness.reply("ITEMS a") == "item 2 0 x\nOK 3\n")
    #expect(harness.reply("ITEMS b") == "ERR NOSECTION no section \"b\": there are 3 (0-2)\n")
    #expect(
      harness.reply("VIEW")
        == "section 0 c closed 2 C\nsection 1 d open 1 D\nitem 1 0 d1\nsection 2 a open 1 A\nitem 2 0 x\nOK 3\n"
    )
    #expect(harness.send("TOGGLE d") == ("section 1 d closed 1 D\nOK 4\n", .changed))
    #expect(harness.events == "!closed 4 1 d\n")
    #expect(
      harness.stateFile() == #"{"format":2,"revision":4,"mode":"multi","sections":{"c":null,"d":null,"a":1}}"#
    )
  }

  @Test func reloadOfTheSameConfigChangesNothing() throws {
    let harness = Harness()
    _ = harness.reply("LIST")
    var reply = OutputQueue()
    #expect(try harness.service.reload(abc(), by: harness.author, reply: &reply) == .replied)
    #expect(String(decoding: reply.unsentBytes, as: UTF8.self) == "OK 0\n")
    #expect(harness.events == "")
    #expect(!harness.service.hasUnsavedChanges)
  }

  @Test func rollingBackAReloadRestoresTheOldSections() throws {
    let harness = Harness()
    let list = harness.reply("LIST")
    var reply = OutputQueue()
    _ = try harness.service.reload(next, by: harness.author, reply: &reply)
    #expect(harness.send("ITEMS 0") == ("", .deferred))
    #expect(
      harness.stateFile() == #"{"format":2,"revision":1,"mode":"multi","sections":{"c":null,"d":1,"a":null}}"#
    )
    harness.service.rollback()
    #expect(harness.events == "")
    #expect(harness.reply("LIST") == list)
    #expect(harness.reply("ITEMS 0") == "item 0 0 a1\nitem 0 1 a2\nOK 0\n")
    #expect(
      harness.stateFile()
        == #"{"format":2,"revision":0,"mode":"multi","sections":{"a":null,"b":null,"c":null}}"#)
  }

  @Test func refusedReload() {
    let harness = Harness()
    var reply = OutputQueue()
    reply.append(
      contentsOf: harness.service.refuseReload(ConfigError("/etc/s.json: \"sections\" is empty")).line)
    #expect(
      String(decoding: reply.unsentBytes, as: UTF8.self) == "ERR CONFIG /etc/s.json: \"sections\" is empty\n")
    #expect(harness.events == "")
  }
}

@Suite struct ProtocolPiecesTests {
  @Test func fixedErrors() {
    #expect(
      String(decoding: ProtocolError.tooLong.line, as: UTF8.self)
        == "ERR TOOLONG request longer than 4096 bytes\n")
    #expect(
      String(decoding: ProtocolError.tooManyClients.line, as: UTF8.self) == "ERR BUSY too many clients\n")
    #expect(
      String(decoding: ProtocolError(.internal, "disk full").line, as: UTF8.self)
        == "ERR INTERNAL disk full\n")
  }

  @Test(arguments: [
    (UInt64(0), "0"), (9, "9"), (10, "10"), (1234567890, "1234567890"), (UInt64.max, "18446744073709551615"),
  ])
  func decimals(value: UInt64, text: String) {
    var buffer: [UInt8] = Array("x".utf8)
    buffer.appendDecimal(value)
    #expect(String(decoding: buffer, as: UTF8.self) == "x" + text)
  }

  @Test func caseInsensitiveComparison() {
    #expect(asciiCaseInsensitiveEquals(bytes("ExClUsIvE"), "exclusive"))
    #expect(!asciiCaseInsensitiveEquals(bytes("exclusiv"), "exclusive"))
    #expect(!asciiCaseInsensitiveEquals(bytes("multi!"), "multi"))
    // Only ASCII letters fold: '@' (0x40) is not '`' (0x60), '[' is not '{'.
    #expect(!asciiCaseInsensitiveEquals(bytes("@"), "`"))
    #expect(!asciiCaseInsensitiveEquals(bytes("["), "{"))
  }
}

/// No reply may show a change before it is saved. While changes wait for the save,
/// requests whose reply depends on the state are handed back (`.deferred`), untouched.
@Suite struct SectionServiceUnsavedTests {
  @Test(arguments: ["LIST", "VIEW", "ITEMS 0", "MODE", "SUBSCRIBE", "RELOAD", "OPEN 0", "TOGGLE zz"])
  func waitsForTheSave(line: String) {
    let harness = Harness()
    _ = harness.send("OPEN 0")
    #expect(harness.send(line) == ("", .deferred))
    #expect(harness.events == "!opened 1 0 a\n")
    _ = harness.commit()
    #expect(harness.send(line).1 != .deferred)
  }

  @Test(arguments: [
    ("PING", "OK\n"), ("VERSION", "version \(SectionService.daemonVersion) 1\nOK\n"), ("QUIT", "OK\n"),
    ("BOGUS", "ERR UNKNOWN unknown command \"BOGUS\"; HELP lists the commands\n"),
  ])
  func stateFreeRepliesDoNotWait(line: String, reply: String) {
    let harness = Harness()
    _ = harness.send("OPEN 0")
    #expect(harness.reply(line) == reply)
  }

  @Test func changesJoinTheUnsavedGroup() {
    let harness = Harness()
    _ = harness.send("OPEN 0")
    #expect(harness.send("TOGGLE 0") == ("section 0 a closed 2 A\nOK 2\n", .changed))
    #expect(harness.commit() == "!opened 1 0 a\n!closed 2 0 a\n")
  }

  @Test func aReadAfterARollbackShowsTheSavedState() {
    let harness = Harness()
    _ = harness.send("OPEN 0")
    #expect(harness.send("LIST").1 == .deferred)
    harness.service.rollback()
    #expect(harness.reply("LIST").hasSuffix("OK 0\n"))
  }
}
