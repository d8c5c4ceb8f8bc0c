import SectionClient

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
  /// `--timeout`: how many seconds a one-shot command waits for the daemon in all; 0, for ever.
  var timeout = Invocation.defaultTimeout

  /// Longer than the daemon's WatchdogSec=20s, so that a daemon systemd still counts as alive
  /// is waited for, and what systemctl waits for a D-Bus reply; a hung one is given up on.
  static let defaultTimeout = 25.0
  /// Whether a command was named: without one, sectionctl lists, or on a terminal starts `shell`.
  var commandGiven = true
  /// `-l NAME`, `--list NAME`, else `$SECTIOND_LIST`: the named list to talk to (see
  /// `SocketLocation`); nil, the unnamed list.
  var list: ListName? = nil
  /// `pipe --list-from-query`: the list is the one `$QUERY_STRING` names (websocketd).
  var listFromQuery = false
  /// `--name NAME`: what the daemon's history calls this run's connections (`CLIENT NAME`),
  /// so that scripts can be told apart; nil, each command's own (`sectionctl`, `sectionctl-ui`...).
  var name: String? = nil
}
