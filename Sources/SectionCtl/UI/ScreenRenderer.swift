/// Turns screen lines into ANSI sequences, redrawing only the rows that changed since the last
/// frame: at a thousand changes a second most rows stay as they are, and a terminal (or tmux,
/// or an ssh link) that is sent only the difference keeps up.
///
/// Why ANSI over termios rather than ncurses: the screen is one list and a status line, which
/// needs cursor positioning, erase-to-end-of-line and a few SGR attributes that every terminal
/// sectionctl runs in understands; the project already wraps the terminal calls it needs
/// (Posix: raw mode, window size), so no C library, no terminfo lookup and no second screen
/// buffer come in, and this row-level diff is all the "only redraw what changed" it takes.
struct ScreenRenderer {
  /// Colour (green markers, dim details, bold titles); off for NO_COLOR. Reverse video for the
  /// cursor's row and the status line stays, since without it there is no cursor to see.
  let color: Bool
  /// What each row was last drawn as; empty after `invalidate()`, so the next frame is whole.
  private var drawn: [String] = []

  init(color: Bool) {
    self.color = color
  }

  /// Forgets what is on the screen (after a resize, or at the start): the next frame clears and draws all.
  mutating func invalidate() {
    drawn = []
  }

  /// The bytes that bring the screen from the last frame to `lines`; empty when nothing changed.
  mutating func frame(_ lines: [ScreenLine], columns: Int) -> String {
    let encoded = lines.map { encode($0, columns: columns) }
    var output = ""
    if drawn.count != encoded.count {
      output = "\u{1B}[H\u{1B}[2J"
      // Every encoded row starts with ESC, so none equals an empty one: all are drawn.
      drawn = Array(repeating: "", count: encoded.count)
    }
    for (row, text) in encoded.enumerated() where drawn[row] != text {
      output += "\u{1B}[\(row + 1);1H" + text
      drawn[row] = text
    }
    return output
  }

  /// One row: cleared whole, then its spans with their looks (when highlighted, then
  /// reverse-video spaces so the bar spans the width). Cleared first rather than erased after:
  /// with autowrap off (`TerminalSession`) the cursor stays on the last column once a row fills
  /// it, and an erase to the end of the line there would take the row's last character. (Every
  /// row ends with the attributes reset, so the clear uses the default background.)
  func encode(_ line: ScreenLine, columns: Int) -> String {
    let base = line.highlighted ? "\u{1B}[0;7m" : "\u{1B}[0m"
    var text = "\u{1B}[2K" + base
    for span in line.spans {
      guard color, let code = ScreenRenderer.code(span.look) else {
        text += span.text
        continue
      }
      text += "\u{1B}[\(code)m" + span.text + base
    }
    if line.highlighted {
      text += String(repeating: " ", count: max(columns - DisplayWidth.of(line.text), 0))
    }
    return text + "\u{1B}[0m"
  }

  private static func code(_ look: ScreenLine.Look) -> String? {
    switch look {
    case .plain: nil
    case .bold: "1"
    case .dim: "2"
    case .green: "32"
    }
  }
}
