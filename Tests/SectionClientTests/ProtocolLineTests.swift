import Testing

@testable import SectionClient

@Suite struct ProtocolLineTests {
  private func parse(_ line: String) throws -> ProtocolLine { try ProtocolLine.parse(line) }

  private func isMalformed(_ line: String) -> Bool {
    do {
      _ = try ProtocolLine.parse(line)
      return false
    } catch {
      return error == .malformedReply(line)
    }
  }

  @Test func statusLines() throws {
    #expect(try parse("OK") == .status(.ok(revision: nil)))
    #expect(try parse("OK 42") == .status(.ok(revision: 42)))
    #expect(try parse("OK 9223372036854775807") == .status(.ok(revision: UInt64(Int64.max))))
    #expect(
      try parse("ERR NOSECTION no section \"7\": there are 3 (0-2)")
        == .status(.error(code: "NOSECTION", message: "no section \"7\": there are 3 (0-2)")))
    #expect(try parse("ERR BUSY") == .status(.error(code: "BUSY", message: "")))
  }

  /// Every number from the wire is checked here, once: a revision past 2^63-1 (which a program
  /// handing it on as Int64 would trap on), an `ERR GONE` whose oldest revision is 0 (which
  /// `log -f` took one from) or past 2^63, a uid that is not one, are a broken line, not a value.
  @Test func revisionsAndOldestKeptAreInRange() throws {
    for bad in [
      "OK 9223372036854775808", "OK 18446744073709551615", "!opened 18446744073709551615 0 a",
      "!mode 9223372036854775808 multi", "state 9223372036854775808 multi -",
      "history 18446744073709551615 t socket - - - reload 1", "history 1 t socket x - - reload 1",
      "history 1 t socket 1 99999999999 x reload 1", "ERR GONE 0 older", "ERR GONE", "ERR GONE x",
      "ERR GONE 9223372036854775809 too new", "ERR GONE 18446744073709551615",
    ] {
      #expect(isMalformed(bad), "\(bad)")
    }
    let gone = Reply(status: try #require(try status("ERR GONE 9223372036854775808 nothing kept")))
    #expect(gone.oldestKept == 9_223_372_036_854_775_808)
    #expect(Reply(status: try #require(try status("ERR GONE 5 older"))).oldestKept == 5)
    #expect(Reply(status: .error(code: "GONE", message: "0 forged")).oldestKept == nil)
    #expect(Reply(status: .error(code: "NOSECTION", message: "5")).oldestKept == nil)
  }

  private func status(_ line: String) throws -> Reply.Status? {
    guard case .status(let status) = try parse(line) else { return nil }
    return status
  }

  /// Numbers of as many digits as always fit are read without overflow checks: each side of
  /// that bound, and of each type's largest value.
  @Test func numbersFitTheirTypeOrAreRefused() {
    func number<N: FixedWidthInteger>(_ text: String, as type: N.Type) -> N? {
      Array(text.utf8).withUnsafeBufferPointer { Words.number($0[...]) }
    }
    #expect(number("9999999999999999999", as: UInt64.self) == 9_999_999_999_999_999_999)
    #expect(number("18446744073709551615", as: UInt64.self) == UInt64.max)
    #expect(number("18446744073709551616", as: UInt64.self) == nil)
    #expect(number("999999999999999999", as: Int.self) == 999_999_999_999_999_999)
    #expect(number("9223372036854775807", as: Int.self) == Int.max)
    #expect(number("9223372036854775808", as: Int.self) == nil)
    #expect(number("99", as: Int8.self) == 99 && number("127", as: Int8.self) == Int8.max)
    #expect(number("128", as: Int8.self) == nil)
    #expect(number("255", as: UInt8.self) == UInt8.max && number("256", as: UInt8.self) == nil)
    #expect(number("007", as: Int.self) == 7)
    #expect(number("12a", as: Int.self) == nil && number("", as: Int.self) == nil)
  }

  @Test func sectionLineKeepsSpacesInTheTitle() throws {
    #expect(
      try parse("section 2 fruit-and-veg open 12 Fruit  and veg")
        == .data(
          .section(
            ListedSection(index: 2, id: "fruit-and-veg", isOpen: true, itemCount: 12, title: "Fruit  and veg")
          )))
    #expect(
      try parse("section 0 first closed 10 First")
        == .data(.section(ListedSection(index: 0, id: "first", isOpen: false, itemCount: 10, title: "First")))
    )
  }

  @Test func itemLineKeepsSpacesInTheText() throws {
    #expect(
      try parse("item 1 3 a pear, ripe")
        == .data(.item(ListedItem(sectionIndex: 1, position: 3, text: "a pear, ripe"))))
  }

  @Test func otherDataLines() throws {
    #expect(
      try parse("state 7 exclusive fruit")
        == .data(.state(StateSnapshot(revision: 7, mode: .exclusive, openIDs: ["fruit"]))))
    #expect(
      try parse("state 0 multi -") == .data(.state(StateSnapshot(revision: 0, mode: .multi, openIDs: []))))
    #expect(
      try parse("state 3 multi a,b,c")
        == .data(.state(StateSnapshot(revision: 3, mode: .multi, openIDs: ["a", "b", "c"]))))
    #expect(try parse("mode multi") == .data(.mode(.multi)))
    #expect(try parse("version 0.1.0 1") == .data(.version(daemon: "0.1.0", protocolVersion: "1")))
    #expect(
      try parse("help PING - check that the daemon answers")
        == .data(.help("PING - check that the daemon answers")))
    #expect(try parse("future thing") == .data(.other("future thing")))
  }

  @Test func events() throws {
    #expect(try parse("!opened 5 1 second") == .event(.opened(revision: 5, index: 1, id: "second")))
    #expect(try parse("!closed 6 0 first") == .event(.closed(revision: 6, index: 0, id: "first")))
    #expect(try parse("!mode 7 exclusive") == .event(.mode(revision: 7, mode: .exclusive)))
    #expect(
      try parse("!state 9 multi a,b")
        == .event(.state(StateSnapshot(revision: 9, mode: .multi, openIDs: ["a", "b"]))))
    #expect(
      try parse("!state 9 multi -") == .event(.state(StateSnapshot(revision: 9, mode: .multi, openIDs: []))))
    #expect(try parse("!reload 10") == .event(.reload(revision: 10)))
    #expect(try parse("!bye shutdown") == .event(.bye(reason: "shutdown")))
    #expect(try parse("!bye") == .event(.bye(reason: "")))
    #expect(try parse("!frobbed 11 x") == .event(.other("frobbed 11 x")))
    #expect(
      try parse("!inserted 12 0 news") == .event(.edited(.inserted, revision: 12, index: 0, id: "news")))
    #expect(try parse("!deleted 13 2 b") == .event(.edited(.deleted, revision: 13, index: 2, id: "b")))
    #expect(try parse("!renamed 14 1 a") == .event(.edited(.renamed, revision: 14, index: 1, id: "a")))
    #expect(try parse("!moved 15 1 3 a") == .event(.moved(revision: 15, from: 1, to: 3, id: "a")))
    #expect(try parse("!items 16 3 a 7") == .event(.items(revision: 16, index: 3, id: "a", count: 7)))
    for line in ["!inserted 12 0", "!moved 15 1 a", "!items 16 3 a", "!items x 3 a 7", "!deleted 1 2 b c"] {
      #expect(isMalformed(line), "\(line)")
    }
  }

  @Test func onlyChangesCount() throws {
    #expect(Event.opened(revision: 1, index: 0, id: "a").isChange)
    #expect(Event.reload(revision: 2).isChange)
    #expect(!Event.bye(reason: "shutdown").isChange)
  }

  @Test func malformedLines() {
    for line in [
      "OK x", "OK 1 2", "OK -1", "ERR", "ERR ", "section 0 first ajar 10 First", "section 0 first open 10",
      "section x first open 10 First", "section 0  open 10 First", "item 1 x text", "item 1 2",
      "state 1 single -",
      "state 1 multi a,,b", "state 1 multi", "mode sideways", "version 1", "!opened 1 2", "!opened x 1 a",
      "!mode 1 wide", "!reload", "!state 1 multi", "Hello", "", " section",
    ] {
      #expect(isMalformed(line), "\(line)")
    }
  }

  @Test func statusLineClassification() {
    #expect(ProtocolLine.isStatus("OK"))
    #expect(ProtocolLine.isStatus("OK 3"))
    #expect(ProtocolLine.isStatus("ERR SYNTAX x"))
    #expect(!ProtocolLine.isStatus("OKAY"))
    #expect(!ProtocolLine.isStatus("section 0 a open 1 A"))
    #expect(!ProtocolLine.isStatus("!bye shutdown"))
  }

  @Test func replyAccessors() throws {
    let reply = Reply(
      data: [
        .section(ListedSection(index: 0, id: "a", isOpen: true, itemCount: 1, title: "A")),
        .item(ListedItem(sectionIndex: 0, position: 0, text: "x")),
      ], status: .ok(revision: 4))
    #expect(reply.sections.map(\.id) == ["a"])
    #expect(reply.items.map(\.text) == ["x"])
    #expect(reply.revision == 4)
    #expect(reply.state == nil)
    #expect(reply.mode == nil)
    let subscribed = Reply(
      data: [.state(StateSnapshot(revision: 2, mode: .multi, openIDs: []))], status: .ok(revision: 2))
    #expect(subscribed.state == StateSnapshot(revision: 2, mode: .multi, openIDs: []))
    #expect(Reply(data: [.mode(.exclusive)], status: .ok(revision: 1)).mode == .exclusive)
    #expect(try reply.succeeded() == reply)
    let refused = Reply(status: .error(code: "READONLY", message: "read-only socket"))
    #expect(refused.revision == nil)
    #expect(throws: ClientError.daemon(code: "READONLY", message: "read-only socket")) {
      try refused.succeeded()
    }
  }
}
