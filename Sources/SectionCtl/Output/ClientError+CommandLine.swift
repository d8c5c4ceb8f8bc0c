import SectionClient

extension ClientError.Remedies {
  /// sectionctl's: its options, as `--help` names them.
  static let commandLine = ClientError.Remedies(
    otherSocket: "or point at another daemon with --socket (-s) PATH or SECTIOND_SOCKET",
    checkSocket: "check --socket, --readonly-socket or SECTIOND_SOCKET",
    shorterSocket: "use a shorter --socket",
    readonly: "use --readonly (-r) to read and watch",
    waitLonger: "wait longer with --timeout SECONDS, 0 for no limit",
    reader: "sectionctl", whatItSpeaks: "'sectionctl send VERSION' shows what it speaks")
}

extension ClientError {
  /// The exit status a script reads for the error: who is to blame (`ExitStatus`).
  var exitStatus: ExitStatus {
    switch self {
    case .invalidRequest, .invalidArgument: .usage
    case .cannotConnect, .noDaemon, .notASocket, .connectionLost, .untrustedSocket, .timedOut, .cancelled:
      .unavailable
    case .daemon("UNAVAILABLE", _): .fleetUnavailable
    case .daemon, .malformedReply, .lineTooLong, .replyTooLarge, .tooManyEvents: .daemonError
    case .busy: .busy
    }
  }

  /// The error as sectionctl --readonly reports it: the daemon's READONLY refusal names the
  /// socket, and the fix on the command line is to drop the option.
  var onReadonlySocket: ClientError {
    guard case .daemon("READONLY", let message) = self else { return self }
    let verb = message.split(separator: " ").first.map(String.init) ?? "this"
    return .daemon(
      code: "READONLY", message: "\(verb) changes state: drop --readonly (-r) to use the control socket")
  }

  /// The diagnostic as sectionctl shows it, without the `sectionctl: ` prefix: the library's
  /// message with sectionctl's options as the fixes (`message` names a program's).
  var diagnostic: String { message(.commandLine) }
}
