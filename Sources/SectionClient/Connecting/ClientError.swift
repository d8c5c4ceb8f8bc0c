import Glibc
import Posix
import SectionShared

/// Everything that can stop a request, as a value a program switches on, with the message a
/// person reads (`message`; sectionctl maps each to its exit status, `ClientError+CommandLine`).
public enum ClientError: Error, Equatable {
  /// `connect` to the socket failed.
  case cannotConnect(path: String, errno: Errno)
  /// Neither the user's own daemon nor the system's answers (the paths tried, in order).
  case noDaemon(paths: [String])
  /// Something other than a socket is at the path (`kind`: "a regular file", "a directory", ...).
  case notASocket(path: String, kind: String)
  /// The daemon closed the connection before the reply was complete.
  case connectionLost(path: String)
  /// The daemon answered `ERR <code> <message>`.
  case daemon(code: String, message: String)
  /// The daemon sent a line that protocol 1 does not allow.
  case malformedReply(String)
  /// The socket's directory could be another user's (see `SocketDirectory`): nothing is sent.
  case untrustedSocket(String)
  /// The daemon answered `ERR BUSY`: it serves as many clients as `--max-clients` allows and
  /// closed this connection at once. Nothing was done; try again later.
  case busy(path: String)
  /// The daemon did not answer within the timeout (`seconds`).
  case timedOut(path: String, seconds: Double)
  /// The task waiting for a reply was cancelled (`AsyncClient`): the connection was closed, so
  /// that no later request gets the reply, and every request in flight on it failed with this.
  case cancelled(path: String)
  /// A line from the socket longer than `LineReader.maximumLineLength`.
  case lineTooLong(path: String)
  /// A reply whose data lines pass `ReplyAssembler.maximumReplyBytes`.
  case replyTooLarge(path: String)
  /// More events before a reply than `Client.maximumPendingEventBytes` holds.
  case tooManyEvents(path: String)
  /// A program asked the library for a request that cannot be sent as it is (an argument with
  /// a line break, a section reference with a space): nothing was sent.
  case invalidRequest(String)
  /// An argument a program gave the library breaks a rule the daemon holds it to (a client's
  /// name, a list's name, a count or position below 0): `argument` names it as the call does
  /// (`name`, `list`, `history(last:)`), `value` is what was given, `rule` what it may be.
  /// Nothing was sent.
  case invalidArgument(argument: String, value: String, rule: String)

  /// A word for scripts (`--json` errors): the daemon's code, or what went wrong here.
  public var code: String {
    switch self {
    case .invalidRequest, .invalidArgument: "USAGE"
    case .cannotConnect, .noDaemon, .notASocket, .connectionLost, .untrustedSocket, .timedOut: "UNAVAILABLE"
    case .cancelled: "CANCELLED"
    case .daemon(let code, _): code
    case .busy: "BUSY"
    case .malformedReply, .lineTooLong, .replyTooLarge, .tooManyEvents: "PROTOCOL"
    }
  }

  /// The words a message uses for what its reader can change, as they are named where the
  /// error surfaces: a program's arguments and environment (`message`), or sectionctl's options
  /// (which SectionCtl supplies). One text per error; only the remedies differ. Public, so that
  /// any command line built on the library words the fixes as its own options.
  public struct Remedies: Sendable {
    /// How to name another daemon's socket.
    public var otherSocket: String
    /// Where the socket's path came from, to check it.
    public var checkSocket: String
    /// How to connect to a socket of a shorter path.
    public var shorterSocket: String
    /// How to read and watch without the right to change.
    public var readonly: String
    /// How to wait longer.
    public var waitLonger: String
    /// Who could not read what the peer sent.
    public var reader: String
    /// How to see what the peer speaks.
    public var whatItSpeaks: String

