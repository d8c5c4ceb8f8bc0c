import SectionCore

/// What Tab offers in `sectionctl shell`, by where the word under the cursor stands, as the
/// bash completion does (`Completion.bash`): the first word is a command, or a
/// protocol verb when it begins in upper case; after a command that takes a section come the
/// sections' ids and indices, read from the daemon; after `mode` the modes; after `item` its
/// actions. Where nothing fits (a title, a position) nothing is offered: a wrong word that
/// Enter would send is worse than none.
enum ShellCompletion {
  /// Words that start with `word`, the one being typed, when `before` is the line before it.
  /// `sections` asks the daemon for the ids, only when a section is wanted there.
  static func candidates(for word: String, after before: String, sections: () -> [String]) -> [String] {
    let words = before.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    let offered: [String]
    if let command = words.first {
      let position = argumentPosition(words.dropFirst())
      if let verb = command.first, verb.isUppercase {
        offered = forProtocol(command.uppercased(), position, sections)
      } else {
        offered = forCommand(command, position, sections)
      }
    } else {
      offered =
        word.first?.isUppercase == true
        ? Verb.names : Subcommand.allCases.map(\.rawValue) + ["quit"]
    }
    return offered.filter { $0.hasPrefix(word) }
  }

  /// Which argument the next word is (0: the first after the command): options and the
  /// value each takes do not count.
  private static func argumentPosition(_ words: ArraySlice<String>) -> Int {
    var position = 0
    var skipValue = false
    for word in words {
      if skipValue {
        skipValue = false
      } else if word.hasPrefix("-") {
        skipValue = ArgumentParser.optionsWithValue.contains(word)
      } else {
        position += 1
      }
    }
    return position
  }

  private static func forCommand(_ command: String, _ position: Int, _ sections: () -> [String]) -> [String] {
    switch (Subcommand(rawValue: command), position) {
    case (.help?, 0): Subcommand.allCases.map(\.rawValue)
    case (.items?, 0), (.open?, _), (.close?, _), (.toggle?, _), (.rm?, 0), (.mv?, 0), (.rename?, 0),
      (.isOpen?, 0), (.item?, 1):
      sections()
    case (.mode?, 0): ["exclusive", "multi"]
    case (.item?, 0): ["add", "rm", "mv", "set"]
    default: []
    }
  }

  private static func forProtocol(_ verb: String, _ position: Int, _ sections: () -> [String]) -> [String] {
    switch (verb, position) {
    case ("OPEN", 0), ("CLOSE", 0): ["ALL"] + sections()
    case ("TOGGLE", 0), ("ITEMS", 0), ("DELETE", 0), ("MOVE", 0), ("RENAME", 0), ("ITEM", 1): sections()
    case ("MODE", 0): ["exclusive", "multi"]
    case ("ITEM", 0): ["INSERT", "DELETE", "MOVE", "SET"]
    default: []
    }
  }
}
