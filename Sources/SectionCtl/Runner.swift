import Posix
import SectionClient

/// Carries out one command against the daemon and prints the result: the I/O around the pure parsers and renderers.
struct Runner {
  let invocation: Invocation
  let environment: Environment
  let output: Output

  private var style: Style { Style(environment: environment) }

  /// Runs the command. Most fail only as the library does (`perform`); these can also fail as
  /// only a command line does (a terminal, a line typed, standard input, a page's query).
  func run() throws(CommandLineError) -> ExitStatus {
    switch invocation.command {
    case .shell:
      return try Shell(runner: self).run()
    case .list where !invocation.commandGiven && environment.inputIsTerminal && environment.outputIsTerminal:
      return try Shell(runner: self).run()
    case .ui:
      // The connection's level, so that the ui offers only what it may from the first key: a
      // daemon that does not say (or the read-only socket) leaves it to the first refusal.
      let level =
        invocation.readonly
        ? nil
        : (try? connect().perform(Request<[String: String]>.status))?["access"].flatMap(AccessLevel.init)
      return try TerminalUI(
        path: socketPath(), name: invocation.name ?? "sectionctl-ui", readonly: invocation.readonly,
        level: level, style: style, environment: environment
      ).run()
    case .batch:
      let lines = try BatchInput.lines(try standardInput())
      try CommandLineError.lifting { () throws(ClientError) in
        showRevision(try connect().request(batch: lines).succeeded())
      }
    case .reloadFresh(let force):
      if !force,
        let config = try CommandLineError.lifting({ () throws(ClientError) in
          try daemonStatus().facts["config"]
        }), config == "-"
      {
        throw .usage(
          "the daemon on \(socketPath()) has no config file: it serves its built-in demo set, which "
            + "reload --fresh would put in place of the list, dropping every section clients added. "
            + "Add --force to do that; to keep the list, export it into a file and start sectiond "
            + "with --config FILE")
      }
      try CommandLineError.lifting { () throws(ClientError) in try reload(fresh: true) }
    case .pipe:
      let path: String
      do {
        path =
          invocation.listFromQuery
          ? try SocketLocation.fromQuery(environment.nonEmpty("QUERY_STRING"), beside: socketPath())
          : socketPath()
      } catch {
        throw .usage("the page's ?list=: \(error)")
      }
      // Under websocketd, the page's user is the one behind each change.
      let name =
        invocation.name ?? environment.nonEmpty("REMOTE_ADDR").map { "web:\($0)" } ?? "sectionctl-pipe"
      let pipe = Pipe(
        path: path, outputIsTerminal: environment.outputIsTerminal,
        name: String(decoding: ClientName.asName(Array(name.utf8)), as: UTF8.self))
      return try CommandLineError.lifting { () throws(ClientError) in try pipe.run() }
    default:
      return try CommandLineError.lifting { () throws(ClientError) in try perform() }
    }
    return .success
  }

