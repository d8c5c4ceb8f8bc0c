/// What one positional argument of a command is: what Tab offers there, and whether free text
/// begins there (after which every word is the text's, options too: `ArgumentParser`).
enum ArgumentKind: Equatable, Sendable {
  /// One section reference (an index or an id): the daemon's ids are offered.
  case section
  /// Section references, one or more: the ids are offered here and at every later position.
  case sections
  /// One of a few words, named by `noun` in zsh's messages (`mode`: exclusive or multi).
  case choice(noun: String, words: [String])
  /// A command's name (`help COMMAND`).
  case command
  /// A word nothing completes (an index, a new id), named by `noun`.
  case value(noun: String)
  /// Such words, one or more (`send LINE...`).
  case values(noun: String)
  /// Free text to the end of the line (a title, an item's text), named by `noun`.
  case text(noun: String)

  /// Whether it takes every word from here on.
  var repeats: Bool {
    switch self {
    case .sections, .values, .text: true
    default: false
    }
  }
}

/// One action of a command that has actions (`item add REF TEXT...`), with its arguments.
struct CommandAction: Sendable {
  let name: String
  let arguments: [ArgumentKind]
}

extension Subcommand {
  /// The options that apply to it (to any of its actions), global ones aside.
  var options: [CommandOption] {
    CommandOption.allCases.filter { option in option.scope?.contains { $0.command == self } ?? false }
  }

  /// What its argument at `position` is (0: the first after the command), given the arguments
  /// before it (`before.first` is the action of a command with actions); nil past the last.
  func argument(at position: Int, after before: [String]) -> ArgumentKind? {
    var arguments = self.arguments
    var position = position
    if !actions.isEmpty {
      if position == 0 { return .choice(noun: "action", words: actions.map(\.name)) }
      guard let action = actions.first(where: { $0.name == before.first }) else { return nil }
      arguments = action.arguments
      position -= 1
    }
    if position < arguments.count { return arguments[position] }
    return arguments.last.flatMap { $0.repeats ? $0 : nil }
  }

  /// How many of its arguments (its action counted) come before its free text, given the
  /// arguments so far; nil when it takes none (or its action is not known yet).
  func textStart(after before: [String]) -> Int? {
    var offset = 0
    var arguments = self.arguments
    if !actions.isEmpty {
      guard let action = actions.first(where: { $0.name == before.first }) else { return nil }
      arguments = action.arguments
      offset = 1
    }
    return arguments.firstIndex { if case .text = $0 { true } else { false } }.map { $0 + offset }
  }
}