    public init(
      otherSocket: String, checkSocket: String, shorterSocket: String, readonly: String, waitLonger: String,
      reader: String, whatItSpeaks: String
    ) {
      self.otherSocket = otherSocket
      self.checkSocket = checkSocket
      self.shorterSocket = shorterSocket
      self.readonly = readonly
      self.waitLonger = waitLonger
      self.reader = reader
      self.whatItSpeaks = whatItSpeaks
    }

    /// A program's: the library's arguments (`AsyncClient.connect`, `Client`) and the environment.
    public static let program = Remedies(
      otherSocket: "or name another daemon's control socket (the socket path, or SECTIOND_SOCKET)",
      checkSocket: "check the socket path given (or SECTIOND_SOCKET)",
      shorterSocket: "connect to a socket of a shorter path",
      readonly: "connect to the read-only socket (readonly: true) to read and watch",
      waitLonger: "give a longer timeout, or none",
      reader: "SectionClient", whatItSpeaks: "its VERSION reply (AsyncClient.version()) says what it speaks")
  }

  /// The diagnostic for a program: names the socket, the call's argument and the fix in the
  /// library's terms.
  public var message: String { message(.program) }

  /// The diagnostic with `remedies` as the fixes it names (sectionctl's are its options).
  public func message(_ remedies: Remedies) -> String {
    switch self {
    case .invalidRequest(let text):
      return text
    case .invalidArgument(let argument, let value, let rule):
      return "invalid \(argument) \"\(VisibleText.escape(value))\": \(rule); nothing was sent"
    case .cannotConnect(let path, let errno):
      return ClientError.connectMessage(path: path, errno: errno, remedies)
    case .noDaemon(let paths):
      return "no daemon is listening on "
        + paths.map { "\($0) (\(ClientError.startHint(for: $0)))" }.joined(separator: " nor on ")
        + "; \(remedies.otherSocket)"
    case .notASocket(let path, let kind):
      return "cannot connect to \(path): it is \(kind), not a socket; \(remedies.checkSocket)"
    case .cancelled(let path):
      return
        "a request to sectiond on \(path) was cancelled before its reply; the connection was closed "
        + "and the requests in flight on it given up (a change among them may or may not have been made)"
    case .connectionLost(let path):
      return
        "sectiond closed the connection on \(path) before answering; it may have stopped or be restarting"
    case .busy(let path):
      return
        "sectiond on \(path) is busy: it serves as many clients as it may (sectiond --max-clients), "
        + "and nothing was done; try again later"
    case .untrustedSocket(let problem):
      return "refusing to connect: \(problem)"
    case .timedOut(let path, let seconds):
      let shown = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
      return
        "sectiond on \(path) did not answer within \(shown) s; it may be hung or very busy "
        + "(\(remedies.waitLonger))"
    case .lineTooLong(let path):
      return
        "the daemon on \(path) sent a line longer than \(LineReader.maximumLineLength >> 20) MiB, which "
        + "sectiond does not send at its default limits (at most about 41 MB); is it sectiond?"
    case .replyTooLarge(let path):
      return
        "the daemon on \(path) sent a reply of more than \(ReplyAssembler.maximumReplyBytes >> 20) MiB, which "
        + "sectiond does not send at its default limits (at most about 35 MB); is it sectiond?"
    case .tooManyEvents(let path):
      return
        "the daemon on \(path) sent more than \(Client.maximumPendingEventBytes >> 20) MiB of events before "
        + "answering, which sectiond does not (at most about 1 MiB, or a !state in their place); is it sectiond?"
    case .daemon(let code, let message):
      return message.isEmpty ? "the daemon answered \(code)" : message
    case .malformedReply(let line):
      return
        "the daemon sent a line \(remedies.reader) cannot read: \"\(line)\"; is it sectiond speaking "
        + "protocol 1? (\(remedies.whatItSpeaks))"
    }
  }

