import Posix
import SectionShared

/// Where the daemon's socket is: the one named (`--socket`, `$SECTIOND_SOCKET`), else for root
/// the system daemon's, else the user's own daemon if it runs and the system daemon if not.
/// A list's name (`-l NAME`, `$SECTIOND_LIST`) looks the same way in the directory NAME of each.
/// Public, so that a program that names sockets itself (a command line of its own, a viewer
/// of every list) finds the daemon exactly as sectionctl and `AsyncClient.connect` do.
public enum SocketLocation {
  public static let systemDirectory = "/run/sectiond"
  public static let systemPath = systemDirectory + "/" + SocketNames.control
  public static let readonlyName = SocketNames.readonly

  /// Whose daemon a socket belongs to: what `status` says, and what hint a failure gives.
  public enum Kind: String, Equatable, Sendable {
    /// Named with --socket, --readonly-socket or SECTIOND_SOCKET.
    case given
    /// The user's own daemon (the per-user service, or sectiond started by hand).
    case user
    /// The machine's daemon (the system service or the Debian package).
    case system
  }

  /// A socket to try, and whose daemon's it would be.
  public struct Candidate: Equatable, Sendable {
    public let path: String
    public let kind: Kind
  }

  /// The first candidate, without trying any: the socket sectionctl looks at first.
  package static func resolve(
    explicit: String?, readonly: Bool, explicitReadonly: String? = nil, list: ListName? = nil,
    environment: Environment
  ) -> String {
    candidates(
      explicit: explicit, readonly: readonly, explicitReadonly: explicitReadonly, list: list,
      environment: environment)[0]
      .path
  }

  /// The list to talk to: `-l NAME` (`explicit`), else `$SECTIOND_LIST`; nil: the unnamed list.
  /// A name that breaks the rule is refused here, before anything is sent.
  public static func list(explicit: ListName?, environment: Environment) throws(ListName.Invalid)
    -> ListName?
  {
    if let explicit { return explicit }
    guard let name = environment.nonEmpty("SECTIOND_LIST") else { return nil }
    return try ListName(validating: name)
  }

  /// For the web page (`pipe --list-from-query`): the socket of the list that the query
  /// string (`list=NAME`, as websocketd passes the page's `?list=NAME`) names, the socket of
  /// `path`'s name in the directory NAME beside it, where `sectiond --list NAME` and
  /// `sectiond@NAME` put it; `path` itself when the query names none. A name that breaks the
  /// rule is refused: it came from a browser.
  public static func fromQuery(_ query: String?, beside path: String) throws(ListName.Invalid) -> String {
    let fields = (query ?? "").split(separator: "&").map { $0.split(separator: "=", maxSplits: 1) }
    guard let field = fields.first(where: { $0.first == "list" }) else { return path }
    let value = field.count == 2 ? String(field[1]) : ""
    return SocketNames.path(of: try ListName(validating: value), beside: path)
  }

  /// The directory of the socket `$SECTIOND_SOCKET` names, and that socket's file name: the
  /// unnamed list of a family of its own (`make run`'s `.run/`), whose named lists are in the
  /// directories NAME beside it (`SocketNames.path(of:beside:)`). `sectionctl lists` looks
  /// there first.
  public static func givenDirectory(environment: Environment) -> (path: String, file: String)? {
    guard let socket = environment.nonEmpty("SECTIOND_SOCKET") else { return nil }
    let file = socket.split(separator: "/").last.map(String.init) ?? socket
    return (directoryName(of: socket), file)
  }

  /// The directories holding sectiond's sockets, the user's own first, the system's last
  /// (for root, the system's only): in each, the unnamed list's sockets and a directory per
  /// named list. `sectionctl lists` looks through them.
  public static func directories(environment: Environment) -> [(path: String, kind: Kind)] {
    if environment.userID == 0 { return [(systemDirectory, .system)] }
    let runtime = environment.nonEmpty("XDG_RUNTIME_DIR").map { $0 + "/sectiond" }
    return [(runtime ?? "/tmp/sectiond-\(environment.userID)", .user), (systemDirectory, .system)]
  }

