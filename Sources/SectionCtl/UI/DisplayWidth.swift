import Posix
import SectionClient

/// How many terminal cells text takes, and how to cut it to fit: titles and items are cut by
/// what a person sees, not by bytes or characters. The widths are the C library's `wcwidth`
/// under the user's locale, which is what the terminal (and tmux, and a terminal over ssh) uses:
/// a table of our own that disagreed with it by one cell let a title push text into the next
/// row. Text reaches here already escaped (`VisibleText`), so it holds no control characters.
enum DisplayWidth {
  /// The cells one grapheme cluster takes: the sum of its scalars' widths, as terminals draw
  /// them one by one (a ZWJ emoji sequence counts each picture, a combining mark nothing). A
  /// character the locale cannot show counts 2 cells: too wide is a shorter row, never an overflow.
  static func of(_ character: Character) -> Int {
    character.unicodeScalars.reduce(0) { $0 + (TerminalWidth.of($1) ?? 2) }
  }

  static func of(_ text: some StringProtocol) -> Int {
    text.reduce(0) { $0 + of($1) }
  }

  /// `text` if it fits in `width` cells; otherwise as much of it as fits with `ellipsis` after it.
  static func fit(_ text: String, width: Int, ellipsis: String) -> String {
    guard width > 0 else { return "" }
    if of(text) <= width { return text }
    let room = width - of(ellipsis)
    guard room >= 0 else { return String(ellipsis.prefix(width)) }
    var used = 0
    var kept = ""
    for character in text {
      let cells = of(character)
      if used + cells > room { break }
      used += cells
      kept.append(character)
    }
    return kept + ellipsis
  }
}
