import Testing

@testable import SectionClient

/// What each request sends, how its reply reads, and what is refused before anything is sent.
@Suite struct RequestTests {
  private func reply(_ lines: String...) throws -> Reply { try reply(lines) }

  private func reply(_ lines: [String]) throws -> Reply {
    var assembler = ReplyAssembler()
    for line in lines {
      if case .reply(let reply) = try assembler.take(line) { return reply }
    }
    throw ClientError.malformedReply("no status line")
  }

  @Test func linesAreTheProtocolsOwn() {
    #expect(Request.open("net").lines == ["OPEN net"])
    #expect(Request.toggle("2").lines == ["TOGGLE 2"])
    #expect(Request.insert(id: "logs", title: "Log files", at: nil).lines == ["INSERT end logs Log files"])
    #expect(Request.insert(id: "logs", title: "Logs", at: 0).lines == ["INSERT 0 logs Logs"])
    #expect(Request.move("logs", to: 3).lines == ["MOVE logs 3"])
    #expect(Request.rename("logs", to: "All logs").lines == ["RENAME logs All logs"])
    #expect(Request.insertItem("a b", in: "logs").lines == ["ITEM INSERT logs end a b"])
    #expect(Request.setItem(at: 1, to: "x", in: "logs").lines == ["ITEM SET logs 1 x"])
    #expect(Request.moveItem(from: 1, to: 0, in: "logs").lines == ["ITEM MOVE logs 1 0"])
    #expect(Request.deleteItem(at: 2, in: "logs").lines == ["ITEM DELETE logs 2"])
    #expect(Request.setMode(.exclusive).lines == ["MODE exclusive"])
    #expect(Request.reload(fresh: true).lines == ["RELOAD FRESH"])
    #expect(Request.history(last: 5).lines == ["HISTORY 5"])
    #expect(Request.history(after: 9).lines == ["HISTORY FROM 9"])
    let batch = Request.batch([.open("a"), .close("b")])
    #expect(batch.lines == ["BATCH", "OPEN a", "CLOSE b", "END"])
    #expect(batch.replyCount == 1)
  }

  @Test func argumentsThatWouldBeASecondRequestAreRefused() {
    #expect(Request.open("a b").problem != nil)
    #expect(Request.open("").problem != nil)
    #expect(Request.rename("a", to: "x\nOPEN ALL").problem != nil)
    #expect(Request.insertItem("x\rY", in: "a").problem != nil)
    #expect(Request.batch([.open("a"), .open("b c")]).problem != nil)
    #expect(Request.rename("a", to: "plain title").problem == nil)
    if case .invalidRequest(let message)? = Request.open("a b").problem {
      #expect(message.contains("one word"))
    } else {
      Issue.record("expected invalidRequest")
    }
  }

