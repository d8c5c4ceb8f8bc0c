import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct ScreenRendererTests {
  init() { Fixtures.useUTF8Locale() }

  private func lines(_ texts: [String]) -> [ScreenLine] {
    texts.map { ScreenLine([.init(text: $0)]) }
  }

  @Test func theFirstFrameClearsAndDrawsEveryRow() {
    var renderer = ScreenRenderer(color: false)
    let frame = renderer.frame(lines(["a", "b"]), columns: 10)
    #expect(frame.hasPrefix("\u{1B}[H\u{1B}[2J"))
    #expect(frame.contains("\u{1B}[1;1H") && frame.contains("\u{1B}[2;1H"))
  }

  @Test func laterFramesRedrawOnlyTheRowsThatChanged() {
    var renderer = ScreenRenderer(color: false)
    _ = renderer.frame(lines(["a", "b", "c"]), columns: 10)
    let frame = renderer.frame(lines(["a", "B", "c"]), columns: 10)
    #expect(frame == "\u{1B}[2;1H" + renderer.encode(ScreenLine([.init(text: "B")]), columns: 10))
    #expect(renderer.frame(lines(["a", "B", "c"]), columns: 10) == "")
    renderer.invalidate()
    #expect(renderer.frame(lines(["a", "B", "c"]), columns: 10).hasPrefix("\u{1B}[H\u{1B}[2J"))
  }

  @Test func colourOnlyWhenAskedButTheCursorRowAlwaysStandsOut() {
    let line = ScreenLine(
      [.init(text: "▾", look: .green), .init(text: " T", look: .bold)], highlighted: true)
    let plain = ScreenRenderer(color: false).encode(line, columns: 6)
    #expect(plain == "\u{1B}[2K\u{1B}[0;7m▾ T   \u{1B}[0m")
    let coloured = ScreenRenderer(color: true).encode(line, columns: 6)
    #expect(coloured.contains("\u{1B}[32m▾\u{1B}[0;7m"))
    #expect(coloured.contains("\u{1B}[1m T\u{1B}[0;7m"))
  }

  /// A row as wide as the terminal keeps its last character: with autowrap off the cursor
  /// stays on it, so nothing that erases to the end of the line may follow.
  @Test func aFullRowIsClearedBeforeItIsDrawnNotAfter() {
    let row = ScreenRenderer(color: false).encode(ScreenLine([.init(text: "abcdef…")]), columns: 7)
    #expect(row == "\u{1B}[2K\u{1B}[0mabcdef…\u{1B}[0m")
    #expect(
      TerminalSession.enterSequence.contains("\u{1B}[?7l")
        && TerminalSession.leaveSequence.contains("\u{1B}[?7h"))
  }
}
