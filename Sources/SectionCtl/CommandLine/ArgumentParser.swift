import Posix
import SectionClient

/// Turns sectionctl's arguments into an `Invocation`, in the style of systemctl: options may come
/// before or after the command, `--name=value` and `--name value` both work, `--` ends the options.
/// Once a free text (a title, an item's text) has begun, every further word is the text's,
/// as `git commit -m` and redis-cli take it: `item add today Call -j home` adds "Call -j home".
enum ArgumentParser {
  static func parse(_ arguments: [String]) throws(CommandLineError) -> Invocation {
    var options = Options()
    var positionals: [String] = []
    var remaining = arguments[...]
    while var argument = remaining.popFirst() {
      if let start = textStart(positionals), positionals.count > start {
        positionals += [argument] + remaining
        break
      }
      if argument == "--" {
        positionals += remaining
        break
      }
      if let (first, rest) = shortCluster(argument) {
        argument = first
        remaining.insert(contentsOf: rest, at: remaining.startIndex)
      }
      if argument.hasPrefix("-") && argument != "-" {
        try options.take(argument, from: &remaining)
      } else {
        positionals.append(argument)
      }
    }
    if options.socket != nil && options.readonlySocket != nil {
      throw .usage("--socket and --readonly-socket each name the socket to talk to; give one")
    }
    return Invocation(
      command: try command(positionals, options), socket: options.socket,
      readonly: options.readonly || options.readonlySocket != nil, readonlySocket: options.readonlySocket,
      json: options.json, timeout: options.timeout ?? Invocation.defaultTimeout,
      commandGiven: !positionals.isEmpty, list: options.list, listFromQuery: options.listFromQuery,
      name: options.name)
  }

  /// Where the free text of the command that `positionals` begin with starts, counting the
  /// command's own words (`Subcommand.textStart`): add ID TITLE... at 2, item set REF
  /// POSITION TEXT... at 4. Nil for commands without one.
  private static func textStart(_ positionals: [String]) -> Int? {
    guard let command = positionals.first.flatMap(Subcommand.init(rawValue:)) else { return nil }
    return command.textStart(after: Array(positionals.dropFirst())).map { $0 + 1 }
  }

  /// Short options written together or with their value attached, as getopt allows: `-rj` is
  /// `-r -j`, `-s/x.sock` is `-s /x.sock`. Nil for anything else (long options, `-s` alone).
  private static func shortCluster(_ argument: String) -> (String, [String])? {
    guard argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.count > 2 else { return nil }
    let letters = argument.dropFirst()
    // The options that take a value take it joined on too: -s/run/x.sock, -lmedia, -n50.
    if let letter = letters.first, CommandOption.withValue.contains("-" + String(letter)) {
      return ("-" + String(letter), [String(letters.dropFirst())])
    }
    return ("-" + String(letters.first!), letters.dropFirst().map { "-" + String($0) })
  }

  private static func command(_ positionals: [String], _ options: Options) throws(CommandLineError) -> Command
  {
    guard let name = positionals.first else {
      if options.help { return .help(nil) }
      if options.version { return .version }
      try check(options, for: .list)
      return .list
    }
    guard let subcommand = Subcommand(rawValue: name) else {
      let names = Subcommand.allCases.map(\.rawValue).joined(separator: ", ")
      throw .usage("unknown command '\(name)'; the commands are: \(names)")
    }
    if options.help { return .help(subcommand) }
    if options.version { return .version }
    try check(options, for: subcommand)
    return try subcommand.spec.parse(Array(positionals.dropFirst()), options)
  }

  /// Refuses options that mean nothing to `subcommand`, rather than silently ignoring them.
  private static func check(_ options: Options, for subcommand: Subcommand) throws(CommandLineError) {
    for option in options.given where !option.applies(to: subcommand) {
      let scope = option.scope!.map(\.description)
      let names =
        scope.count == 1 ? scope[0] : scope.dropLast().joined(separator: ", ") + " and " + scope.last!
      throw .usage("\(option.label) works only with \(names)")
    }
    try subcommand.spec.check(options)
  }

  /// Refuses arguments to a command that takes none.
  static func none(_ arguments: [String], _ subcommand: Subcommand) throws(CommandLineError) {
    if let first = arguments.first {
      throw .usage("\(subcommand.rawValue) takes no arguments, got '\(first)'")
    }
  }

  /// A section reference goes into a request line as one word, so it must be one.
  static func reference(_ text: String) throws(CommandLineError) -> String {
    guard !text.isEmpty,
      !text.unicodeScalars.contains(where: {
        $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
      })
    else {
      throw .usage("'\(text)' is not a section index or id: those are single words without spaces")
    }
    return text
  }
}
