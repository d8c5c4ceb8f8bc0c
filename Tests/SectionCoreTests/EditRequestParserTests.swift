import Testing

@testable import SectionCore

@Suite struct EditRequestParserTests {
  func parse(_ text: String) -> Result<Request, ProtocolError>? { RequestParser.parse(bytes(text)) }

  func errorLine(_ text: String) -> String? {
    guard case .failure(let error)? = parse(text) else { return nil }
    return String(decoding: error.line.dropLast(), as: UTF8.self)
  }

  @Test func everyEdit() {
    #expect(
      parse("INSERT 0 news Latest  news ")
        == .success(.insert(.at(0), id: bytes("news"), title: bytes("Latest  news"))))
    #expect(parse("insert END n T") == .success(.insert(.end, id: bytes("n"), title: bytes("T"))))
    #expect(parse("DELETE 3") == .success(.delete(.index(3))))
    #expect(parse("DELETE news") == .success(.delete(.id(bytes("news")))))
    #expect(parse("MOVE news 0") == .success(.move(.id(bytes("news")), to: 0)))
    #expect(parse("RENAME 1 A\ttitle") == .success(.rename(.index(1), title: bytes("A\ttitle"))))
    #expect(
      parse("ITEM INSERT news end hello world")
        == .success(.itemInsert(.id(bytes("news")), .end, text: bytes("hello world"))))
    #expect(parse("item insert 0 2 x") == .success(.itemInsert(.index(0), .at(2), text: bytes("x"))))
    #expect(parse("ITEM DELETE news 4") == .success(.itemDelete(.id(bytes("news")), 4)))
    #expect(parse("ITEM MOVE 1 4 0") == .success(.itemMove(.index(1), from: 4, to: 0)))
    #expect(parse("ITEM SET 1 0 new text") == .success(.itemSet(.index(1), 0, text: bytes("new text"))))
    #expect(parse("BATCH") == .success(.batch))
    #expect(parse("end") == .success(.end))
  }

  @Test func editsChangeStateAndMayBeBatched() throws {
    for line in [
      "INSERT 0 a A", "DELETE a", "MOVE a 1", "RENAME a B", "ITEM SET a 0 x", "OPEN a", "MODE multi",
    ] {
      let request = try #require(try parse(line)?.get())
      #expect(request.changesState, "\(line)")
      #expect(request.isBatchable, "\(line)")
      #expect(!request.readsState, "\(line)")
    }
    for line in ["LIST", "RELOAD", "BATCH", "END", "MODE", "PING", "SUBSCRIBE"] {
      #expect(try parse(line)?.get().isBatchable == false, "\(line)")
    }
    #expect(try parse("BATCH")?.get().changesState == true)
  }

  @Test func malformedEditsSayWhatIsMissing() {
    #expect(errorLine("INSERT") == "ERR SYNTAX missing index: usage: INSERT <index|end> <id> <title>")
    #expect(errorLine("INSERT 0 news") == "ERR SYNTAX missing title: usage: INSERT <index|end> <id> <title>")
    #expect(
      errorLine("INSERT first news T")
        == "ERR SYNTAX index \"first\" is not a number or end: usage: INSERT <index|end> <id> <title>")
    #expect(errorLine("DELETE") == "ERR SYNTAX missing section: usage: DELETE <index|id>")
    #expect(errorLine("DELETE a b") == "ERR SYNTAX unexpected \"b\": usage: DELETE <index|id>")
    #expect(errorLine("MOVE a") == "ERR SYNTAX missing index: usage: MOVE <index|id> <index>")
    #expect(
      errorLine("MOVE a -1") == "ERR SYNTAX index \"-1\" is not a number: usage: MOVE <index|id> <index>")
    #expect(errorLine("RENAME a") == "ERR SYNTAX missing title: usage: RENAME <index|id> <title>")
    #expect(
      errorLine("ITEM")?.hasPrefix(
        "ERR SYNTAX missing action (INSERT, DELETE, MOVE or SET): usage: ITEM INSERT") == true)
    #expect(errorLine("ITEM FROB a 1")?.hasPrefix("ERR SYNTAX unknown ITEM action \"FROB\"") == true)
    #expect(errorLine("ITEM FROB")?.hasPrefix("ERR SYNTAX unknown ITEM action \"FROB\"") == true)
    #expect(errorLine("ITEM SET")?.hasPrefix("ERR SYNTAX missing section") == true)
    #expect(
      errorLine("ITEM MOVE a 1 x")?.hasPrefix("ERR SYNTAX position \"x\" is not a number: usage: ITEM")
        == true)
    #expect(
      errorLine("ITEM INSERT a first t")?.hasPrefix(
        "ERR SYNTAX position \"first\" is not a number or end: usage: ITEM") == true)
    #expect(errorLine("ITEM SET a 1")?.hasPrefix("ERR SYNTAX missing text") == true)
    #expect(errorLine("ITEM MOVE a 1 2 3")?.hasPrefix("ERR SYNTAX unexpected \"3\"") == true)
    #expect(errorLine("BATCH now") == "ERR SYNTAX unexpected \"now\": BATCH takes no arguments")
  }

  @Test func isEndAcceptsOnlyTheWordAlone() {
    #expect(RequestParser.isEnd(bytes("END")))
    #expect(RequestParser.isEnd(bytes(" end\t")))
    #expect(!RequestParser.isEnd(bytes("END now")))
    #expect(!RequestParser.isEnd(bytes("ENDS")))
  }
}