  /// The commands that only talk to the daemon (`run` has the others).
  private func perform() throws(ClientError) -> ExitStatus {
    switch invocation.command {
    case .help(let topic):
      output.print(topic.map(HelpText.command) ?? HelpText.general())
    case .version:
      output.print(
        "sectionctl \(Release.daemonVersion) (protocol \(Release.protocolVersion))\n")
    case .list:
      let reply = try connect().perform(Request<Listing>.list.asReply).succeeded()
      show(
        text: TextRenderer.table(reply.sections, style: style),
        json: JSONRenderer.sections(reply.sections, revision: reply.revision))
    case .view:
      let reply = try connect().perform(Request<Listing>.view.asReply).succeeded()
      show(
        text: TextRenderer.accordion(reply.sections, items: reply.items, style: style),
        json: JSONRenderer.view(reply.sections, items: reply.items, revision: reply.revision))
    case .items(let ref):
      let reply = try connect().perform(Request<[ListedItem]>.items(ref).asReply).succeeded()
      show(
        text: TextRenderer.items(reply.items), json: JSONRenderer.items(reply.items, revision: reply.revision)
      )
    case .change(let action, let refs):
      return try change(refs.map { .change(action, $0) })
    case .changeAll(let action):
      try changeAll(action)
    case .mode(let wanted):
      let request = wanted.map { Request<UInt64>.setMode($0).asReply } ?? Request<Mode>.mode.asReply
      let reply = try connect().perform(request).succeeded()
      // Either way the reply's mode line says the mode now, read as MODE's reply is.
      let mode = try Request<Mode>.mode.value(from: [reply])
      show(text: mode.rawValue + "\n", json: JSONRenderer.mode(mode, revision: reply.revision))
    case .lists:
      return try Lists(runner: self).run()
    case .status:
      let status = try daemonStatus()
      show(text: TextRenderer.status(status), json: JSONRenderer.status(status))
    case .reload:
      try reload(fresh: false)
    case .ping:
      let client = try connect()
      let start = monotonicMicroseconds()
      try client.perform(.ping)
      let milliseconds = Double(monotonicMicroseconds() - start) / 1000
      let rounded = (milliseconds * 100).rounded() / 100
      show(
        text: "sectiond on \(client.path) answered in \(rounded) ms\n",
        json: JSONRenderer.ping(socket: client.path, milliseconds: rounded))
    case .watch(let count, let view, let from):
      let watcher = Watcher(
        path: readingPath(), name: clientName, from: from, json: invocation.json, view: view, count: count,
        style: style, clearsScreen: environment.outputIsTerminal && !invocation.json, output: output)
      return try watcher.run()
    case .log(let request):
      return try HistoryLog(runner: self, request: request).run()
    case .send(let lines):
      return try send(lines)
    case .edit(let edit):
      showRevision(try connect().perform(edit.request.asReply).succeeded())
    case .isOpen(let refs, let quiet):
      return try isOpen(refs, quiet: quiet)
    case .export:
      // JSON text: C1, bidi and invisible characters as \u escapes, as every JSON output.
      output.print(VisibleText.escape(json: try Exporter(client: connect()).config()))
    case .completion(let shell):
      output.print((shell == "bash" ? Completion.bash : Completion.zsh) + "\n")
    case .candidates(let candidates):
      output.print(try candidates.lines(self))
    case .ui, .shell, .batch, .reloadFresh, .pipe:
      preconditionFailure("run() carries out \(invocation.command)")
    }
    return .success
  }

  /// Sends RELOAD (or RELOAD FRESH) between two LISTs, in one round trip, and prints
  /// what the reload dropped and added: a reload can take sections away (and their open
  /// state), which the one saying it should see. STATUS, in the same round trip, tells a
  /// fleet's host: there the reload replaced the list on every host, which is said too.
  private func reload(fresh: Bool) throws(ClientError) {
    let list = Request<Listing>.list.asReply
    let replies = try connect().replies(to: [
      list, Request<UInt64>.reload(fresh: fresh).asReply, list, Request<[String: String]>.status.asReply,
    ])
    let listed = try replies[0].succeeded()
    let before = listed.sections
    let reload = try replies[1].succeeded()
    let after = try replies[2].succeeded().sections
    // A reload that changed nothing sent nothing to the other hosts. A daemon older than
    // STATUS answers it ERR UNKNOWN: no fleet then.
    let fleetHost =
      reload.revision == listed.revision ? nil : (try? replies[3].succeeded())?.facts["fleet-host"]
    let dropped = before.filter { old in !after.contains { $0.id == old.id } }
    let added = after.filter { new in !before.contains { $0.id == new.id } }
    show(
      text: TextRenderer.reload(
        dropped: dropped, added: added, count: after.count, revision: reload.revision, fleetHost: fleetHost),
      json: JSONRenderer.reload(
        dropped: dropped, added: added, revision: reload.revision, fleetHost: fleetHost))
  }

  /// What an edit prints: its revision (`revision 7`; with --json `{"revision"}`), so that
  /// every change says what it did, as open and reload do.
  private func showRevision(_ reply: Reply) {
    show(
      text: "revision \(reply.revision.map(String.init) ?? "-")\n",
      json: JSONRenderer.revision(reply.revision))
  }

  /// `open --all`, `close --all`: OPEN ALL or CLOSE ALL between two LISTs, in one round trip,
  /// and the rows of the sections whose state it changed, as `open REF` prints them.
  private func changeAll(_ action: SectionAction) throws(ClientError) {
    // The parser takes --all for open and close alone.
    let all: Request<UInt64> = action == .open ? .openAll : .closeAll
    let list = Request<Listing>.list.asReply
    let replies = try connect().replies(to: [list, all.asReply, list])
    let before = try replies[0].succeeded().sections
    _ = try replies[1].succeeded()
    let after = try replies[2].succeeded()
    let changed = after.sections.filter { section in
      before.first { $0.id == section.id }?.isOpen != section.isOpen
    }
    show(
      text: TextRenderer.changed(changed, style: style),
      json: JSONRenderer.sections(changed, revision: after.revision))
  }

