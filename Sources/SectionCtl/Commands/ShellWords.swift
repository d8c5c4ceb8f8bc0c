import SectionClient

/// Splits a line typed at `sectionctl shell` into words as sh does for simple commands:
/// spaces and tabs separate, '...' keeps everything, "..." keeps all but \" and \\, and a
/// backslash outside quotes keeps the next character.
enum ShellWords {
  static func split(_ line: String) throws(CommandLineError) -> [String] {
    var words: [String] = []
    var word = ""
    var inWord = false
    var quote: Character?
    var escaped = false
    for character in line {
      if escaped {
        word.append(character)
        escaped = false
        continue
      }
      switch (quote, character) {
      case (nil, " "), (nil, "\t"):
        if inWord { words.append(word) }
        word = ""
        inWord = false
      case (nil, "\\"), ("\"", "\\"):
        escaped = true
        inWord = true
      case (nil, "'"), (nil, "\""):
        quote = character
        inWord = true
      case ("'", "'"), ("\"", "\""):
        quote = nil
      default:
        word.append(character)
        inWord = true
      }
    }
    if quote != nil || escaped { throw .usage("the line ends inside a quote or after a backslash") }
    if inWord { words.append(word) }
    return words
  }
}
