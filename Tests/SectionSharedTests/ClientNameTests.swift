import Testing

@testable import SectionShared

/// The rule for a client's name, which the daemon checks `CLIENT NAME` with and the library
/// checks before sending: one word of a history line, never a control sequence.
@Suite struct ClientNameTests {
  @Test(arguments: [
    "a", "waybar", "web:fe80::1:8080", "user@host", "a.b_c-d", "--", String(repeating: "n", count: 64),
  ])
  func wordsOfTheRuleAreNames(_ name: String) {
    #expect(ClientName.isValid(name))
    #expect(ClientName.line(name) == "CLIENT NAME " + name)
  }

  @Test(arguments: [
    "", "-", "two words", "tab\there", "ctl\u{1b}[2J", "é", "a/b", String(repeating: "n", count: 65),
  ])
  func anythingElseIsRefused(_ name: String) {
    #expect(!ClientName.isValid(name))
    #expect(ClientName.line(name) == nil)
  }

  /// A handed-over name is held to the word rule alone: `-` passes it, so a daemon that took
  /// `-` before it was refused can still hand such a client over.
  @Test func aLoneDashIsAWordButNotAName() {
    #expect(ClientName.isWord(Array("-".utf8)))
    #expect(!ClientName.isValid(Array("-".utf8)))
  }

  /// A process's `comm` becomes a name: every other byte an underscore, cut at the longest.
  @Test func anyBytesBecomeAName() {
    #expect(ClientName.asName(Array("my app\u{7}".utf8)) == Array("my_app_".utf8))
    let long = ClientName.asName([UInt8](repeating: UInt8(ascii: "x"), count: 100))
    #expect(long.count == ClientName.maximumLength)
    #expect(ClientName.isValid(ClientName.asName(Array("a b".utf8))))
  }
}
