import Testing

@testable import SectionClient
@testable import SectionCtl

/// Every output of sectionctl shows text from the socket through `VisibleText`
/// (SectionClientTests' VisibleTextTests check the escapes themselves).
@Suite struct EscapedOutputTests {
  /// OSC 52 (clipboard), OSC 0 (title), CSI and the 8-bit CSI, as a hostile title would carry them.
  static let hostile = "a\u{1B}]52;c;cHduZWQ=\u{07}b\u{1B}]0;PWNED-TITLE\u{1B}\\c\u{1B}[2J\u{9B}31m\u{7F}\td"

  /// `--json`: the serializer escapes C0 as JSON requires; C1, DEL, bidi and invisible
  /// characters are escaped too, losslessly.
  @Test func jsonEscapesC1AndInvisibles() throws {
    let text = "x\u{9B}31m\u{85}\u{7F}é\u{A0}\u{1B}\u{202E}\u{200B}\u{E0067}👩‍💻"
    let json = JSON.object([("title", .string(text))]).serialized()
    let escaped = VisibleText.escape(json: json)
    #expect(
      escaped == #"{"title":"x\u009b31m\u0085\u007fé"# + "\u{A0}" + #"\u001b\u202e\u200b\udb40\udc67"#
        + "👩‍💻\"}")
    #expect(try JSON.parse(Array(escaped.utf8))["title"] == .string(text))
    #expect(VisibleText.escape(json: #"{"a":"é"}"#) == #"{"a":"é"}"#)
    // The document's own whitespace stays: `export` writes one section a line.
    #expect(VisibleText.escape(json: "{\n  \"a\": \"\u{202E}\"\n}\n") == "{\n  \"a\": \"\\u202e\"\n}\n")
  }

  @Test func everyTextOutputEscapes() {
    let section = ListedSection(
      index: 0, id: "x\u{1B}]0;T\u{7}", isOpen: true, itemCount: 1, title: Self.hostile)
    let item = ListedItem(sectionIndex: 0, position: 0, text: "\u{9B}2J\u{202E}gnp.exe")
    let outputs = [
      TextRenderer.table([section], style: .plain),
      TextRenderer.accordion([section], items: [item], style: Style(color: true, unicode: true)),
      TextRenderer.items([item]),
      TextRenderer.changed([section], style: .plain),
      TextRenderer.event(.opened(revision: 1, index: 0, id: section.id)),
      TextRenderer.event(.bye(reason: "shutdown\u{1B}[2J")),
      TextRenderer.event(.other("surprise \u{1B}]52;c;eA==\u{7}")),
      TextRenderer.event(.state(StateSnapshot(revision: 1, mode: .multi, openIDs: [section.id]))),
      TextRenderer.status(
        DaemonStatus(
          daemonVersion: "1\u{1B}[2J", protocolVersion: "1\u{9B}", socket: "/s", revision: 1, mode: .multi,
          sections: [section])),
    ]
    for output in outputs {
      // Only the colour sequences sectionctl itself writes: ESC [ digits m.
      let withoutColour = output.replacing(/\x1B\[[0-9;]*m/, with: "")
      #expect(!withoutColour.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(output)")
      #expect(!withoutColour.unicodeScalars.contains { (0x7F..<0xA0).contains($0.value) || $0 == "\u{202E}" })
    }
    #expect(TextRenderer.items([item]) == #"\x9b2J\u202egnp.exe"# + "\n")
  }

  /// The ui draws escaped text, and cuts it by the width of what is drawn.
  @Test func theUIDrawsTheEscapes() {
    Fixtures.useUTF8Locale()
    let line = ScreenLine([.init(text: "› "), .init(text: Self.hostile, look: .bold)])
    let drawn = line.escaped(asciiOnly: false).fitted(width: 30, ellipsis: "…")
    #expect(drawn.text.hasPrefix(#"› a\x1b]52;c;cHduZWQ=\x07b\x1"#) && drawn.text.hasSuffix("…"))
    #expect(DisplayWidth.of(drawn.text) == 30)
  }
}