  /// Standard input, whole, for `batch`.
  private func standardInput() throws(CommandLineError) -> [UInt8] {
    do {
      return try FileDescriptor.standardInput.readAll(subject: "standard input")
    } catch {
      throw .usage("cannot read the requests from standard input: \(error)")
    }
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
  private var timeout: Double? { invocation.timeout > 0 ? invocation.timeout : nil }

  private func show(text: String, json: JSON) {
    if invocation.json { output.print(json) } else { output.print(text) }
  }

  /// Sends every change at once, then LIST, in one round trip; each change the daemon refuses is
  /// reported, the rest still happen. The sections shown are read from that LIST, as they are
  /// after the last change: in exclusive mode a later OPEN closes a section an earlier one opened.
  private func change(_ requests: [Request<UInt64>]) throws(ClientError) -> ExitStatus {
    let outcomes = try connect().perform(each: requests.map(\.asReply) + [Request<Listing>.list.asReply])
    var changed: [Int] = []
    var succeeded = false
    var status = ExitStatus.success
    for outcome in outcomes.dropLast() {
      do {
        changed += try outcome.get().succeeded().sections.map(\.index)
        succeeded = true
      } catch {
        output.report(.client(invocation.readonly ? error.onReadonlySocket : error))
        status = error.exitStatus
      }
    }
    if succeeded {
      let list = try outcomes[outcomes.count - 1].get().succeeded()
      let final = changed.compactMap { index in list.sections.first { $0.index == index } }
      show(
        text: TextRenderer.changed(final, style: style),
        json: JSONRenderer.sections(final, revision: list.revision))
    }
    return status
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

  /// `is-open`: the answer is the exit status.
  /// `is-open REF...`, as `systemctl is-active`: a line each, open or closed (none with
  /// `quiet`); 0 when any is open, 1 when none is, 4 when one of them does not exist.
  private func isOpen(_ refs: [String], quiet: Bool) throws(ClientError) -> ExitStatus {
    let list = try connect().perform(Request<Listing>.list.asReply).succeeded()
    var found: [ListedSection] = []
    var missing = false
    for ref in refs {
      let section: ListedSection?
      if ref.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
        section = Int(ref).flatMap { index in list.sections.first { $0.index == index } }
      } else {
        section = list.sections.first { $0.id == ref }
      }
      guard let section else {
        output.diagnose("no section \"\(ref)\": there are \(list.sections.count)")
        missing = true
        continue
      }
      found.append(section)
      if !quiet && !invocation.json { output.print(section.isOpen ? "open\n" : "closed\n") }
    }
    if !quiet && invocation.json { output.print(JSONRenderer.sections(found, revision: list.revision)) }
    if missing { return .noSection }
    return found.contains(where: \.isOpen) ? .success : .daemonError
  }

  /// Raw lines, one request at a time so that even a long list never fills the socket both ways.
  /// The lines of a BATCH get no reply until its END; QUIT's OK is the last line (the parser
  /// made sure nothing follows it).
  /// The connection is named first (`CLIENT NAME`, its reply read apart: a busy daemon's
  /// `ERR BUSY` is reported as such), so the history tells these lines apart too; a `CLIENT
  /// NAME` among the lines renames it from there on.
  private func send(_ lines: [String]) throws(ClientError) -> ExitStatus {
    let client = try Client(path: socket().path, timeout: timeout, name: clientName)
    _ = try client.request([], replies: 0)
    let connection = client.connection
    var status = ExitStatus.success
    var inBatch = false
    for line in lines {
      try connection.send([line])
      if inBatch && !SendLine.closesBatch(line) { continue }
      // On the read-only socket BATCH is refused at once, and each line after it is a request.
      if SendLine.opensBatch(line) && !invocation.readonly {
        inBatch = true
        continue
      }
      inBatch = false
      if SendLine.verb(line).isEmpty { continue }
      while true {
        guard let reply = try connection.readLine() else { throw .connectionLost(path: connection.path) }
        output.print(VisibleText.escape(reply) + "\n")
        if ProtocolLine.isStatus(reply) {
          if SendLine.isError(reply) { status = .daemonError }
          break
        }
      }
    }
    return status
  }
}

extension Client {
  /// The replies to `requests`, sent at once (`perform(each:)`), ERR or not; the error of a
  /// request that could not be sent as it is (the others were).
  func replies(to requests: [Request<Reply>]) throws(ClientError) -> [Reply] {
    try perform(each: requests).map { outcome throws(ClientError) in try outcome.get() }
  }
}
