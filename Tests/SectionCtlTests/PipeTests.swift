import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct PipeTests {
  @Test func parsesWithTheSocketOptions() throws {
    #expect(try ArgumentParser.parse(["pipe"]).command == .pipe)
    let readonly = try ArgumentParser.parse(["--readonly", "pipe"])
    #expect(readonly.command == .pipe && readonly.readonly)
    #expect(try ArgumentParser.parse(["pipe", "--socket", "/s"]).socket == "/s")
  }

  @Test func refusesArgumentsAndJSON() {
    #expect(throws: CommandLineError.self) { try ArgumentParser.parse(["pipe", "LIST"]) }
    #expect(throws: CommandLineError.self) { try ArgumentParser.parse(["--json", "pipe"]) }
  }

  private func shown(_ chunks: [[UInt8]]) -> String {
    var lines = TerminalLines()
    return String(decoding: chunks.flatMap { lines.filter($0[...]) } + lines.finish(), as: UTF8.self)
  }

  @Test func terminalLinesKeepTextAndNewlines() {
    #expect(shown([Array("section 0 é Å ✓ 😀\nOK 3\n".utf8)]) == "section 0 é Å ✓ 😀\nOK 3\n")
  }

  @Test func terminalLinesEscapeWhatWouldActOnTheTerminal() {
    // CSI 2J (clear the screen), DEL and CR, as every other command shows them.
    #expect(shown([[0x1B, 0x5B, 0x32, 0x4A, 0x0A]]) == "\\x1b[2J\n")
    #expect(shown([[0x41, 0x7F, 0x0D, 0x0A]]) == "A\\x7f\\x0d\n")
    // U+009B (CSI) split across two reads, a right-to-left override, invalid UTF-8.
    #expect(shown([[0x41, 0xC2], [0x9B, 0x41, 0x0A]]) == "A\\x9bA\n")
    #expect(shown([Array("a\u{202E}b\n".utf8)]) == "a\\u202eb\n")
    #expect(shown([[0x41, 0xFF, 0x0A]]) == "A\\xff\n")
    // A last line without its LF is shown when the input ends.
    #expect(shown([[0x41, 0xC2, 0xA0]]) == "A\u{A0}")
  }

  @Test func terminalLinesPassOnALineThatNeverEnds() {
    var lines = TerminalLines()
    // 70,000 two-byte characters, cut so that no character is split.
    let long = Array(String(repeating: "é", count: 35_000).utf8)
    let first = lines.filter(long[...])
    #expect(first.count >= TerminalLines.heldLimit - 1 && String(validating: first, as: UTF8.self) != nil)
    let rest = lines.finish()
    #expect(first.count + rest.count == long.count)
  }
}
