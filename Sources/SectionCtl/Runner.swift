import Posix
import SectionClient

/// Carries out one command against the daemon and prints the result: the I/O around the pure parsers and renderers.
struct Runner {
  let invocation: Invocation
  let environment: Environment
  let output: Output

  var style: Style { Style(environment: environment) }

  /// Runs the command: its file's `CommandSpec.run`.
  func run() throws(CommandLineError) -> ExitStatus {
    try invocation.command.subcommand.spec.run(self)
  }

  /// `body`, its library errors as sectionctl's: for the commands that only talk to the daemon.
  func lifting(_ body: () throws(ClientError) -> ExitStatus) throws(CommandLineError) -> ExitStatus {
    try CommandLineError.lifting(body)
  }

  /// What an edit prints: its revision (`revision 7`; with --json `{"revision"}`), so that
  /// every change says what it did, as open and reload do.
  func showRevision(_ reply: Reply) {
    show(
      text: "revision \(reply.revision.map(String.init) ?? "-")\n",
      json: JSONRenderer.revision(reply.revision))
  }

  private var candidates: [SocketLocation.Candidate] {
    SocketLocation.candidates(
      explicit: invocation.socket, readonly: invocation.readonly,
      explicitReadonly: invocation.readonlySocket, list: invocation.list, environment: environment)
  }

  /// The socket of the daemon to talk to now (see `SocketLocation`); one that is named is
  /// not tried first, its connection says what is wrong.
  func socket() throws(ClientError) -> SocketLocation.Candidate {
    let candidates = candidates
    if candidates.count == 1 { return candidates[0] }
    return try SocketLocation.choose(candidates, probe: SocketLocation.probe)
  }

  /// `socketPath()` for a command that only reads and waits (watch): a control socket the
  /// user may not connect to gives way to the read-only socket beside it, as it does for
  /// list and status (`connectWithKind`).
  func readingPath() -> String {
    let path = socketPath()
    guard !invocation.readonly, SocketLocation.probe(path) == .permissionDenied else { return path }
    return SocketNames.readonlyPath(forControl: path)
  }

  /// The user named the socket (`--socket`, `--readonly-socket`, `SECTIOND_SOCKET`).
  var socketIsNamed: Bool { candidates.first?.kind == .given }

  /// For watch, ui and shell, which wait for a daemon that is not there yet.
  func socketPath() -> String {
    SocketLocation.chooseForWaiting(candidates, probe: SocketLocation.probe).path
  }

  func connect() throws(ClientError) -> Client {
    try connectWithKind().client
  }

  /// A connection to the daemon, and whose it is. A command that only reads, refused the
  /// control socket (a user outside the daemon's group), reads through the read-only socket
  /// of the same daemon instead, as `--readonly` would: `sectionctl status` works for anyone.
  private func connectWithKind() throws(ClientError) -> (client: Client, kind: SocketLocation.Kind) {
    do {
      let socket = try socket()
      return (try Client(path: socket.path, timeout: timeout, name: clientName), socket.kind)
    } catch .cannotConnect(let path, .permissionDenied)
      where invocation.command.onlyReads && !invocation.readonly
    {
      let viewer = SocketNames.readonlyPath(forControl: path)
      guard let client = try? Client(path: viewer, timeout: timeout) else {
        throw .cannotConnect(path: path, errno: .permissionDenied)
      }
      return (client, candidates.first { $0.path == path }?.kind ?? .given)
    }
  }

  /// What the daemon's history calls this process's connections (`CLIENT NAME`): `--name`,
  /// else the command's own (`defaultName`).
  var clientName: String { invocation.name ?? defaultName }
  /// The name without `--name`: `sectionctl`, and the shell's for its lines.
  var defaultName = "sectionctl"

  /// `--timeout` in seconds; nil for no limit.
  var timeout: Double? { invocation.timeout > 0 ? invocation.timeout : nil }

  func show(text: String, json: JSON) {
    if invocation.json { output.print(json) } else { output.print(text) }
  }

  /// VERSION, MODE, LIST and STATUS in one round trip. A daemon without STATUS (older than
  /// this sectionctl) answers it ERR UNKNOWN: its facts are then left out.
  func daemonStatus() throws(ClientError) -> DaemonStatus {
    let (client, kind) = try connectWithKind()
    let replies = try client.replies(to: [
      Request<DaemonVersion>.version.asReply, Request<Mode>.mode.asReply, Request<Listing>.list.asReply,
      Request<[String: String]>.status.asReply,
    ])
    let version = try replies[0].succeeded()
    let modeReply = try replies[1].succeeded()
    let list = try replies[2].succeeded()
    guard case .version(let daemonVersion, let protocolVersion)? = version.data.first,
      let mode = modeReply.mode
    else {
      throw .malformedReply("VERSION or MODE answered without its data line")
    }
    return DaemonStatus(
      daemonVersion: daemonVersion, protocolVersion: protocolVersion, socket: client.path,
      revision: list.revision ?? modeReply.revision ?? 0, mode: mode, sections: list.sections,
      kind: kind, facts: (try? replies[3].succeeded())?.facts ?? [:])
  }
}

extension Client {
  /// The replies to `requests`, sent at once (`perform(each:)`), ERR or not; the error of a
  /// request that could not be sent as it is (the others were).
  func replies(to requests: [Request<Reply>]) throws(ClientError) -> [Reply] {
    try perform(each: requests).map { outcome throws(ClientError) in try outcome.get() }
  }
}
