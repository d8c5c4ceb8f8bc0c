import Posix
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
  var diagnostic: String { denial.map(ClientError.deniedMessage) ?? message(.commandLine) }

  /// What `ERR DENIED <needs> <has> <message>` says: the level the request needs, the level
  /// the connection has, and the daemon's words up to their first `;` (what was refused).
  var denial: (needs: AccessLevel, has: AccessLevel, what: Substring)? {
    guard case .daemon("DENIED", let message) = self else { return nil }
    let words = message.split(separator: " ", maxSplits: 2)
    guard words.count == 3, let needs = AccessLevel(rawValue: String(words[0])),
      let has = AccessLevel(rawValue: String(words[1]))
    else { return nil }
    return (needs, has, words[2].prefix { $0 != ";" })
  }

  /// A refusal above the connection's level, with the level missing and how an administrator
  /// grants it: a rule for this user in the daemon's access rules, then a reload.
  static func deniedMessage(_ denial: (needs: AccessLevel, has: AccessLevel, what: Substring)) -> String {
    let user = ProcessInfo.userName(of: ProcessInfo.userID) ?? String(ProcessInfo.userID)
    return
      "\(denial.what); nothing was changed. This connection may \(denial.has.rawValue), not \(denial.needs.rawValue): an administrator grants it with the line \"user \(user) \(denial.needs.rawValue)\" (or a group of yours) in sectiond's access rules, access.conf beside its config (/etc/sectiond/access.conf for the system's daemon; sectiond(8), ACCESS), then sectionctl reload"
  }
}