  /// `asReply`: the same lines and checks, and the reply as it came, ERR included, where the
  /// value would have thrown.
  @Test func asReplyIsTheWholeReplyErrIncluded() throws {
    let refused = try reply("ERR NOSECTION no section \"x\"")
    #expect(throws: ClientError.daemon(code: "NOSECTION", message: #"no section "x""#)) {
      try Request.open("x").value(from: [refused])
    }
    #expect(try Request.open("x").asReply.value(from: [refused]) == refused)
    let listed = try reply("item 0 0 one", "item 0 1 two", "OK 4")
    #expect(try Request.items("0").asReply.value(from: [listed]).items.map(\.text) == ["one", "two"])
    #expect(Request.open("x").asReply.lines == ["OPEN x"])
    #expect(Request.batch([.open("a")]).asReply.replyCount == 1)
    #expect(Request.open("a b").asReply.problem != nil)
    #expect(Request.history(last: -1).asReply.problem != nil)
  }

  @Test func changeIsTheActionsVerb() {
    #expect(Request.change(.open, "net").lines == ["OPEN net"])
    #expect(Request.change(.close, "2").lines == ["CLOSE 2"])
    #expect(Request.change(.toggle, "net").lines == ["TOGGLE net"])
    #expect(Request.change(.toggle, "a b").problem != nil)
  }

  @Test func repliesReadAsValues() throws {
    #expect(try Request.toggle("0").value(from: [reply("section 0 a open 3 A", "OK 4")]) == true)
    #expect(try Request.open("0").value(from: [reply("section 0 a open 3 A", "OK 4")]) == 4)
    #expect(try Request.mode.value(from: [reply("mode exclusive", "OK 2")]) == .exclusive)
    #expect(try Request.version.value(from: [reply("version 0.1.0 1", "OK")]).protocolVersion == "1")
    let listing = try Request.list.value(from: [
      reply("section 0 a closed 3 A", "section 1 b open 0 B C", "OK 7")
    ])
    #expect(listing.revision == 7)
    #expect(listing.sections.map(\.title) == ["A", "B C"])
    #expect(
      try Request.status.value(from: [reply("status pid 12", "status clients 3", "OK 7")])["clients"] == "3")
  }

  @Test func errorsCarryTheProtocolsCodeAndMessage() throws {
    let refused = try reply(#"ERR NOSECTION no section "x": there are 3 (0-2)"#)
    #expect(throws: ClientError.daemon(code: "NOSECTION", message: #"no section "x": there are 3 (0-2)"#)) {
      try Request.open("x").value(from: [refused])
    }
    #expect(throws: ClientError.malformedReply("OK without the revision of the change")) {
      try Request.open("x").value(from: [reply("OK")])
    }
  }

  /// A reply is held to the shape its verb's row gives: a data line of a kind that reply does
  /// not hold, or a plain `OK` where the list's revision belongs, is a daemon the library
  /// cannot read; a line of a keyword it does not know passes (a newer daemon's).
  @Test func aReplyOfAnotherShapeIsRefused() throws {
    #expect(throws: ClientError.malformedReply("a section line in the reply to ITEMS")) {
      try Request.items("0").value(from: [reply("section 0 a open 3 A", "OK 4")])
    }
    #expect(throws: ClientError.malformedReply("a mode line in the reply to TOGGLE")) {
      try Request.toggle("0").value(from: [reply("mode multi", "section 0 a open 3 A", "OK 4")])
    }
    #expect(throws: ClientError.malformedReply("OK without the list's revision after LIST")) {
      try Request.list.value(from: [reply("section 0 a closed 3 A", "OK")])
    }
    #expect(throws: ClientError.malformedReply("a history line in the reply to PING")) {
      try Request.ping.value(from: [reply("history 3 2026-12-04T07:00:00Z socket 1000 42 sectionctl opened 3 0 first", "OK")])
    }
    #expect(
      try Request.items("0").value(from: [reply("future 1 2", "item 0 0 one", "OK 4")]).map(\.text) == ["one"])
    #expect(try Request.ping.asReply.value(from: [reply("OK")]).status == .ok(revision: nil))
  }

  @Test func historyLinesCarryTheirEvent() throws {
    let entries = try Request.history(last: 2).value(from: [
      reply(
        "history 3 2026-12-04T07:00:00Z socket 1000 42 sectionctl opened 3 0 first",
        "history 4 2026-12-04T07:00:01Z bus 0 1 - mode 4 exclusive", "OK 4")
    ])
    #expect(entries.count == 2)
    #expect(entries[0].name == "sectionctl")
    #expect(entries[0].event == .opened(revision: 3, index: 0, id: "first"))
    #expect(entries[1].via == "bus")
    #expect(entries[1].event == .mode(revision: 4, mode: .exclusive))
    #expect(throws: ClientError.self) { try reply("history 3 t socket 0 1 x") }
  }

  /// A reply keeps none, one or many data lines (one without an array), and which it is does
  /// not show: the same lines read, compare and change alike.
  @Test func repliesKeepEveryDataLineWhateverTheirNumber() throws {
    let lines = (0..<3).map { "section \($0) s\($0) open 1 S\($0)" }
    for count in 0...3 {
      let read = try reply(Array(lines.prefix(count)) + ["OK 7"])
      let expected = (0..<count).map {
        DataLine.section(ListedSection(index: $0, id: "s\($0)", isOpen: true, itemCount: 1, title: "S\($0)"))
      }
      #expect(read.data == expected, "\(count) lines")
      #expect(read == Reply(data: expected, status: .ok(revision: 7)), "\(count) lines")
      #expect(read.sections.map(\.id) == expected.indices.map { "s\($0)" })
      var changed = read
      changed.data.append(.other("x"))
      #expect(changed.data == expected + [.other("x")] && changed != read)
      changed.data.removeLast()
      #expect(changed == read)
    }
  }

  @Test func clientNames() {
    #expect(ClientName.line("web:[::1]:8080") == nil)
    #expect(ClientName.line("web:127.0.0.1") == "CLIENT NAME web:127.0.0.1")
    #expect(ClientName.line("sectionctl-ui") == "CLIENT NAME sectionctl-ui")
    #expect(ClientName.line("") == nil)
    #expect(ClientName.line(String(repeating: "a", count: 65)) == nil)
    #expect(ClientName.line("a b") == nil)
  }
}
