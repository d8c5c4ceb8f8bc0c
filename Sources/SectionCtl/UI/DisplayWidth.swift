/// How many terminal cells text takes, and how to cut it to fit: titles and items are cut by
/// what a person sees, not by bytes or characters. Written here rather than taken from glibc's
/// wcwidth, which answers only under a UTF-8 locale and knows nothing of emoji sequences.
enum DisplayWidth {
  /// The cells one grapheme cluster takes: 0 for a lone combining mark or format character,
  /// 2 for East Asian wide and fullwidth characters and emoji shown as pictures, 1 otherwise.
  /// A cluster counts as its first scalar, so combining marks after a letter add nothing and a
  /// ZWJ sequence (👩‍💻) counts once.
  static func of(_ character: Character) -> Int {
    let scalars = character.unicodeScalars
    guard let first = scalars.first else { return 0 }
    if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) { return 0 }
    switch first.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    if isWide(first.value) || first.properties.isEmojiPresentation { return 2 }
    // A text-style emoji followed by VS16 (U+FE0F) is drawn as a picture, two cells.
    if first.properties.isEmoji && scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
    return 1
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

  /// East Asian Wide (W) and Fullwidth (F) blocks, from Unicode's EastAsianWidth.txt, coarsely:
  /// Hangul Jamo, CJK radicals to Yi, Hangul syllables, CJK compatibility, fullwidth forms, and
  /// the supplementary ideographic planes. Emoji are found by their property instead.
  private static func isWide(_ value: UInt32) -> Bool {
    switch value {
    case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
      0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
      0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
      0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
      return true
    default:
      return false
    }
  }
}
