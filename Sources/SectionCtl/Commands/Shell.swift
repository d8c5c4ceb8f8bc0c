import CEdit
import Glibc
import Posix
import SectionClient

/// `sectionctl shell`: a prompt for sectionctl commands and raw protocol lines, with libedit's
/// line editing, history and completion, that prints the daemon's events as they come.
///
/// Each line runs as `sectionctl LINE` would, against the daemon the shell found at start, so
/// every command, option and error is the command line's. On a terminal a second connection
/// subscribes, and while a line is being typed the events are printed above the prompt, which
/// is then redrawn. Without a terminal the lines are read as a script, without events.
final class Shell {
  private let runner: Runner
  private let path: String
  /// The subscription, which reconnects by itself when the daemon comes back.
  private var events: Follower?
  /// The newest revision the events have told of: a new subscription resumes after it
  /// (`SUBSCRIBE FROM`), so the changes made while the shell was not connected still show.
  private var seenRevision: UInt64?
  /// What the daemon's history calls the lines' connections: `sectionctl-shell` (or `--name`),
  /// then the name a typed `CLIENT NAME` gave, for every line after it, as one connection
  /// would keep it (each line has a connection of its own).
  private var name: String
  /// SIGINT, read between keys on a terminal instead of ending the shell.
  private var interrupts: SignalDescriptor?

  init(runner: Runner) {
    self.runner = runner
    path = runner.socketPath()
    name = runner.invocation.name ?? "sectionctl-shell"
  }

  func run() throws(CommandLineError) -> ExitStatus {
    guard runner.environment.inputIsTerminal else { return try runScript() }
    // libedit reads and edits multibyte characters only in a UTF-8 locale.
    setlocale(LC_CTYPE, "")
    let history = Shell.historyPath(runner.environment) { runner.output.diagnose($0) }
    if let history {
      _ = history.withCString { read_history($0) }
    }
    stifle_history(1000)
    sectiond_edit_completion { Shell.completion($0, $1) }
    Shell.sectionRefs = { [runner] in
      guard let sections = try? runner.connect().perform(.list).sections else { return [] }
      return sections.map(\.id) + sections.map { String($0.index) }
    }
    interrupts = try? SignalDescriptor([.interrupt])
    let parentGroup = FileDescriptor.standardInput.takeForeground()
    defer { parentGroup.map(FileDescriptor.standardInput.giveForeground) }
    let readonly = runner.invocation.readonly ? " (read-only)" : ""
    runner.output.print(
      "sectionctl shell on \(path)\(readonly): 'help' lists commands, Ctrl-C cancels a line, Ctrl-D quits\n")
    connectEvents()
    defer { rl_callback_handler_remove() }
    while true {
      installLineHandler()
      guard let bytes = readLine() else {
        runner.output.print("\n")
        return .success
      }
      rl_callback_handler_remove()
      guard let line = text(of: bytes, named: "the line") else { continue }
      guard !line.allSatisfy({ $0 == " " || $0 == "\t" }) else { continue }
      add_history(line)
      if let history { _ = history.withCString { write_history($0) } }
      guard execute(line) else { return .success }
      if events == nil { connectEvents() }
    }
  }

