import Testing

@testable import SectionCtl

@Suite struct PipeTests {
  @Test func parsesWithTheSocketOptions() throws {
    #expect(try ArgumentParser.parse(["pipe"]).command == .pipe)
    let readonly = try ArgumentParser.parse(["--readonly", "pipe"])
    #expect(readonly.command == .pipe && readonly.readonly)
    #expect(try ArgumentParser.parse(["pipe", "--socket", "/s"]).socket == "/s")
  }

  @Test func refusesArgumentsAndJSON() {
    #expect(throws: ClientError.self) { try ArgumentParser.parse(["pipe", "LIST"]) }
    #expect(throws: ClientError.self) { try ArgumentParser.parse(["--json", "pipe"]) }
  }

  private func filtered(_ chunks: [[UInt8]]) -> [UInt8] {
    var filter = TerminalFilter()
    return chunks.flatMap { filter.filter($0[...]) } + filter.finish()
  }

  @Test func terminalFilterKeepsTextTabsAndNewlines() {
    let text = Array("section 0 é\tÅ ✓ 😀\n".utf8)
    #expect(filtered([text]) == text)
  }

  @Test func terminalFilterReplacesC0DelAndC1() {
    let replacement = TerminalFilter.replacement
    #expect(filtered([[0x1B, 0x5B, 0x32, 0x4A]]) == replacement + [0x5B, 0x32, 0x4A])
    #expect(filtered([[0x41, 0x7F, 0x0D]]) == [0x41] + replacement + replacement)
    // U+009B (CSI), whole and split across two reads.
    #expect(filtered([[0xC2, 0x9B, 0x41]]) == replacement + [0x41])
    #expect(filtered([[0x41, 0xC2], [0x9B, 0x41]]) == [0x41] + replacement + [0x41])
    // U+00A0 and a lead byte left at the end are passed on.
    #expect(filtered([[0xC2], [0xA0]]) == [0xC2, 0xA0])
    #expect(filtered([[0x41, 0xC2]]) == [0x41, 0xC2])
  }
}
