import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct DisplayWidthTests {
  init() { Fixtures.useUTF8Locale() }

  @Test func cellsPerCharacter() {
    #expect(DisplayWidth.of("abc") == 3)
    #expect(DisplayWidth.of("日本語") == 6)
    #expect(DisplayWidth.of("한국") == 4)
    #expect(DisplayWidth.of("ｆｕｌｌ") == 8)
    // e + combining acute: one cell.
    #expect(DisplayWidth.of("e\u{301}") == 1)
    #expect(DisplayWidth.of("🍎") == 2)
    // As wcwidth counts, scalar by scalar: a ZWJ sequence is its pictures, VS16 adds nothing.
    #expect(DisplayWidth.of("👩‍💻") == 4)
    #expect(DisplayWidth.of("❤") == 1)
    #expect(DisplayWidth.of("❤️") == 1)
    #expect(DisplayWidth.of("\u{200B}") == 0)
  }

  /// Where the old table disagreed with glibc and tmux: a Tangut title drawn two
  /// cells a character but counted one pushed its end into the next row.
  @Test func widthsAreTheCLibrarysAsTheTerminalsAre() {
    #expect(DisplayWidth.of("\u{17000}") == 2)
    #expect(DisplayWidth.of(String(repeating: "\u{17000}", count: 60)) == 120)
    #expect(DisplayWidth.of("\u{AD}") == 1)
    #expect(DisplayWidth.of("\u{18B00}") == 2)
    let forged = ScreenLine([.init(text: String(repeating: "\u{17000}", count: 60) + " FORGED-LINE-HERE")])
    #expect(DisplayWidth.of(forged.fitted(width: 100, ellipsis: "…").text) <= 100)
  }

  @Test func fitCutsByCellsWithAnEllipsis() {
    #expect(DisplayWidth.fit("short", width: 10, ellipsis: "…") == "short")
    #expect(DisplayWidth.fit("exactly10!", width: 10, ellipsis: "…") == "exactly10!")
    #expect(DisplayWidth.fit("a longer title", width: 8, ellipsis: "…") == "a longe…")
    // A wide character that would straddle the edge is left out whole.
    #expect(DisplayWidth.fit("日本語です", width: 6, ellipsis: "…") == "日本…")
    #expect(DisplayWidth.of(DisplayWidth.fit("日本語です", width: 6, ellipsis: "…")) == 5)
    // Combining marks stay with their letter.
    #expect(
      DisplayWidth.fit("e\u{301}e\u{301}e\u{301}e\u{301}", width: 3, ellipsis: "…") == "e\u{301}e\u{301}…")
    #expect(DisplayWidth.fit("🍎🍐🍌", width: 5, ellipsis: "…") == "🍎🍐…")
    #expect(DisplayWidth.fit("abc", width: 0, ellipsis: "…") == "")
    #expect(DisplayWidth.fit("abcdef", width: 2, ellipsis: "...") == "..")
  }

  @Test func aLineIsCutAcrossItsSpansKeepingTheirLooks() {
    let line = ScreenLine([
      .init(text: "▸ "), .init(text: "Title", look: .bold), .init(text: "  (0 t)", look: .dim),
    ])
    let cut = line.fitted(width: 6, ellipsis: "…")
    #expect(cut.text == "▸ Tit…")
    #expect(cut.spans.map(\.look) == [.plain, .bold, .plain])
    #expect(line.fitted(width: 40, ellipsis: "…") == line)
  }
}
