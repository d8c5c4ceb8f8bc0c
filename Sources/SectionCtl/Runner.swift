import Posix
import SectionCore

/// Carries out one command against the daemon and prints the result: the I/O around the pure parsers and renderers.
struct Runner {
  let invocation: Invocation
  let environment: Environment
  let output: Output

  private var style: Style { Style(environment: environment) }

  func run() throws(ClientError) -> ExitStatus {
    switch invocation.command {
    case .help(let topic):
      output.print(topic.map(HelpText.command) ?? HelpText.general())
    case .version:
      output.print(
        "sectionctl \(SectionService.daemonVersion) (protocol \(SectionService.protocolVersion))\n")
    case .list:
      let reply = try connect().request("LIST").succeeded()
      show(
        text: TextRenderer.table(reply.sections, style: style),
        json: JSONRenderer.sections(reply.sections, revision: reply.revision))
    case .view:
      let reply = try connect().request("VIEW").succeeded()
      show(
        text: TextRenderer.accordion(reply.sections, items: reply.items, style: style),
        json: JSONRenderer.view(reply.sections, items: reply.items, revision: reply.revision))
    case .items(let ref):
      let reply = try connect().request("ITEMS \(ref)").succeeded()
      show(
        text: TextRenderer.items(reply.items), json: JSONRenderer.items(reply.items, revision: reply.revision)
      )
    case .change(let action, let refs):
      return try change(refs.map { "\(action.verb) \($0)" })
    case .changeAll(let action):
      return try change(["\(action.verb) ALL"])
    case .mode(let wanted):
      let reply = try connect().request(wanted.map { "MODE \($0.rawValue)" } ?? "MODE").succeeded()
      guard let mode = reply.mode else { throw .malformedReply("OK without a mode line after MODE") }
      show(text: mode.rawValue + "\n", json: JSONRenderer.mode(mode, revision: reply.revision))
    case .status:
      let status = try daemonStatus()
      show(text: TextRenderer.status(status), json: JSONRenderer.status(status))
    case .reload:
      let reply = try connect().request("RELOAD").succeeded()
      if invocation.json { output.print(JSONRenderer.revision(reply.revision)) }
    case .ping:
      let client = try connect()
      let start = monotonicMicroseconds()
      _ = try client.request("PING").succeeded()
      let milliseconds = Double(monotonicMicroseconds() - start) / 1000
      let rounded = (milliseconds * 100).rounded() / 100
      show(
        text: "sectiond on \(client.path) answered in \(rounded) ms\n",
        json: JSONRenderer.ping(socket: client.path, milliseconds: rounded))
    case .watch(let count, let view):
      let watcher = Watcher(
        path: socketPath(), json: invocation.json, view: view, count: count,
        style: style, clearsScreen: environment.outputIsTerminal && !invocation.json, output: output)
      return try watcher.run()
    case .ui:
      return try TerminalUI(
        path: socketPath(), readonly: invocation.readonly, style: style, environment: environment
      ).run()
    case .send(let lines):
      return try send(lines)
    case .pipe:
      return try Pipe(path: socketPath(), outputIsTerminal: environment.outputIsTerminal).run()
    case .edit(let line):
      showRevision(try connect().request(line).succeeded())
    case .batch:
      let lines = try standardInputLines().filter { !$0.allSatisfy { $0 == " " || $0 == "\t" } }
      showRevision(try connect().request(batch: lines).succeeded())
    }
    return .success
  }

  /// What an edit prints: nothing, or with --json its revision.
  private func showRevision(_ reply: Reply) {
    if invocation.json { output.print(JSONRenderer.revision(reply.revision)) }
  }

  /// The lines of standard input, for `batch`.
  private func standardInputLines() throws(ClientError) -> [String] {
    let bytes: [UInt8]
    do {
      bytes = try FileDescriptor.standardInput.readAll(subject: "standard input")
    } catch {
      throw .usage("cannot read the requests from standard input: \(error)")
    }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
      .map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) }
  }

  private func socketPath() -> String {
    SocketLocation.resolve(
      explicit: invocation.socket, readonly: invocation.readonly,
      explicitReadonly: invocation.readonlySocket, environment: environment)
  }

  private func connect() throws(ClientError) -> Client {
    try Client(path: socketPath())
  }

  private func show(text: String, json: JSON) {
    if invocation.json { output.print(json) } else { output.print(text) }
  }

  /// Sends every change at once, then LIST, in one round trip; each change the daemon refuses is
  /// reported, the rest still happen. The sections shown are read from that LIST, as they are
  /// after the last change: in exclusive mode a later OPEN closes a section an earlier one opened.
  private func change(_ requests: [String]) throws(ClientError) -> ExitStatus {
    let replies = try connect().request(requests + ["LIST"])
    var changed: [Int] = []
    var succeeded = false
    var status = ExitStatus.success
    for reply in replies.dropLast() {
      do {
        changed += try reply.succeeded().sections.map(\.index)
        succeeded = true
      } catch {
        output.diagnose(error.message)
        status = error.exitStatus
      }
    }
    if succeeded {
      let list = try replies[replies.count - 1].succeeded()
      let final = changed.compactMap { index in list.sections.first { $0.index == index } }
      show(
        text: TextRenderer.changed(final, style: style),
        json: JSONRenderer.sections(final, revision: list.revision))
    }
    return status
  }

  /// VERSION, MODE and LIST in one round trip.
  private func daemonStatus() throws(ClientError) -> DaemonStatus {
    let client = try connect()
    let replies = try client.request(["VERSION", "MODE", "LIST"])
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
      revision: list.revision ?? modeReply.revision ?? 0, mode: mode, sections: list.sections)
  }

  /// Raw lines, one request at a time so that even a long list never fills the socket both ways.
  private func send(_ lines: [String]) throws(ClientError) -> ExitStatus {
    let connection = try Connection(path: socketPath())
    var status = ExitStatus.success
    for line in lines {
      try connection.send([line])
      while true {
        guard let reply = connection.readLine() else { throw .connectionLost(path: connection.path) }
        output.print(reply + "\n")
        if ProtocolLine.isStatus(reply) {
          if reply.hasPrefix("ERR ") { status = .daemonError }
          break
        }
      }
    }
    return status
  }
}
