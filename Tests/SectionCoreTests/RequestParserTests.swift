import SectionGrammar
import Testing

@testable import SectionCore

@Suite struct RequestParserTests {
  func parse(_ text: String) -> Result<Request, ProtocolError>? { RequestParser.parse(bytes(text)) }

  func parse(_ raw: [UInt8]) -> Result<Request, ProtocolError>? { RequestParser.parse(ArraySlice(raw)) }

  func id(_ text: String) -> SectionRef { .id(bytes(text)) }

  /// The ERR line a request gets, without its LF.
  func errorLine(_ result: Result<Request, ProtocolError>?) -> String? {
    guard case .failure(let error)? = result else { return nil }
    return String(decoding: error.line.dropLast(), as: UTF8.self)
  }

  /// The service answers these lines before parsing: each must be one `parse` reads as PING.
  @Test func pingShortcutMatchesOnlyPing() {
    for line in ["PING", "ping", "PiNg", "pING"] {
      #expect(RequestParser.isPing(bytes(line)), "\(line)")
      #expect(parse(line) == .success(.ping), "\(line)")
    }
    for line in ["PING ", " PING", "PINGS", "PIN", "PONG", "PING x", "P\u{0}NG", "PIN\u{7}", "", "ping\r"] {
      #expect(!RequestParser.isPing(bytes(line)), "\(line)")
    }
  }

  @Test func everyVerb() {
    #expect(parse("PING") == .success(.ping))
    #expect(parse("VERSION") == .success(.version))
    #expect(parse("LIST") == .success(.list))
    #expect(parse("ITEMS 2") == .success(.items(.index(2))))
    #expect(parse("ITEMS fruit") == .success(.items(id("fruit"))))
    #expect(parse("VIEW") == .success(.view))
    #expect(parse("OPEN 0") == .success(.open(.section(.index(0)))))
    #expect(parse("OPEN fruit") == .success(.open(.section(id("fruit")))))
    #expect(parse("OPEN ALL") == .success(.open(.all)))
    #expect(parse("CLOSE 1") == .success(.close(.section(.index(1)))))
    #expect(parse("CLOSE veg") == .success(.close(.section(id("veg")))))
    #expect(parse("CLOSE ALL") == .success(.close(.all)))
    #expect(parse("TOGGLE 3") == .success(.toggle(.index(3))))
    #expect(parse("TOGGLE x-y") == .success(.toggle(id("x-y"))))
    #expect(parse("MODE") == .success(.mode(nil)))
    #expect(parse("MODE exclusive") == .success(.mode(.exclusive)))
    #expect(parse("MODE multi") == .success(.mode(.multi)))
    #expect(parse("SUBSCRIBE") == .success(.subscribe))
    #expect(parse("UNSUBSCRIBE") == .success(.unsubscribe))
    #expect(parse("HELP") == .success(.help))
    #expect(parse("QUIT") == .success(.quit))
    #expect(parse("RELOAD") == .success(.reload))
  }

  @Test func everyVerbIsFoundByItsNameInAnyCase() {
    for verb in Verb.allCases {
      #expect(Verb(ArraySlice(verb.name.utf8)) == verb)
      #expect(Verb(ArraySlice(verb.name.lowercased().utf8)) == verb)
    }
    #expect(Verb(ArraySlice("PINGS".utf8)) == nil)
    #expect(Verb(ArraySlice("PIN".utf8)) == nil)
  }

  @Test func caseInsensitiveVerbsAndKeywords() {
    #expect(parse("ping") == .success(.ping))
    #expect(parse("PiNg") == .success(.ping))
    #expect(parse("toggle 1") == .success(.toggle(.index(1))))
    #expect(parse("open all") == .success(.open(.all)))
    #expect(parse("Close All") == .success(.close(.all)))
    #expect(parse("mode EXCLUSIVE") == .success(.mode(.exclusive)))
    #expect(parse("Mode Multi") == .success(.mode(.multi)))
    #expect(parse("reload") == .success(.reload))
    // Ids keep their case: only the keyword ALL is special, and only for OPEN and CLOSE.
    #expect(parse("TOGGLE Fruit") == .success(.toggle(id("Fruit"))))
    #expect(parse("TOGGLE all") == .success(.toggle(id("all"))))
    #expect(parse("ITEMS ALL") == .success(.items(id("ALL"))))
    #expect(parse("OPEN alls") == .success(.open(.section(id("alls")))))
  }

  @Test func spacesAndTabsSeparate() {
    #expect(parse("  PING  ") == .success(.ping))
    #expect(parse("\tPING\t") == .success(.ping))
    #expect(parse("OPEN \t 2") == .success(.open(.section(.index(2)))))
    #expect(parse("\t MODE\t\texclusive \t") == .success(.mode(.exclusive)))
  }

  @Test func blankLinesGetNoReply() {
    #expect(parse("") == nil)
    #expect(parse(" ") == nil)
    #expect(parse("\t \t") == nil)
  }