  /// The user's own daemons' directory (the first of `directories`); nil for root, who has none.
  /// Its sockets are trusted as the user's own only while it is theirs (`Connection`).
  public static func ownDirectory(environment: Environment) -> String? {
    directories(environment: environment).first { $0.kind == .user }?.path
  }

  /// The sockets to try, in order: one when it is named or for root; for another user, their
  /// own (`$XDG_RUNTIME_DIR/sectiond`, or `/tmp/sectiond-UID` as the daemon does without
  /// one), then the system's. With `readonly`, the read-only socket of each (`--readonly-socket`
  /// if given), named after its control socket as the daemon names it (`SocketNames`).
  /// With a `list`, the sockets in the directory of its name in each (`sectiond --list`); with
  /// `$SECTIOND_SOCKET` too, the one socket of that list beside it (`SocketNames.path`), as
  /// `sectiond --list` puts it: the variable names the family, the list one of its members.
  /// `--socket` names one socket: a list given with it is not used (`Invocation` warns).
  public static func candidates(
    explicit: String?, readonly: Bool, explicitReadonly: String? = nil, list: ListName? = nil,
    environment: Environment
  ) -> [Candidate] {
    if readonly, let explicitReadonly { return [Candidate(path: explicitReadonly, kind: .given)] }
    func socket(_ control: String, _ kind: Kind) -> Candidate {
      Candidate(path: readonly ? SocketNames.readonlyPath(forControl: control) : control, kind: kind)
    }
    if let explicit { return [socket(explicit, .given)] }
    if let fromEnvironment = environment.nonEmpty("SECTIOND_SOCKET") {
      return [
        socket(list.map { SocketNames.path(of: $0, beside: fromEnvironment) } ?? fromEnvironment, .given)
      ]
    }
    let named = list.map { "/\($0)" } ?? ""
    return directories(environment: environment).map {
      socket("\($0.path)\(named)/\(SocketNames.control)", $0.kind)
    }
  }

  /// The first candidate whose daemon accepts a connection (`probe` returns nil when it does,
  /// else the errno). When none does: one candidate's failure as it is; with a user and a
  /// system socket, a failure that is not "nobody there" (permission denied on the system's)
  /// is the one reported, else both are named with how to start each.
  public static func choose(_ candidates: [Candidate], probe: (String) -> Errno?) throws(ClientError)
    -> Candidate
  {
    var failures: [(Candidate, Errno)] = []
    for candidate in candidates {
      guard let errno = probe(candidate.path) else { return candidate }
      failures.append((candidate, errno))
    }
    let absent: [Errno] = [.noEntry, .connectionRefused]
    if failures.count > 1, let (candidate, errno) = failures.first(where: { !absent.contains($0.1) }) {
      throw ClientError.connectFailure(path: candidate.path, errno: errno)
    }
    if failures.count > 1 { throw ClientError.noDaemon(paths: failures.map(\.0.path)) }
    throw ClientError.connectFailure(path: failures[0].0.path, errno: failures[0].1)
  }

  /// The socket to use now: the one candidate when there is one (its connection says what is
  /// wrong), else the first whose daemon answers (`choose`).
  public static func find(_ candidates: [Candidate]) throws(ClientError) -> Candidate {
    if candidates.count == 1 { return candidates[0] }
    return try choose(candidates, probe: probe)
  }

  /// For commands that wait for a daemon to come (watch, ui): the one that answers now, else the
  /// first whose socket file exists, else the first.
  public static func chooseForWaiting(_ candidates: [Candidate], probe: (String) -> Errno?) -> Candidate {
    if let running = candidates.first(where: { probe($0.path) == nil }) { return running }
    return candidates.first { FileSystem.exists($0.path) } ?? candidates[0]
  }

  /// Connects and closes: nil when a daemon accepted, else why not.
  /// A socket in a directory another user could write, or in a directory of the user's own
  /// daemons that is not theirs, is not connected to: it counts as the one to use, so that the
  /// connection that follows refuses it and says why (see `Connection`).
  public static func probe(_ path: String) -> Errno? {
    if SocketDirectory.problem(socket: path) ?? Connection.ownDirectoryProblem(socket: path) != nil {
      return nil
    }
    do {
      try UnixSocket.connect(path: path).close()
      return nil
    } catch let error as PosixError {
      return error.errno
    } catch {
      return Errno(0)
    }
  }
}
