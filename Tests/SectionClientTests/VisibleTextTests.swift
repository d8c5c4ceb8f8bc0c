import Testing

@testable import SectionClient

/// Everything a client prints from the socket is data: what a fake server or a
/// daemon bug sends must not reach the terminal as control sequences, nor hide itself.
/// `VisibleText` is the library's; sectionctl's outputs through it are `EscapedOutputTests`.
@Suite struct VisibleTextTests {
  /// OSC 52 (clipboard), OSC 0 (title), CSI and the 8-bit CSI, as a hostile title would carry them.
  static let hostile = "a\u{1B}]52;c;cHduZWQ=\u{07}b\u{1B}]0;PWNED-TITLE\u{1B}\\c\u{1B}[2J\u{9B}31m\u{7F}\td"

  @Test func controlsAreShownAsEscapes() {
    #expect(
      VisibleText.escape(Self.hostile)
        == #"a\x1b]52;c;cHduZWQ=\x07b\x1b]0;PWNED-TITLE\x1b\c\x1b[2J\x9b31m\x7f\x09d"#)
    #expect(VisibleText.escape("line\none\r") == #"line\x0aone\x0d"#)
    #expect(VisibleText.escape("a\u{2028}b\u{2029}") == #"a\u2028b\u2029"#)
  }

  @Test func invisibleAndBidiFormatCharactersAreShown() {
    #expect(VisibleText.escape("gnp\u{202E}.exe") == #"gnp\u202e.exe"#)
    #expect(VisibleText.escape("\u{2066}x\u{2069}") == #"\u2066x\u2069"#)
    #expect(
      VisibleText.escape("a\u{200B}b\u{200E}c\u{200F}d\u{61C}e\u{FEFF}")
        == #"a\u200bb\u200ec\u200fd\u061ce\ufeff"#)
    #expect(VisibleText.escape("flag\u{E0067}\u{E007F}") == #"flag\U000e0067\U000e007f"#)
  }

  @Test func ordinaryTextIsLeftAsItIs() {
    for text in ["Fruit", "café", "日本語", "👩‍💻", "❤️", "e\u{301}", "soft\u{AD}hyphen", "فارسی\u{200C}ها", ""] {
      #expect(VisibleText.escape(text) == text)
    }
  }

  @Test func outsideUTF8OnlyASCIIIsDrawn() {
    #expect(VisibleText.escape("café ▸", asciiOnly: true) == #"caf\u00e9 \u25b8"#)
    #expect(VisibleText.escape("\u{1F34E}", asciiOnly: true) == #"\U0001f34e"#)
  }

  @Test func invalidUTF8IsShownByteByByte() {
    #expect(VisibleText.decode(Array("café".utf8)) == "café")
    #expect(VisibleText.decode([0x6E, 0x61, 0xEF, 0x76, 0x65]) == #"na\xefve"#)
    #expect(VisibleText.decode([0xC3]) == #"\xc3"#)
    // Overlong and surrogate encodings are invalid too; what follows them is kept.
    #expect(VisibleText.decode([0xC0, 0xAF, 0x41]) == #"\xc0\xafA"#)
    #expect(VisibleText.decode([0xED, 0xA0, 0x80, 0xE6, 0x97, 0xA5]) == #"\xed\xa0\x80日"#)
  }

  @Test func messagesKeepTheirLinesButNotTheirControls() {
    #expect(VisibleText.escapeLines("first\nsecond \u{1B}[31m") == "first\nsecond \\x1b[31m")
  }
}

@Suite struct VisibleTextLineTests {
  @Test func oneLineCutAtItsLimit() {
    #expect(VisibleText.line("a\r\nb") == "a\\x0d\\x0ab")
    #expect(VisibleText.line(String(repeating: "é", count: 10), limit: 4) == "éééé...")
    #expect(VisibleText.line("short", limit: 5) == "short")
  }
}