  /// What `connect` failing with `errno` means at `path`. Connecting to anything that is not a
  /// socket is refused just like connecting to a socket nobody listens on, so the refusal names
  /// what is really there (through symbolic links, as `connect` follows them).
  package static func connectFailure(path: String, errno: Errno) -> ClientError {
    if errno == .connectionRefused, let status = try? FileSystem.status(path, followingLinks: true),
      !status.isSocket
    {
      return .notASocket(path: path, kind: kind(of: status.mode))
    }
    return .cannotConnect(path: path, errno: errno)
  }

  /// The file type in `mode`, as a person names it.
  package static func kind(of mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFREG: "a regular file"
    case S_IFDIR: "a directory"
    case S_IFIFO: "a FIFO"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    default: "something"
    }
  }

  /// How to start the daemon that owns `path`: the system's through systemctl, the user's
  /// through `systemctl --user` (or by hand), any other by hand with that socket.
  package static func startHint(for path: String) -> String {
    let parts = path.split(separator: "/").map(String.init)
    let name = parts.last ?? path
    // A named list's sockets are in sectiond/NAME/, made by the template sectiond@NAME.socket.
    let list =
      parts.count >= 3 && parts[parts.count - 3] == "sectiond"
      ? (try? ListName(validating: parts[parts.count - 2])) : nil
    let unit =
      (name == SocketNames.readonly ? "sectiond-readonly" : "sectiond") + (list.map { "@\($0)" } ?? "")
      + ".socket"
    if path.hasPrefix("/run/sectiond/") {
      return "the system's daemon: start it with 'sudo systemctl start \(unit)'"
    }
    let directory = "/sectiond/" + (list.map { "\($0)/" } ?? "")
    if path.hasSuffix(directory + name) && (name == SocketNames.control || name == SocketNames.readonly) {
      return "your own daemon: start it with 'systemctl --user start \(unit)', or run sectiond"
        + (list.map { " --list \($0)" } ?? "")
    }
    return "start one with 'sectiond --socket' naming its control socket"
  }

  /// Who may change state through the socket at `path`: the members of its group, named as it
  /// is (the system daemon's is `sectiond`; one started by hand has the group of whoever
  /// started it). Joining root's group is no advice to give: then it is root's alone.
  package static func groupHint(for path: String) -> String {
    let gid = (try? FileSystem.status(path, followingLinks: true))?.group
    let name = gid.flatMap { getgrgid($0) }.map { String(cString: $0.pointee.gr_name) } ?? gid.map { "\($0)" }
    guard let name else { return "changing state is for the socket's owner and group" }
    if gid == 0 { return "changing state through it is for root (the socket's group is \(name))" }
    return "changing state is for members of the socket's group \(name) "
      + "(sudo usermod -aG \(name) $USER, then log in again)"
  }

  private static func connectMessage(path: String, errno: Errno, _ remedies: Remedies) -> String {
    let start = startHint(for: path)
    let elsewhere = "; " + remedies.otherSocket
    switch errno {
    case .noEntry:
      return "no daemon is listening on \(path): there is no socket there (\(start))\(elsewhere)"
    case .connectionRefused:
      return
        "no daemon is listening on \(path): the socket is left over from a daemon that stopped "
        + "(\(start))\(elsewhere)"
    case .permissionDenied:
      return
        "permission denied connecting to \(path): \(groupHint(for: path)); \(remedies.readonly)"
    case .nameTooLong:
      return
        "the socket path \(path) is longer than \(UnixSocket.maximumPathLength) bytes; \(remedies.shorterSocket)"
    case .notDirectory:
      return
        "cannot connect to \(path): part of that path is not a directory; \(remedies.checkSocket)"
    default:
      return "cannot connect to \(path): \(errno)"
    }
  }
}

extension ClientName {
  /// Refuses, as the daemon would, a `name` it would refuse: the daemon answers an invalid
  /// `CLIENT NAME` with an error nobody reads (it goes with the first request) and records the
  /// process's name instead.
  static func check(_ name: String?) throws(ClientError) {
    guard let name, !isValid(name) else { return }
    throw .invalidArgument(argument: "name", value: name, rule: rule)
  }
}
