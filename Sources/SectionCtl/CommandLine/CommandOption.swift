import SectionClient

/// Every option sectionctl takes, in one table: its spellings, whether it takes a value, where it
/// applies, and its words for the help and the completions. The parser accepts exactly these
/// (`ArgumentParser`), `sectionctl --help` lists the global ones (`HelpText`), and the bash and
/// zsh scripts and the shell's Tab complete them (`Completion`, `ShellCompletion`).
enum CommandOption: CaseIterable, Sendable {
  // Global: before or after any command, in the order --help lists them.
  case socket, list, readonly, readonlySocket, json, timeout, name, help, version
  // One command's, or a few's.
  case all, view, count, from, since, lines, follow, fresh, force, quiet, at, listFromQuery

  /// What an option's value is, for the completions: a file, a list's name, or a word to type.
  enum ValueKind: Sendable {
    case path, listName, plain
  }

  /// The value an option takes: its name in the help (`PATH`), its noun in zsh's messages.
  struct Value: Sendable {
    let placeholder: String
    let noun: String
    let kind: ValueKind
  }

  /// The one-letter spelling, if there is one (`-s`).
  var short: String? {
    switch self {
    case .socket: "-s"
    case .list: "-l"
    case .readonly: "-r"
    case .json: "-j"
    case .help: "-h"
    case .lines: "-n"
    case .follow: "-f"
    case .quiet: "-q"
    default: nil
    }
  }

  /// The long spelling (`--socket`).
  var long: String {
    switch self {
    case .socket: "--socket"
    case .list: "--list"
    case .readonly: "--readonly"
    case .readonlySocket: "--readonly-socket"
    case .json: "--json"
    case .timeout: "--timeout"
    case .name: "--name"
    case .help: "--help"
    case .version: "--version"
    case .all: "--all"
    case .view: "--view"
    case .count: "--count"
    case .from: "--from"
    case .since: "--since"
    case .lines: "--lines"
    case .follow: "--follow"
    case .fresh: "--fresh"
    case .force: "--force"
    case .quiet: "--quiet"
    case .at: "--at"
    case .listFromQuery: "--list-from-query"
    }
  }

  /// Both spellings, the short one first.
  var spellings: [String] { (short.map { [$0] } ?? []) + [long] }

  /// The value it takes (the next word, or after `=`), nil for a flag.
  var value: Value? {
    switch self {
    case .socket, .readonlySocket: Value(placeholder: "PATH", noun: "socket", kind: .path)
    case .list: Value(placeholder: "NAME", noun: "list", kind: .listName)
    case .timeout: Value(placeholder: "SECONDS", noun: "seconds", kind: .plain)
    case .name: Value(placeholder: "NAME", noun: "name", kind: .plain)
    case .count, .lines: Value(placeholder: "N", noun: "count", kind: .plain)
    case .from: Value(placeholder: "REV", noun: "revision", kind: .plain)
    case .since: Value(placeholder: "TIME", noun: "time", kind: .plain)
    case .at: Value(placeholder: "INDEX", noun: "position", kind: .plain)
    default: nil
    }
  }

  /// The commands it applies to (`item add`: the action too); nil for a global option.
  var scope: [CommandPath]? {
    switch self {
    case .socket, .list, .readonly, .readonlySocket, .json, .timeout, .name, .help, .version: nil
    case .all: [.init(.open), .init(.close)]
    case .view, .count: [.init(.watch)]
    case .from: [.init(.log), .init(.watch)]
    case .since, .lines, .follow: [.init(.log)]
    case .fresh, .force: [.init(.reload)]
    case .quiet: [.init(.isOpen)]
    case .at: [.init(.add), .init(.item, "add")]
    case .listFromQuery: [.init(.pipe)]
    }
  }

  /// Options that say the same thing another way: only one of them may be given.
  var conflicts: [CommandOption] {
    switch self {
    case .socket: [.readonlySocket]
    case .readonlySocket: [.socket]
    case .from: [.since]
    case .since: [.from]
    default: []
    }
  }

  /// Options after which nothing else is completed: they print and exit.
  var standsAlone: Bool { self == .help || self == .version }

  /// A few words for the completions' descriptions.
  var brief: String {
    switch self {
    case .socket: "the daemon's control socket"
    case .list: "the named list"
    case .readonly: "use the read-only socket"
    case .readonlySocket: "the read-only socket, wherever it is"
    case .json: "print JSON"
    case .timeout: "seconds to wait for the daemon, 0 for ever"
    case .name: "what the daemon's history calls this run"
    case .help: "show help"
    case .version: "show the version"
    case .all: "every section"
    case .view: "redraw the accordion on every change"
    case .count: "exit after N changes"
    case .from: "the changes after this revision"
    case .since: "the changes since this time"
    case .lines: "how many changes"
    case .follow: "then each new change"
    case .fresh: "take the config as it is, without clients' edits"
    case .force: "with --fresh, also without a config file"
    case .quiet: "print nothing, only the exit status"
    case .at: "insert at this position"
    case .listFromQuery: "the list from websocketd's $QUERY_STRING"
    }
  }

  /// How the option is named in an error: `--quiet (-q)`.
  var label: String { short.map { "\(long) (\($0))" } ?? long }

  /// The option spelt `name`, nil for none.
  static func named(_ name: String) -> CommandOption? {
    allCases.first { $0.long == name || $0.short == name }
  }

  /// The spellings of the options that take a value: their next word is not an argument.
  static let withValue: Set<String> = Set(allCases.filter { $0.value != nil }.flatMap(\.spellings))

  /// Whether the option means something to `command` (and, for `item`, its `action`).
  func applies(to command: Subcommand, action: String? = nil) -> Bool {
    guard let scope else { return true }
    return scope.contains {
      $0.command == command && ($0.action == nil || action == nil || $0.action == action)
    }
  }
}

/// A command, or one action of a command that has actions (`item add`).
struct CommandPath: Sendable, Equatable, CustomStringConvertible {
  let command: Subcommand
  let action: String?

  init(_ command: Subcommand, _ action: String? = nil) {
    self.command = command
    self.action = action
  }

  var description: String { command.rawValue + (action.map { " " + $0 } ?? "") }
}
