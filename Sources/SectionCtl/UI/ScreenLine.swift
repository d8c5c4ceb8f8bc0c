import SectionClient

/// One row of the screen before it becomes bytes: runs of text with a look each, and whether
/// the whole row is drawn in reverse video (the cursor's row, the status line).
struct ScreenLine: Equatable, Sendable {
  enum Look: Equatable, Sendable { case plain, bold, dim, green }

  struct Span: Equatable, Sendable {
    var text: String
    var look: Look = .plain
  }

  var spans: [Span]
  var highlighted = false

  init(_ spans: [Span], highlighted: Bool = false) {
    self.spans = spans
    self.highlighted = highlighted
  }

  /// The text a person reads, without looks: what `tmux capture-pane -p` would show.
  var text: String { spans.map(\.text).joined() }

  /// The line with every span's text made safe to draw (see `VisibleText`): titles, ids, items
  /// and messages come from the daemon. `asciiOnly` for a terminal whose locale is not UTF-8.
  func escaped(asciiOnly: Bool) -> ScreenLine {
    ScreenLine(
      spans.map { Span(text: VisibleText.escape($0.text, asciiOnly: asciiOnly), look: $0.look) },
      highlighted: highlighted)
  }

  /// The line cut to `width` cells, by display width, with `ellipsis` where it was cut.
  func fitted(width: Int, ellipsis: String) -> ScreenLine {
    guard DisplayWidth.of(text) > width else { return self }
    var room = width - DisplayWidth.of(ellipsis)
    var kept: [Span] = []
    spans: for span in spans {
      var part = ""
      for character in span.text {
        let cells = DisplayWidth.of(character)
        if cells > room {
          if !part.isEmpty { kept.append(Span(text: part, look: span.look)) }
          break spans
        }
        room -= cells
        part.append(character)
      }
      kept.append(Span(text: part, look: span.look))
    }
    kept.append(Span(text: room >= 0 ? ellipsis : ""))
    return ScreenLine(kept, highlighted: highlighted)
  }
}
