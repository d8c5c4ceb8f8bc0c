import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct InputDecoderTests {
  private func keys(_ text: String) -> [Key] {
    var decoder = InputDecoder()
    return decoder.feed(Array(text.utf8))
  }

  @Test func lettersControlKeysAndUTF8() {
    #expect(keys("jk q") == [.character("j"), .character("k"), .character(" "), .character("q")])
    #expect(keys("\r\n\u{3}") == [.enter, .enter, .interrupt])
    #expect(keys("é日") == [.character("é"), .character("日")])
  }

  @Test func cursorKeysInBothForms() {
    #expect(keys("\u{1B}[A\u{1B}[B\u{1B}OA\u{1B}OB") == [.up, .down, .up, .down])
    #expect(
      keys("\u{1B}[5~\u{1B}[6~\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[4~") == [
        .pageUp, .pageDown, .home, .end, .home, .end,
      ])
  }

  @Test func theKeysOfThePromptLine() {
    #expect(keys("\u{1B}[D\u{1B}[C\u{1B}OD\u{1B}[3~") == [.left, .right, .left, .delete])
    #expect(
      keys("\u{1}\u{5}\u{15}\u{17}\u{b}") == [
        .control("A"), .control("E"), .control("U"), .control("W"), .control("K"),
      ])
    #expect(keys("\u{8}\u{3}\r") == [.backspace, .interrupt, .enter])
  }

  @Test func unknownSequencesAreSkippedWhole() {
    #expect(keys("\u{1B}[2~j\u{1B}[1;5Pq") == [.character("j"), .character("q")])
  }

  @Test func sgrMouseReportsCountFromZero() {
    #expect(keys("\u{1B}[<0;5;3M") == [.mouse(.press(button: 0), row: 2, column: 4)])
    #expect(keys("\u{1B}[<0;5;3m") == [.mouse(.release, row: 2, column: 4)])
    #expect(
      keys("\u{1B}[<64;1;1M\u{1B}[<65;1;1M") == [
        .mouse(.wheelUp, row: 0, column: 0), .mouse(.wheelDown, row: 0, column: 0),
      ])
    // Shift, Alt and Ctrl bits do not change which button it was.
    #expect(keys("\u{1B}[<16;2;2M") == [.mouse(.press(button: 0), row: 1, column: 1)])
  }

  @Test func aSequenceSplitAcrossReadsWaitsForItsEnd() {
    var decoder = InputDecoder()
    #expect(decoder.feed(Array("\u{1B}[<0;1".utf8)) == [])
    #expect(decoder.isWaiting)
    #expect(decoder.feed(Array("2;7M".utf8)) == [.mouse(.press(button: 0), row: 6, column: 11)])
    #expect(!decoder.isWaiting)
    #expect(decoder.feed([0xE6, 0x97]) == [])
    #expect(decoder.feed([0xA5]) == [.character("日")])
  }

  @Test func aLoneEscapeIsTheEscapeKeyOnlyOnceNothingFollows() {
    var decoder = InputDecoder()
    #expect(decoder.feed([0x1B]) == [])
    #expect(decoder.isWaiting)
    #expect(decoder.flush() == [.escape])
    #expect(!decoder.isWaiting)
    // Alt+q arrives as ESC q: not a quit.
    #expect(decoder.feed(Array("\u{1B}qj".utf8)) == [.character("j")])
    #expect(decoder.feed([0x1B, 0x1B]) == [.escape])
    #expect(decoder.flush() == [.escape])
  }

  @Test func invalidUTF8IsSkipped() {
    var decoder = InputDecoder()
    #expect(decoder.feed([0xFF, 0x6A]) == [.character("j")])
    #expect(decoder.feed([0xC3, 0x28, 0x6A]) == [.character("("), .character("j")])
  }

  @Test func keyMap() {
    #expect(UIAction(.character("j")) == .move(rows: 1))
    #expect(UIAction(.up) == .move(rows: -1))
    #expect(UIAction(.character(" ")) == .toggle)
    #expect(UIAction(.enter) == .toggle)
    #expect(UIAction(.character("O")) == .openAll)
    #expect(UIAction(.character("C")) == .closeAll)
    #expect(UIAction(.escape) == .quit)
    #expect(UIAction(.interrupt) == .quit)
    #expect(UIAction(.mouse(.press(button: 0), row: 4, column: 9)) == .click(line: 4))
    #expect(UIAction(.mouse(.press(button: 2), row: 4, column: 9)) == nil)
    #expect(UIAction(.mouse(.wheelDown, row: 0, column: 0)) == .scroll(UIAction.wheelRows))
    #expect(UIAction(.character("x")) == nil)
  }
}
