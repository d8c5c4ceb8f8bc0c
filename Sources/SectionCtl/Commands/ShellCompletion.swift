import SectionClient
import SectionGrammar

/// What Tab offers in `sectionctl shell`, by where the word under the cursor stands, from the
/// command table as the bash completion is (`Completion.bash`): the first word is a command, or
/// a protocol verb when it begins in upper case; where a command takes a section come the
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
      let arguments = self.arguments(words.dropFirst())
      if let verb = command.first, verb.isUppercase {
        offered = forProtocol(command.uppercased(), arguments.count, sections)
      } else {
        offered = forCommand(command, arguments, sections)
      }
    } else {
      offered =
        word.first?.isUppercase == true
        ? Verb.allCases.map(\.name) : Subcommand.allCases.map(\.rawValue) + ["quit"]
    }
    return offered.filter { $0.hasPrefix(word) }
  }

  /// The arguments among `words`: options and the value each takes do not count.
  private static func arguments(_ words: ArraySlice<String>) -> [String] {
    var arguments: [String] = []
    var skipValue = false
    for word in words {
      if skipValue {
        skipValue = false
      } else if word.hasPrefix("-") {
        skipValue = CommandOption.withValue.contains(word)
      } else {
        arguments.append(word)
      }
    }
    return arguments
  }

  /// What the command table (`Subcommand.argument`) says its next argument is.
  private static func forCommand(_ command: String, _ before: [String], _ sections: () -> [String])
    -> [String]
  {
    switch Subcommand(rawValue: command)?.argument(at: before.count, after: before) {
    case .section?, .sections?: sections()
    case .choice(_, let words)?: words
    case .command?: Subcommand.allCases.map(\.rawValue)
    case .value?, .values?, .text?, nil: []
    }
  }

  /// What the protocol's grammar (`Row.offers`, through `SendLine.argument`) says a raw line's next argument is.
  private static func forProtocol(_ verb: String, _ position: Int, _ sections: () -> [String]) -> [String] {
    switch SendLine.argument(of: verb, at: position) {
    case .section(let also)?: also + sections()
    case .words(let words)?: words
    case nil: []
    }
  }
}