  /// Shows the prompt on a fresh line and has libedit hand over the next whole line.
  private func installLineHandler() {
    rl_callback_handler_install(prompt) { line in
      Shell.typed = .some(line.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) })
      free(line)
    }
  }

  /// What libedit's line handler received: nil while a line is being typed, .some(nil) at
  /// the end of input.
  nonisolated(unsafe) private static var typed: [UInt8]??

  /// Feeds typed characters to libedit until it has a whole line (nil: Ctrl-D), showing the
  /// events that arrive meanwhile.
  private func readLine() -> [UInt8]? {
    let input = FileDescriptor.standardInput
    Shell.typed = nil
    while Shell.typed == nil {
      var watched: [(FileDescriptor, IOEvents)] = [(input, .readable)]
      if let interrupts { watched.append((interrupts.fd, .readable)) }
      if let events { watched.append((FileDescriptor(rawValue: events.descriptor), .readable)) }
      guard let ready = try? Poll.wait(watched, milliseconds: -1) else { return nil }
      if interrupts != nil, !ready[1].isEmpty { cancelLine() }
      if events != nil, !ready[ready.count - 1].isEmpty { showEvents() }
      if !ready[0].isEmpty { rl_callback_read_char() }
    }
    return Shell.typed!
  }

  /// Ctrl-C: the line typed so far goes, and a fresh prompt comes, as in bash and psql. The
  /// shell itself stays (under `sh -c`, dying of SIGINT would end the calling shell too).
  private func cancelLine() {
    guard (try? interrupts?.pending()) != nil else { return }
    runner.output.print("^C\n")
    rl_callback_handler_remove()
    installLineHandler()
  }

  private var prompt: String { "sectiond\(runner.invocation.readonly ? " (ro)" : "")> " }

  /// Lines from a pipe or a file, each run in turn. The status is that of the last line that
  /// failed (is-open's "closed" counts), 0 when none did: a script learns that something
  /// went wrong even when a later line succeeded.
  private func runScript() throws(CommandLineError) -> ExitStatus {
    let bytes: [UInt8]
    do {
      bytes = try FileDescriptor.standardInput.readAll(subject: "standard input")
    } catch {
      throw .usage("cannot read commands from standard input: \(error)")
    }
    var status = ExitStatus.success
    for (index, raw) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
      guard let line = text(of: raw, named: "line \(index + 1) of standard input") else {
        status = .usage
        continue
      }
      guard !line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) else { continue }
      var result = ExitStatus.success
      guard execute(line, status: &result) else { break }
      if result != .success { status = result }
    }
    return status
  }

  /// A typed or scripted line as text; nil, after saying so, when it is not UTF-8: sent on, its
  /// bytes would reach the daemon as U+FFFD, a different title or id than the one typed.
  private func text(of bytes: some Collection<UInt8>, named name: String) -> String? {
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    runner.output.diagnose(
      "\(name) is not valid UTF-8 (\(VisibleText.decode(bytes))); nothing was sent: type it in UTF-8, "
        + "or convert a script with iconv -f LATIN1 -t UTF-8")
    return nil
  }

  /// Runs one line; false when it asks to quit.
  @discardableResult
  private func execute(_ line: String) -> Bool {
    var status = ExitStatus.success
    return execute(line, status: &status)
  }

  private func execute(_ line: String, status: inout ExitStatus) -> Bool {
    let output = runner.output
    do throws(CommandLineError) {
      let words = try ShellWords.split(line)
      guard let first = words.first else { return true }
      if first == "quit" || first == "exit" { return false }
      if words == ["help"] {
        output.print(Shell.help)
        return true
      }
      if words == ["clear"] {
        // The screen is cleared on a terminal; a script has none.
        if runner.environment.outputIsTerminal { output.print("\u{1B}[H\u{1B}[2J") }
        return true
      }
      var invocation: Invocation
      if let letter = first.unicodeScalars.first, ("A"..."Z").contains(letter) {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        invocation = try ArgumentParser.parse(["send", "--", String(trimmed)])
      } else {
        invocation = try ArgumentParser.parse(words)
      }
      switch invocation.command {
      case .shell: throw .usage("already in the shell")
      case .watch:
        throw .usage("the shell prints changes as they come already; 'watch' is for the command line")
      default: break
      }
      // Every line talks to the daemon the shell found, as the shell does.
      if invocation.readonlySocket == nil && invocation.socket == nil {
        if runner.invocation.readonly {
          invocation.readonly = true
          invocation.readonlySocket = path
        } else {
          invocation.socket = path
        }
      }
      if runner.invocation.json { invocation.json = true }
      var each = Runner(invocation: invocation, environment: runner.environment, output: output)
      each.defaultName = name
      status = try each.run()
      if status == .success, case .send(let lines) = invocation.command,
        let named = Shell.clientName(in: lines)
      {
        name = named
      }
    } catch {
      if case .usage(let text) = error {
        output.diagnose(text + " ('help' lists the commands)")
      } else {
        output.diagnose(error.diagnostic)
      }
      status = error.exitStatus
    }
    return true
  }

  /// The name the last `CLIENT NAME <name>` among raw `lines` gives (the daemon's rule: one
  /// the daemon accepted, since the line succeeded).
  static func clientName(in lines: [String]) -> String? {
    lines.reversed().lazy.compactMap(SendLine.clientName).first
  }

  /// `help` in the shell: the shell first, then the commands it takes.
  static var help: String {
    """
    Type a sectionctl command without 'sectionctl' (list, open inbox, add news News), or a
    protocol line with its verb in upper case (LIST, OPEN 1), which is sent as it is and
    answered with the daemon's own lines ('HELP' lists the daemon's requests).
    Changes made anywhere show as '! ...' lines as they come. Up/Down and Ctrl-R recall
    earlier lines (the history is kept in $XDG_STATE_HOME/sectionctl/history); Tab
    completes commands, sections, modes; Ctrl-C drops the line; 'clear' clears the screen;
    'quit', 'exit' or Ctrl-D ends the shell. 'help COMMAND' explains a command.

    Commands:
    \(HelpText.commands)
    """
  }

  // MARK: Events

  /// Subscribes on a connection of its own, resuming after the last revision seen; without a
  /// daemon the shell still runs, and tries again after the next line.
  private func connectEvents() {
    events = try? Follower(path: path, following: .events(after: seenRevision))
  }

  /// Prints the events that have arrived, above the line being typed, and redraws it.
  private func showEvents() {
    guard let follower = events else { return }
    var text = ""
    for update in follower.take() {
      switch update {
      case .event(let event):
        text += TextRenderer.event(event)
        seenRevision = max(seenRevision ?? 0, event.revision ?? 0)
      case .subscribed(let state):
        // A snapshot after a gap: the daemon no longer keeps what was missed, so say where
        // things stand now.
        if seenRevision != nil { text += TextRenderer.event(.state(state)) }
        seenRevision = state.revision
      case .news(.lost):
        text += "sectiond closed the connection; the shell reconnects when it is back\n"
      case .ended:
        events = nil
        text += "sectiond closed the connection; the shell reconnects after the next line\n"
      case .state, .news, .current, .bye, .problem, .answered: break
      }
    }
    guard !text.isEmpty else { return }
    let style = Style(environment: runner.environment)
    let lines = text.split(separator: "\n").map { style.dim("! " + $0) + "\n" }.joined()
    runner.output.print("\r\u{1B}[K" + lines)
    rl_forced_update_display()
  }

  // MARK: History and completion

  nonisolated(unsafe) private static var matches: [String] = []

  /// `$XDG_STATE_HOME/sectionctl/history`, else `~/.local/state/sectionctl/history`, when it is
  /// safe to read and write; nil when there is no home, or after `refuse` was told why not.
  /// libedit opens the file with fopen, which follows symbolic links: root running the shell
  /// with another user's XDG_STATE_HOME (`sudo -E`) would write through a link that user
  /// planted. So the directory (made 0700: a history holds what was typed) and every one above
  /// it must be writable by no one but the user and root, by the rule socket directories follow
  /// (`FileSystem.privateDirectoryProblem`): then nobody else can plant a link or a file in it
  /// after this check. A file already there must be the user's own regular file with one name.
  static func historyPath(_ environment: Environment, refuse: (String) -> Void) -> String? {
    guard
      let base = environment.nonEmpty("XDG_STATE_HOME")
        ?? environment.nonEmpty("HOME").map({ $0 + "/.local/state" })
    else { return nil }
    let directory = base + "/sectionctl"
    let path = directory + "/history"
    try? FileSystem.makeDirectories(directory, permissions: 0o700)
    guard
      let problem = FileSystem.privateDirectoryProblem(directory, holding: "the shell's history")
        ?? historyFileProblem(path)
    else { return path }
    refuse("not keeping the shell's history: \(problem)")
    return nil
  }

  /// What is wrong with a history file already at `path`: it must be the user's own regular
  /// file with one name. Nil when it is, or when there is none yet.
  private static func historyFileProblem(_ path: String) -> String? {
    guard let file = try? FileSystem.status(path),
      file.isSymbolicLink || !file.isRegularFile || file.owner != geteuid() || file.linkCount != 1
    else { return nil }
    let what = file.isSymbolicLink ? "a symbolic link" : "not a regular file of yours with one name"
    return "\(path) is \(what): not following it; remove it, or set XDG_STATE_HOME to a directory of your own"
  }

  /// What Tab offers for the word being typed (`ShellCompletion`), one per call, as readline
  /// asks (`state` 0 starts a new completion). libedit frees the strings.
  private static func completion(_ text: UnsafePointer<CChar>?, _ state: Int32) -> UnsafeMutablePointer<
    CChar
  >? {
    if state == 0 {
      let word = text.map { String(cString: $0) } ?? ""
      var before = ""
      if let line = sectiond_edit_line() {
        let bytes = UnsafeBufferPointer(start: line, count: strlen(line)).map { UInt8(bitPattern: $0) }
        let end = max(0, min(Int(sectiond_edit_point()), bytes.count) - word.utf8.count)
        before = String(decoding: bytes[..<end], as: UTF8.self)
      }
      matches = ShellCompletion.candidates(for: word, after: before, sections: sectionRefs).reversed()
    }
    guard let next = matches.popLast() else { return nil }
    return strdup(next)
  }

  /// The ids and indices of the sections, asked of the shell's daemon at each Tab that wants
  /// a section (a list that changes under the shell is read as it is); none when it is away.
  nonisolated(unsafe) private static var sectionRefs: () -> [String] = { [] }
}

extension CommandSpec {
  /// `sectionctl shell`.
  static let shell = CommandSpec(
    usage: ["shell"],
    summary: "an interactive prompt with line editing and history, showing changes as they come",
    details: """
      A prompt that reads sectionctl commands (list, open 1, add id Title, help ...) or raw
      protocol lines (upper-case verbs: LIST, OPEN 1), with line editing and history (libedit:
      Up/Down, Ctrl-R; Tab completes commands, section ids, modes and item actions, each where
      it belongs); the history is kept in
      $XDG_STATE_HOME/sectionctl/history (~/.local/state/sectionctl/history). Changes made
      anywhere are printed as they come, between prompts. Ctrl-D or 'quit' ends it.
      'sectionctl' with no command starts it when standard input and output are a terminal.
      """,
    example: "sectionctl shell",
    check: { (options) throws(CommandLineError) in
      if options.json { throw .usage("--json does not apply to shell, which is for people") }
    },
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .shell)
      return .shell
    },
    run: { (runner) throws(CommandLineError) in try Shell(runner: runner).run() })
}
