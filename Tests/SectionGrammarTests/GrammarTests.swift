import SectionClient
import SectionCore
import SectionGrammar
import SectionShared
import Testing

/// The client library's requests against the daemon's parser, both made from the grammar: a
/// line the library sends is one the daemon reads as the request meant.
@Suite struct ClientRequestTests {
  /// Every request the library makes (each with arguments the daemon accepts), and the verb
  /// and form of the grammar it is meant to be.
  static let requests: [(lines: [String], verb: Verb, form: Int)] = [
    (SectionClient.Request.ping.lines, .ping, 0),
    (SectionClient.Request.version.lines, .version, 0),
    (SectionClient.Request.list.lines, .list, 0),
    (SectionClient.Request.view.lines, .view, 0),
    (SectionClient.Request.items("a").lines, .items, 0),
    (SectionClient.Request.toggle("1").lines, .toggle, 0),
    (SectionClient.Request.open("a").lines, .open, 0),
    (SectionClient.Request.close("2").lines, .close, 0),
    (SectionClient.Request.change(.toggle, "a").lines, .toggle, 0),
    (SectionClient.Request.openAll.lines, .open, 0),
    (SectionClient.Request.closeAll.lines, .close, 0),
    (SectionClient.Request.mode.lines, .mode, 0),
    (SectionClient.Request.setMode(.exclusive).lines, .mode, 1),
    (SectionClient.Request.status.lines, .status, 0),
    (SectionClient.Request.history().lines, .history, 0),
    (SectionClient.Request.history(last: 5).lines, .history, 1),
    (SectionClient.Request.history(after: 7).lines, .history, 2),
    (SectionClient.Request.reload().lines, .reload, 0),
    (SectionClient.Request.reload(fresh: true).lines, .reload, 1),
    (SectionClient.Request.insert(id: "n", title: "A title").lines, .insert, 0),
    (SectionClient.Request.insert(id: "n", title: "A title", at: 2).lines, .insert, 0),
    (SectionClient.Request.delete("a").lines, .delete, 0),
    (SectionClient.Request.move("a", to: 2).lines, .move, 0),
    (SectionClient.Request.rename("a", to: "New title").lines, .rename, 0),
    (SectionClient.Request.insertItem("some text", in: "a").lines, .item, 0),
    (SectionClient.Request.insertItem("some text", in: "a", at: 1).lines, .item, 0),
    (SectionClient.Request.deleteItem(at: 1, in: "a").lines, .item, 1),
    (SectionClient.Request.moveItem(from: 0, to: 1, in: "a").lines, .item, 2),
    (SectionClient.Request.setItem(at: 0, to: "other text", in: "a").lines, .item, 3),
    ([Subscribing.request(after: nil)], .subscribe, 0),
    ([Subscribing.request(after: 12)], .subscribe, 1),
  ]

  /// The daemon's reading of `line`, or why it refuses it.
  func parsed(_ line: String) -> Result<SectionCore.Request, ProtocolError>? {
    RequestParser.parse(ArraySlice(Array(line.utf8)))
  }

  @Test func everyRequestIsALineTheDaemonReadsAsMeant() throws {
    for (lines, verb, form) in Self.requests {
      try #require(lines.count == 1, "\(lines)")
      let request = try #require(try parsed(lines[0])?.get(), "\(lines[0])")
      #expect(request.verb == verb, "\(lines[0])")
      // `HISTORY` and `HISTORY <n>` are one request, and so one form to the daemon.
      let meant = verb.row.forms[form]
      #expect(request.form == meant || (verb == .history && request.form.level == meant.level), "\(lines[0])")
    }
  }

  /// A batch is BATCH, lines that may stand in one, END.
  @Test func aBatchIsLinesThatMayStandInOne() throws {
    let changes = Self.requests.map(\.lines[0]).filter { line in
      (try? parsed(line)?.get())?.isBatchable == true
    }
    #expect(changes.count > 10)
    let batch = SectionClient.Request.batch([.change(.toggle, "a"), .move("b", to: 0), .setMode(.multi)])
      .lines
    #expect(batch.first.flatMap { try? parsed($0)?.get() } == .batch)
    #expect(batch.last.flatMap { try? parsed($0)?.get() } == .end)
    for line in batch.dropFirst().dropLast() {
      #expect(try #require(try parsed(line)?.get(), "\(line)").isBatchable, "\(line)")
    }
  }
}

/// What the table says of a verb that is not the daemon's to check: usage and offers.
@Suite struct RowTests {
  @Test func usageSpellsEachFormAndAnOptionalOneInBrackets() {
    #expect(Verb.toggle.usage == "TOGGLE <index|id>")
    #expect(Verb.mode.usage == "MODE [exclusive|multi]")
    #expect(Verb.history.usage == "HISTORY [n] | HISTORY FROM <rev>")
    #expect(Verb.client.usage == "CLIENT NAME <name>")
    #expect(
      Verb.item.usage
        == "ITEM INSERT <index|id> <pos|end> <text> | ITEM DELETE <index|id> <pos> | ITEM MOVE <index|id> <from> <to> | ITEM SET <index|id> <pos> <text>"
    )
  }

  /// A shell offers sections where every form has one, modes after MODE, and the keyword
  /// that picks ITEM's form; nothing where a keyword is optional or alone, or a number goes.
  @Test func offers() {
    #expect(Verb.open.row.offers(at: 0) == .section(also: ["ALL"]))
    #expect(Verb.toggle.row.offers(at: 0) == .section(also: []))
    #expect(Verb.item.row.offers(at: 0) == .words(["INSERT", "DELETE", "MOVE", "SET"]))
    #expect(Verb.item.row.offers(at: 1) == .section(also: []))
    #expect(Verb.item.row.offers(at: 2) == nil)
    #expect(Verb.mode.row.offers(at: 0) == .words(["exclusive", "multi"]))
    #expect(Verb.move.row.offers(at: 1) == nil)
    for verb in [Verb.reload, .history, .subscribe, .client, .ping] {
      #expect(verb.row.offers(at: 0) == nil, "\(verb)")
    }
  }
}
