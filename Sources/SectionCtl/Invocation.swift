/// A parsed command line: the command and the options that apply to every command.
struct Invocation: Equatable, Sendable {
  var command: Command
  /// `--socket PATH`; nil means the default (see `SocketLocation`).
  var socket: String? = nil
  /// `--readonly`: talk to the read-only socket, beside the control socket unless `readonlySocket`.
  var readonly = false
  /// `--readonly-socket PATH`: the read-only socket, wherever it is (implies `readonly`).
  var readonlySocket: String? = nil
  /// `--json`: machine-readable output.
  var json = false
  /// Whether a command was named: without one, sectionctl lists, or on a terminal starts `shell`.
  var commandGiven = true
}
