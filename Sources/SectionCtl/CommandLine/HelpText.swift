import SectionClient

/// The text of `sectionctl --help` and `sectionctl COMMAND --help`.
enum HelpText {
  /// Every command with its summary, one a line, aligned: for --help and the shell's help.
  static var commands: String {
    let width = Subcommand.allCases.map(\.rawValue.count).max()! + 2
    return Subcommand.allCases.map { command in
      "  " + command.rawValue + String(repeating: " ", count: width - command.rawValue.count)
        + command.summary + "\n"
    }.joined()
  }

  static func general() -> String {
    return """
      Usage: sectionctl [OPTIONS] [COMMAND [ARGUMENTS...]]

      Shows and changes which sections sectiond holds open, over its control socket.
      Without a command, sectionctl lists the sections (on a terminal: starts the shell).

      Commands:
      \(commands)
      Options (before or after the command):
      \(globalOptions)
      REF is a section's index (0, 1, ...) as 'sectionctl list' shows it, or its id.

      Exit status: 0 done, 1 the daemon answered with an error (printed on stderr),
      2 wrong command line, 3 the daemon cannot be reached, 5 the daemon is busy (--max-clients:
      try later), 6 the daemon's fleet cannot take changes now (etcd: no quorum or not
      reachable; reads work) (is-open: 1 closed, 4 no such section).

      Examples:
        sectionctl view
        sectionctl open fruit
        sectionctl --json list | jq -r '.sections[] | select(.open) | .id'

      See 'sectionctl help COMMAND' and sectionctl(1).

      """
  }

  /// The options that apply to every command, from the table (`CommandOption`), with their help
  /// beside them, or under them when the spellings are too long.
  static var globalOptions: String {
    let column = 17
    return CommandOption.allCases.filter { $0.scope == nil }.map { option in
      let label =
        "  " + option.spellings.joined(separator: ", ") + (option.value.map { " " + $0.placeholder } ?? "")
      let indent = String(repeating: " ", count: column)
      let lines = help(option).split(separator: "\n").map { indent + $0 + "\n" }
      guard label.count < column else { return label + "\n" + lines.joined() }
      return label + lines.joined().dropFirst(label.count)
    }.joined()
  }

  /// What --help says of a global option.
  private static func help(_ option: CommandOption) -> String {
    switch option {
    case .socket:
      """
      the daemon's control socket; default $SECTIOND_SOCKET, else
      \(SocketLocation.systemPath) for root, else your own daemon's
      $XDG_RUNTIME_DIR/sectiond/control.sock when it runs (or
      /tmp/sectiond-UID/control.sock without XDG_RUNTIME_DIR), else the
      system daemon's; 'sectionctl status' says which
      """
    case .list:
      """
      the list NAME, one of several on the machine (sectiond@NAME): the
      same sockets as above in a directory NAME beside them (beside
      $SECTIOND_SOCKET's too); default $SECTIOND_LIST, else the unnamed
      list; 'sectionctl lists' shows them; --socket wins over it
      """
    case .readonly:
      """
      use the read-only socket (\(SocketLocation.readonlyName) beside control.sock,
      NAME.readonly.sock beside NAME.sock): reading and watching only
      """
    case .readonlySocket: "use the read-only socket at PATH (implies --readonly; not with --socket)"
    case .json: "print JSON for scripts (for watch, one object per line; errors too)"
    case .timeout:
      """
      give up (exit 3) when the daemon has not answered within SECONDS;
      default \(Int(Invocation.defaultTimeout)), 0 waits for ever; not for watch, ui and pipe
      """
    case .name:
      """
      what the daemon's history (sectionctl log) calls this run, to tell
      scripts apart: 1 to 64 of A-Z a-z 0-9 . _ : @ -; default sectionctl
      """
    case .help: "show this help, or a command's help"
    case .version: "show sectionctl's version"
    default: option.brief
    }
  }

  static func command(_ command: Subcommand) -> String {
    let usage = command.usage.enumerated().map { index, line in
      (index == 0 ? "Usage: " : "       ") + "sectionctl " + line + "\n"
    }.joined()
    return """
      \(usage)
      \(capitalized(command.summary)).

      \(command.details)

      Example:
        \(command.example)

      """
  }

  private static func capitalized(_ text: String) -> String {
    text.prefix(1).uppercased() + text.dropFirst()
  }
}
