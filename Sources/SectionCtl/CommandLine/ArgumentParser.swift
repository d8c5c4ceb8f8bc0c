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
    let arguments = Array(positionals.dropFirst())
    switch subcommand {
    case .list: try none(arguments, subcommand); return .list
    case .view: try none(arguments, subcommand); return .view
    case .status: try none(arguments, subcommand); return .status
    case .lists:
      try none(arguments, subcommand)
      if options.readonly {
        throw .usage(
          "--readonly (-r) means nothing to lists: it reads each list's status itself, through the "
            + "read-only socket when the control socket is refused")
      }
      if options.socket != nil || options.readonlySocket != nil {
        throw .usage(
          "lists looks through every socket directory itself (and that of $SECTIOND_SOCKET): "
            + "--socket and --readonly-socket name one daemon; use status for one")
      }
      if options.list != nil {
        throw .usage("--list (-l) names one list, and lists shows them all; use status for one")
      }
      return .lists
    case .reload:
      try none(arguments, subcommand)
      return options.fresh ? .reloadFresh(force: options.force) : .reload
    case .ping: try none(arguments, subcommand); return .ping
    case .ui: try none(arguments, subcommand); return .ui
    case .pipe: try none(arguments, subcommand); return .pipe
    case .shell: try none(arguments, subcommand); return .shell
    case .completion:
      if arguments.count == 1, let candidates = CompletionCandidates(rawValue: arguments[0]) {
        return .candidates(candidates)
      }
      guard arguments.count == 1, ["bash", "zsh"].contains(arguments[0]) else {
        throw .usage("completion needs one shell: bash or zsh")
      }
      return .completion(arguments[0])
    case .export: try none(arguments, subcommand); return .export
    case .isOpen:
      guard !arguments.isEmpty else {
        throw .usage("is-open needs at least one section (an index or an id)")
      }
      var refs: [String] = []
      for argument in arguments { refs.append(try reference(argument)) }
      return .isOpen(refs, quiet: options.quiet)
    case .watch:
      try none(arguments, subcommand)
      return .watch(count: options.count, view: options.view, from: options.from)
    case .log:
      try none(arguments, subcommand)
      if options.from != nil && options.since != nil {
        throw .usage("--from and --since each say where log starts; give one")
      }
      return .log(
        LogRequest(count: options.lines, follow: options.follow, from: options.from, since: options.since))
    case .items:
      guard arguments.count == 1 else {
        throw .usage("items needs exactly one section (an index or an id), got \(arguments.count)")
      }
      return .items(try reference(arguments[0]))
    case .open, .close, .toggle:
      let action = SectionAction(rawValue: subcommand.rawValue)!
      if options.all {
        guard arguments.isEmpty else {
          throw .usage("\(name) --all takes no sections, got '\(arguments[0])'")
        }
        return .changeAll(action)
      }
      guard !arguments.isEmpty else {
        let all = subcommand == .toggle ? "" : ", or --all"
        throw .usage("\(name) needs at least one section (an index or an id)\(all)")
      }
      var refs: [String] = []
      for argument in arguments { refs.append(try reference(argument)) }
      return .change(action, refs: refs)
    case .mode:
      guard arguments.count <= 1 else { throw .usage("mode takes at most one argument: exclusive or multi") }
      guard let wanted = arguments.first else { return .mode(nil) }
      guard let mode = Mode(rawValue: wanted.lowercased()) else {
        throw .usage("unknown mode '\(wanted)'; the modes are exclusive and multi")
      }
      return .mode(mode)
    case .send:
      let lines = arguments.flatMap {
        $0.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
      }
      guard !lines.isEmpty else { throw .usage("send needs at least one protocol line, such as 'PING'") }
      try checkSession(lines)
      return .send(lines)
    case .add, .rm, .mv, .rename, .item:
      return .edit(try editRequest(subcommand, arguments, at: options.at))
    case .batch:
      try none(arguments, subcommand)
      return .batch
    case .help:
      guard arguments.count <= 1 else { throw .usage("help takes at most one command") }
      guard let topic = arguments.first else { return .help(nil) }
      guard let topicCommand = Subcommand(rawValue: topic) else {
        throw .usage("no help on '\(topic)': no such command")
      }
      return .help(topicCommand)
    }
  }

  /// Refuses options that mean nothing to `subcommand`, rather than silently ignoring them.
  private static func check(_ options: Options, for subcommand: Subcommand) throws(CommandLineError) {
    for option in options.given where !option.applies(to: subcommand) {
      let scope = option.scope!.map(\.description)
      let names =
        scope.count == 1 ? scope[0] : scope.dropLast().joined(separator: ", ") + " and " + scope.last!
      throw .usage("\(option.label) works only with \(names)")
    }
    if options.force && !options.fresh { throw .usage("--force works only with reload --fresh") }
    if options.from != nil && options.view {
      throw .usage("--from does not apply to watch --view, which redraws the list")
    }
    if options.json && (subcommand == .ui || subcommand == .shell) {
      throw .usage("--json does not apply to \(subcommand.rawValue), which is for people")
    }
    if options.timeout != nil
      && (subcommand == .watch || subcommand == .ui || subcommand == .pipe
        || (subcommand == .log && options.follow))
    {
      throw .usage(
        "--timeout applies to one-shot commands; \(subcommand.rawValue) waits for the daemon by design")
    }
    if options.json && (subcommand == .send || subcommand == .pipe) {
      throw .usage(
        "--json does not apply to \(subcommand.rawValue), which prints the daemon's lines as they are")
    }
  }

  /// Raw lines for `send` that would leave it waiting for a reply that never comes, or
  /// sending into a closed connection: lines after QUIT, a BATCH without END.
  private static func checkSession(_ lines: [String]) throws(CommandLineError) {
    var inBatch = false
    for (number, line) in lines.enumerated() {
      if SendLine.quits(line) && !inBatch && number < lines.count - 1 {
        throw .usage("QUIT must be the last line: the daemon closes the connection after it")
      } else if SendLine.opensBatch(line) && !inBatch {
        inBatch = true
      } else if SendLine.closesBatch(line) {
        inBatch = false
      }
    }
    if inBatch { throw .usage("a BATCH needs its END: the daemon applies nothing until it reads END") }
  }

  private static func none(_ arguments: [String], _ subcommand: Subcommand) throws(CommandLineError) {
    if let first = arguments.first {
      throw .usage("\(subcommand.rawValue) takes no arguments, got '\(first)'")
    }
  }

  /// The request of a runtime edit.
  private static func editRequest(
    _ subcommand: Subcommand, _ arguments: [String], at: Int?
  ) throws(CommandLineError) -> Edit {
    var words = arguments[...]
    let usage = subcommand.usage.map { "sectionctl \($0)" }.joined(separator: "; ")
    func next(_ what: String) throws(CommandLineError) -> String {
      guard let word = words.popFirst() else {
        throw .usage("\(subcommand.rawValue) needs \(what): \(usage)")
      }
      return word
    }
    func ref() throws(CommandLineError) -> String { try reference(try next("a section (an index or an id)")) }
    func number(_ what: String) throws(CommandLineError) -> Int {
      let word = try next(what)
      guard let value = Int(word), value >= 0 else {
        throw .usage("\(what) must be a number, 0 or more, not '\(word)'")
      }
      return value
    }
    func rest(_ what: String) throws(CommandLineError) -> String {
      let text = words.joined(separator: " ")
      words = []
      guard !text.isEmpty else { throw .usage("\(subcommand.rawValue) needs \(what): \(usage)") }
      guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
        throw .usage("the \(what) must be one line of text, without control characters")
      }
      return text
    }
    let request: Request<UInt64>
    switch subcommand {
    case .add:
      let id = try reference(try next("an id"))
      request = .insert(id: id, title: try rest("a title"), at: at)
    case .rm: request = .delete(try ref())
    case .mv:
      let section = try ref()
      request = .move(section, to: try number("the index to move to"))
    case .rename:
      let section = try ref()
      request = .rename(section, to: try rest("a title"))
    default:
      let action = try next("an action: add, rm, mv or set")
      if at != nil && !CommandOption.at.applies(to: .item, action: action) {
        throw .usage("--at works only with add and item add")
      }
      switch action {
      case "add":
        let section = try ref()
        request = .insertItem(try rest("a text"), in: section, at: at)
      case "rm":
        let section = try ref()
        request = .deleteItem(at: try number("the item's position"), in: section)
      case "mv":
        let section = try ref()
        let from = try number("the item's position")
        request = .moveItem(from: from, to: try number("the position to move to"), in: section)
      case "set":
        let section = try ref()
        let position = try number("the item's position")
        request = .setItem(at: position, to: try rest("a text"), in: section)
      default: throw .usage("unknown item action '\(action)'; the actions are add, rm, mv and set")
      }
    }
    if let extra = words.first { throw .usage("unexpected '\(extra)': \(usage)") }
    return Edit(request: request)
  }

  /// A section reference goes into a request line as one word, so it must be one.
  private static func reference(_ text: String) throws(CommandLineError) -> String {
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