  @Test func references() {
    #expect(RequestParser.sectionRef(bytes("0")) == .index(0))
    #expect(RequestParser.sectionRef(bytes("007")) == .index(7))
    #expect(RequestParser.sectionRef(bytes("9223372036854775807")) == .index(Int.max))
    #expect(RequestParser.sectionRef(bytes("9223372036854775808")) == .index(Int.max))
    #expect(RequestParser.sectionRef(bytes("99999999999999999999999")) == .index(Int.max))
    #expect(RequestParser.sectionRef(bytes("-1")) == id("-1"))
    #expect(RequestParser.sectionRef(bytes("+1")) == id("+1"))
    #expect(RequestParser.sectionRef(bytes("1a")) == id("1a"))
    #expect(RequestParser.sectionRef(bytes("é")) == id("é"))
  }

  @Test func slicesOfALargerBufferWork() {
    let buffer = Array("xxTOGGLE abc\nPING".utf8)
    #expect(RequestParser.parse(buffer[2..<12]) == .success(.toggle(.id(ArraySlice("abc".utf8)))))
    #expect(RequestParser.parse(buffer[13...]) == .success(.ping))
  }

  @Test func unknownCommands() {
    #expect(errorLine(parse("FOO")) == "ERR UNKNOWN unknown command \"FOO\"; HELP lists the commands")
    #expect(errorLine(parse("  opn 1")) == "ERR UNKNOWN unknown command \"opn\"; HELP lists the commands")
    #expect(
      errorLine(parse("PINGPING")) == "ERR UNKNOWN unknown command \"PINGPING\"; HELP lists the commands")
    #expect(errorLine(parse("PIN")) == "ERR UNKNOWN unknown command \"PIN\"; HELP lists the commands")
    #expect(errorLine(parse("ÖPEN 1")) == "ERR UNKNOWN unknown command \"ÖPEN\"; HELP lists the commands")
  }

  @Test func missingArguments() {
    #expect(errorLine(parse("ITEMS")) == "ERR SYNTAX ITEMS needs a section: usage: ITEMS <index|id>")
    #expect(errorLine(parse("TOGGLE")) == "ERR SYNTAX TOGGLE needs a section: usage: TOGGLE <index|id>")
    #expect(errorLine(parse("open ")) == "ERR SYNTAX OPEN needs a section: usage: OPEN <index|id|ALL>")
    #expect(errorLine(parse("CLOSE\t")) == "ERR SYNTAX CLOSE needs a section: usage: CLOSE <index|id|ALL>")
  }

  @Test func extraArguments() {
    #expect(errorLine(parse("PING now")) == "ERR SYNTAX unexpected \"now\": PING takes no arguments")
    #expect(errorLine(parse("list 1")) == "ERR SYNTAX unexpected \"1\": LIST takes no arguments")
    #expect(errorLine(parse("VERSION x")) == "ERR SYNTAX unexpected \"x\": VERSION takes no arguments")
    #expect(errorLine(parse("VIEW x")) == "ERR SYNTAX unexpected \"x\": VIEW takes no arguments")
    #expect(errorLine(parse("SUBSCRIBE x")) == "ERR SYNTAX unexpected \"x\": usage: SUBSCRIBE [FROM <rev>]")
    #expect(
      errorLine(parse("UNSUBSCRIBE x")) == "ERR SYNTAX unexpected \"x\": UNSUBSCRIBE takes no arguments")
    #expect(errorLine(parse("HELP open")) == "ERR SYNTAX unexpected \"open\": HELP takes no arguments")
    #expect(errorLine(parse("QUIT now")) == "ERR SYNTAX unexpected \"now\": QUIT takes no arguments")
    #expect(errorLine(parse("RELOAD x")) == "ERR SYNTAX unexpected \"x\": RELOAD takes FRESH or nothing")
    #expect(errorLine(parse("OPEN 1 2")) == "ERR SYNTAX unexpected \"2\": usage: OPEN <index|id|ALL>")
    #expect(errorLine(parse("CLOSE ALL now")) == "ERR SYNTAX unexpected \"now\": usage: CLOSE <index|id|ALL>")
    #expect(errorLine(parse("TOGGLE a b")) == "ERR SYNTAX unexpected \"b\": usage: TOGGLE <index|id>")
    #expect(errorLine(parse("ITEMS 1 2 3")) == "ERR SYNTAX unexpected \"2\": usage: ITEMS <index|id>")
    #expect(
      errorLine(parse("MODE multi please"))
        == "ERR SYNTAX unexpected \"please\": usage: MODE [exclusive|multi]")
  }

  /// The first unexpected word is the one to name: in `PING a b` that is "a", not "b".
  @Test func extraArgumentsNameTheFirstExtraWord() {
    #expect(errorLine(parse("PING a b")) == "ERR SYNTAX unexpected \"a\": PING takes no arguments")
  }

  @Test func malformedArguments() {
    #expect(
      errorLine(parse("MODE accordion")) == "ERR SYNTAX unknown mode \"accordion\": use exclusive or multi")
    #expect(
      errorLine(parse("MODE multiple")) == "ERR SYNTAX unknown mode \"multiple\": use exclusive or multi")
    #expect(errorLine(parse("MODE 1")) == "ERR SYNTAX unknown mode \"1\": use exclusive or multi")
  }

  /// What the history's requests and CLIENT refuse, each saying what is missing or wrong in
  /// the words of its verb's row.
  @Test func historyAndClientRefusalsNameWhatTheyNeed() {
    let historyUsage = "usage: HISTORY [n] | HISTORY FROM <rev>"
    #expect(errorLine(parse("HISTORY FROM")) == "ERR SYNTAX HISTORY FROM needs a revision: \(historyUsage)")
    #expect(errorLine(parse("HISTORY FROM x")) == "ERR SYNTAX HISTORY FROM needs a revision: \(historyUsage)")
    #expect(errorLine(parse("HISTORY x")) == "ERR SYNTAX unexpected \"x\": \(historyUsage)")
    #expect(errorLine(parse("HISTORY FROM 1 2")) == "ERR SYNTAX unexpected \"2\": \(historyUsage)")
    #expect(
      errorLine(parse("SUBSCRIBE FROM"))
        == "ERR SYNTAX SUBSCRIBE FROM needs a revision: usage: SUBSCRIBE [FROM <rev>]")
    #expect(errorLine(parse("CLIENT")) == "ERR SYNTAX CLIENT needs NAME: usage: CLIENT NAME <name>")
    #expect(errorLine(parse("CLIENT kiosk")) == "ERR SYNTAX unexpected \"kiosk\": usage: CLIENT NAME <name>")
    #expect(
      errorLine(parse("CLIENT NAME")) == "ERR SYNTAX CLIENT NAME needs a name: usage: CLIENT NAME <name>")
    #expect(errorLine(parse("CLIENT NAME a/b")) == "ERR SYNTAX \(ClientName.rule): usage: CLIENT NAME <name>")
    #expect(errorLine(parse("RELOAD FRESH now")) == "ERR SYNTAX unexpected \"now\": usage: RELOAD [FRESH]")
  }

  /// The keywords that pick a form are read in any case, and the form they pick is read whole.
  @Test func keywordsPickTheirForm() {
    #expect(parse("history from 7") == .success(.historyFrom(7)))
    #expect(parse("History 3") == .success(.history(last: 3)))
    #expect(parse("HISTORY") == .success(.history(last: Grammar.historyDefault)))
    #expect(parse("subscribe From 0") == .success(.subscribeFrom(0)))
    #expect(parse("reload fresh") == .success(.reloadFresh))
    #expect(parse("client name kiosk") == .success(.clientName(ArraySlice("kiosk".utf8))))
    #expect(
      parse("item set a 2 new text ") == .success(.itemSet(id("a"), 2, text: ArraySlice("new text".utf8))))
  }

  @Test func nulBytes() {
    #expect(errorLine(parse([0])) == "ERR SYNTAX NUL byte in request")
    #expect(errorLine(parse(Array("PING".utf8) + [0])) == "ERR SYNTAX NUL byte in request")
    #expect(errorLine(parse(Array("OPEN ".utf8) + [0, 0x31])) == "ERR SYNTAX NUL byte in request")
  }

  @Test(arguments: [UInt8(0x01), 0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B, 0x1F, 0x7F])
  func controlCharacters(byte: UInt8) {
    let hex = String(byte, radix: 16)
    #expect(
      errorLine(parse(Array("PING".utf8) + [byte])) == "ERR SYNTAX control character 0x\(hex) in request")
    #expect(errorLine(parse([byte])) == "ERR SYNTAX control character 0x\(hex) in request")
  }

  @Test func controlCharacterBeforeAnUnknownVerbIsStillSyntax() {
    #expect(errorLine(parse(Array("BOGUS\r".utf8))) == "ERR SYNTAX control character 0xd in request")
  }

  @Test(arguments: [
    [UInt8(0xFF)], [0x80], [0xC3], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
    [0xF4, 0x90, 0x80, 0x80],
  ])
  func invalidUTF8(sequence: [UInt8]) {
    #expect(errorLine(parse(Array("TOGGLE ".utf8) + sequence)) == "ERR SYNTAX request is not valid UTF-8")
  }

  @Test func validUTF8IsFine() {
    #expect(parse("TOGGLE café") == .success(.toggle(id("café"))))
    #expect(parse("TOGGLE 😀") == .success(.toggle(id("😀"))))
  }

  @Test func whatChangesState() {
    let changing: [Request] = [
      .open(.all), .open(.section(.index(0))), .close(.all), .close(.section(.index(0))), .toggle(.index(0)),
      .mode(.multi), .mode(.exclusive), .reload,
    ]
    let reading: [Request] = [
      .ping, .version, .list, .items(.index(0)), .view, .mode(nil), .subscribe, .unsubscribe, .help, .quit,
    ]
    #expect(changing.map(\.changesState) == Array(repeating: true, count: changing.count))
    #expect(reading.map(\.changesState) == Array(repeating: false, count: reading.count))
  }
}
