import CShim
import Glibc
import Posix
import SectionCore
import Systemd

/// The serving loop: accepts clients, feeds their lines to the `SectionService`, saves each
/// group of changes once, then sends replies and events.
///
/// One loop iteration handles every connection that is readable. Requests that change state
/// leave their reply unsent, and so do the requests a client pipelined after them in the same
/// read; at the end of the iteration (sd-event's post source) the state is saved once for all
/// of them (group commit), and only then are replies and events written: an `OK` is never sent
/// for a change that is not in the state file, and no reply shows a change before it is saved
/// (another client's read waits for the save, see `Connection.State`, and is answered first
/// after it).
///
/// The other concerns live beside this file: accepting (`Server+Accepting`), the turn's
/// bookkeeping of who waits for the save (`Server+Turn`), the save (`Server+Commit`), writing
/// (`Server+Writing`), subscribers (`Server+Subscribers`) and long answers (`Server+Streams`).
/// A connection's own life is one transition function (`Connection.Life`).
package final class Server {
  package let loop: EventLoop
  package let service: SectionService
  /// The state file, where groups are committed unless another backend is chosen; then the
  /// file is that backend's copy.
  package let localCommit: LocalCommit
  /// Where the turn's group is committed (`CommitBackend`): `localCommit`, or the one `Daemon`
  /// chose for `--etcd`. Its gate is the service's.
  var backend: any CommitBackend {
    didSet {
      service.gate = backend.gate
      keepsHeldRequests = backend.retries
      service.keepsRequests = backend.retries
    }
  }
  /// `backend.retries`, a field for the request path to read.
  var keepsHeldRequests = false
  let limits: ClientLimits
  /// Keeps connections in systemd's file descriptor store; nil outside systemd or without
  /// `--fd-store`.
  let connectionStore: ConnectionStore?
  /// Re-reads and validates the config, for RELOAD and SIGHUP.
  let loadConfig: () throws -> Config
  /// Who makes the daemon's own changes (a list changed across a restart is a reload by it).
  let daemon: Author

  var listeners: [Listener] = []
  /// Every client socket, watched as one sd-event source (see `Epoll` for why).
  let clients: Epoll
  private var clientsSource: EventSource?
  var connections = ConnectionTable()
  /// Connections accepted on the read-only socket, counted against their own limit.
  var readOnlyCount = 0
  var subscribers: [Connection] = []
  /// What this loop turn holds until its save and hands on after it (`Server+Turn`).
  var turn = Turn()
  /// One read buffer for all connections: input is handled where it lands, never copied
  /// unless a partial line remains. Room for a partial line carried over, plus `readSize`.
  private var readBuffer = [UInt8](repeating: 0, count: LineFramer.maximumLineLength + 2 + Server.readSize)
  /// The most read from one connection in one loop turn: the bound on the work one client
  /// can make every other client, and every client still connecting, wait for. 16 KiB is
  /// 3,000 pipelined PINGs; four clients flooding the debug build delayed a new one by
  /// 110-280 ms with 64 KiB reads and by about a quarter of that with these.
  static let readSize = 16 << 10
  private var endOfIteration: EventSource?
  var resume: EventSource?
  var status: StatusReporter?
  var reloadRequested = false
  var acceptRetry: EventSource?
  var acceptPaused = false
  /// The D-Bus face, with --bus: a peer of the sockets that the group commit answers too.
  var bus: BusFace?
  /// The list's name (`--list`), which the status line begins with; nil for the unnamed list.
  var list: ListName?
  /// SIGTERM came while a group's commit was under way: the stop waits for its outcome.
  package var stopRequested = false
  /// A SIGHUP came while the backend was busy: reload once it is through.
  var reloadWhenIdle = false
  /// With --log-changes: the journal entries of each save.
  var changeLog: ChangeLog?
  /// Connections closed since the heap was last given back, and the timer that gives it back
  /// after a burst of them (`Server+Memory`).
  var closedSinceTrim = 0
  var trimTimer: EventSource?
  /// Logs client errors with --verbose; nil otherwise, so that the request path pays nothing.
  var clientErrors = Log.threshold >= .debug ? ClientErrorLog() : nil
  /// Who gets which level on the control socket, decided as each connection is accepted.
  var accessRules = AccessRules.none
  /// Reads the rules again, at each reload (RELOAD, SIGHUP): new connections get the new
  /// rules' levels, connected ones keep theirs. Nil: the rules stay.
  var loadAccessRules: (() throws -> AccessRules)?
  /// Requests refused as above their client's level, logged at notice level with who sent
  /// them, at most `ClientErrorLog.perSecond` a second.
  var denials = ClientErrorLog(level: .notice, kind: "refusals of requests above their level")

  init(
    loop: EventLoop, service: SectionService, store: StateStore?, limits: ClientLimits,
    connectionStore: ConnectionStore?, loadConfig: @escaping () throws -> Config,
    daemon: Author = Author(via: .reload, uid: nil, pid: nil, name: "sectiond")
  ) throws {
    self.daemon = daemon
    self.loop = loop
    self.service = service
    localCommit = LocalCommit(store: store)
    backend = localCommit
    service.gate = localCommit.gate
    self.limits = limits
    self.connectionStore = connectionStore
    self.loadConfig = loadConfig
    clients = try Epoll()
    clientsSource = try loop.watch(clients.fd, events: .readable) { [unowned self] _ in self.pollClients() }
    endOfIteration = try loop.afterEachIteration { [unowned self] in self.finishIteration() }
    resume = try loop.deferred { [unowned self] in self.handleRunnable() }
    status = try StatusReporter(loop: loop) { [unowned self] in self.statusLine }
  }

  func serve(_ socket: FileDescriptor, access: SectionService.Access, file: SocketFile?) throws {
    let listener = Listener(fd: socket, access: access, file: file)
    listener.source = try loop.watch(socket, events: .readable) { [unowned self] _ in
      self.accept(from: listener)
    }
    // The same priority as the clients' source: sd-event dispatches one source per iteration,
    // the one pending longest among the most urgent, so a connecting client waits at most a
    // turn however busy the connected ones keep their source.
    listeners.append(listener)
  }

  package var statusLine: String {
    let open = service.model.openIndices.count
    let sections = service.model.sections.count
    return (list.map { "list \($0): " } ?? "")
      + "\(counted(sections, "section")) (\(open) open), \(counted(connections.count, "client")), \(counted(subscribers.count, "subscriber")), revision \(service.model.revision)"
  }

  // MARK: Reading and handling requests

  /// Handles one batch of ready clients; sd-event calls again while more are ready.
  func pollClients() {
    clients.poll { fd, events in
      if let connection = connections[fd: fd.rawValue] { handleEvents(events, on: connection) }
    }
  }

  private func handleEvents(_ events: IOEvents, on connection: Connection) {
    if events.contains(.writable) {
      write(connection)
      if connection.isClosed { return }
    }
    if !events.isDisjoint(with: [.readable, .hangUp]) { read(connection) }
    // epoll reports a hang-up until the socket is closed. When reading made no progress
    // (input already ended, or requests wait for output to drain), writing does: on a socket
    // hung up both ways it fails and closes the connection, instead of the loop turning
    // without end while no other source runs. One waiting for a save writes nothing until
    // then: it is parked.
    if !events.isDisjoint(with: .hangUp) {
      write(connection)
      if connection.isWaitingForSave { park(connection) }
    }
  }

  private func read(_ connection: Connection) {
    guard connection.acceptsRequests(), !connection.inputEnded else {
      // Input for one that waits for a save is read after it: until then the socket, level
      // triggered, would wake the loop on every poll.
      if connection.isWaitingForSave {
        watch(connection, for: connection.watchedEvents.subtracting(.readable))
      }
      return
    }
    // Lines already read, or a retried group's requests, come before anything read now.
    if connection.pending.contains(0x0A) || !connection.rerun.isEmpty {
      handlePending(connection)
      return
    }
    let carried = connection.pending.count
    let result: Result<IOResult<Int>, Error> = readBuffer.withUnsafeMutableBytes { buffer in
      if carried > 0 { connection.pending.withUnsafeBytes { buffer.copyMemory(from: $0) } }
      return Result {
        try connection.fd.receive(
          into: UnsafeMutableRawBufferPointer(rebasing: buffer[carried..<(carried + Server.readSize)]))
      }
    }
    switch result {
    case .success(.wouldBlock):
      return
    case .success(.done(0)):
      connection.handle(.endOfInput)
      watch(connection, for: [])
      handlePending(connection)
    case .success(.done(let count)):
      if carried == 0 && answerOnlyPings(count, on: connection) { return }
      // Only when there is something to remove: clearing an empty array still cost 60
      // instructions a read (callgrind).
      if carried > 0 { connection.pending.removeAll() }
      handle(readBuffer[0..<(carried + count)], on: connection)
    case .failure(let error):
      clientErrors?.note("client read failed: \(error)")
      close(connection)
    }
  }

  /// Answers a read of nothing but lone PINGs (up to 16) with one send from a constant, as a
  /// plain line server answers, when the connection has nothing queued and nothing owed: the
  /// replies neither pass through the output queue nor change what the socket is watched for.
  /// PING is the barrier and keep-alive every client sends; at 1 in flight this path took its
  /// cost from 981 to 529 user-space instructions (callgrind, docs/PERFORMANCE.md). The
  /// conditions are `Connection.answersPingsNow`, as for `handle`, plus an empty output
  /// queue, so the order of replies and events is the same. False when the read holds
  /// anything else: then `handle` takes all of it.
  private func answerOnlyPings(_ count: Int, on connection: Connection) -> Bool {
    guard connection.output.isEmpty, connection.answersPingsNow else { return false }
    var position = 0
    let pings = readBuffer.withUnsafeBufferPointer {
      connection.framer.skipPings(
        in: UnsafeBufferPointer(rebasing: $0[..<count]), from: &position, limit: OutputQueue.okRunLength)
    }
    guard pings > 0, position == count else { return false }
    let replies = OutputQueue.okReplies(pings)
    switch Result(catching: { try connection.fd.write(UnsafeRawBufferPointer(replies)) }) {
    case .success(.done(let sent)) where sent == replies.count:
      return true
    case .success(.done(let sent)):
      connection.output.append(contentsOf: replies[sent...])
    case .success(.wouldBlock):
      connection.output.append(contentsOf: replies)
    case .failure(let error):
      clientErrors?.note("client write failed: \(error)")
      close(connection)
      return true
    }
    // The socket took part: the rest waits in the queue, watched for as any output is.
    write(connection)
    return true
  }

  /// Handles the complete lines in `input` until one must wait (for a save, or for output to
  /// drain), or `replies` requests have been answered; keeps the rest.
  ///
  /// A change holds its reply for the save, and the changes after it join that group (see
  /// `Connection.State.awaitingSave`); the first other request (a read, PING, QUIT...) is
  /// answered after the save. So one client's pipelined changes in one turn cost one save,
  /// while none of their replies goes out before it.
  private func handle(_ input: ArraySlice<UInt8>, on connection: Connection, replies: Int = .max) {
    var replies = replies
    // Where the unhandled input starts, as an offset into `input`: lines are framed as
    // positions in its buffer, and only a request that goes to the service is sliced.
    var position = 0
    // The connection's session, taken once for the run of its requests at its first request
    // that goes to the service (a getter and a retain per request cost a TOGGLE 1%: perf), and
    // handed in with each; CLIENT NAME changes it, and the connection keeps it after the run.
    var session: Session?
    // A retried group's requests run again before anything read after them.
    let keptDone = connection.rerun.isEmpty || runKept(on: connection, replies: &replies)
    input.withUnsafeBufferPointer { bytes in
      requests: while keptDone, replies > 0, connection.takesNextRequest() {
        // PINGs are answered where they are framed, like a plain line server would answer
        // them, while nothing else must come first (`Connection.answersPingsNow`).
        if connection.answersPingsNow {
          // No more of them than the output limit has room for, three bytes each.
          let limit = min(replies, (Connection.outputLimit - connection.output.count + 2) / 3)
          let answered = connection.framer.answerPings(
            in: bytes, from: &position, limit: limit, reply: &connection.output)
          replies -= answered
          if answered == limit { continue }
          if position == bytes.count { break }
        }
        let start = connection.output.tailMark
        let line: ArraySlice<UInt8>
        switch connection.framer.next(in: bytes, from: &position, endOfInput: connection.inputEnded) {
        case nil:
          break requests
        case .line(let framed)?:
          line = input[(input.startIndex + framed.lowerBound)..<(input.startIndex + framed.upperBound)]
        case .tooLong?:
          if connection.batch != nil {
            connection.batch!.addTooLong()
            continue
          }
          if connection.subscription == .owedSnapshot { _ = sendOwedSnapshot(connection) }
          connection.output.append(contentsOf: ProtocolError.tooLong.line)
          clientErrors?.note("answered a client ERR TOOLONG")
          connection.handle(.replied)
          replies -= 1
          continue
        }
        if connection.subscription == .owedSnapshot && !sendOwedSnapshot(connection) {
          position = line.startIndex - input.startIndex
          waitForSave(connection)
          break
        }
        if session == nil { session = connection.session }
        guard
          let outcome = service.handle(
            line, session: &session!, batch: &connection.batch, reply: &connection.output)
        else {
          continue
        }
        guard settle(outcome, on: connection, session: session!, replyStart: start) else {
          // The line is handled again after the save.
          position = line.startIndex - input.startIndex
          break
        }
        replies -= 1
        if keepsHeldRequests && connection.heldReplyStart != nil {
          connection.heldRequests.append(service.lastRequest!)
        }
      }
    }
    if let session, session.author !== connection.session.author { connection.session = session }
    if position < input.count { connection.pending = Array(input.dropFirst(position)) }
    // Replies that wait for nothing go out now, as a plain line server would send them: the
    // client can read them while the loop turn goes on with the other connections.
    if connection.isReady { write(connection) } else { queueFlush(connection) }
  }

  /// Runs again the requests of the connection's group that came back as a retry
  /// (`CommitOutcome.retry`), on the newer state, before anything the client sent after them.
  /// False when some must still wait (for a save, or for output to drain, or for `replies`).
  private func runKept(on connection: Connection, replies: inout Int) -> Bool {
    var session = connection.session
    while let kept = connection.rerun.first {
      guard replies > 0, connection.takesNextRequest() else { break }
      if connection.subscription == .owedSnapshot && !sendOwedSnapshot(connection) {
        waitForSave(connection)
        break
      }
      let start = connection.output.tailMark
      guard let outcome = service.run(kept, session: &session, reply: &connection.output),
        settle(outcome, on: connection, session: session, replyStart: start)
      else { break }
      connection.rerun.removeFirst()
      replies -= 1
      if connection.heldReplyStart != nil { connection.heldRequests.append(kept) }
    }
    if session.author !== connection.session.author { connection.session = session }
    return connection.rerun.isEmpty
  }

  /// What a request's outcome makes of its reply, queued from `replyStart`: false when the
  /// request must wait for the save (the reply, a refusal too, is taken back, to be made again
  /// then); else the reply stands and `apply` acts on the outcome.
  @inline(__always)
  private func settle(
    _ outcome: SectionService.Outcome, on connection: Connection, session: Session, replyStart start: Int
  ) -> Bool {
    if outcome == .deferred || (outcome != .changed && connection.heldReplyStart != nil) {
      if service.denial != nil { _ = service.takeDenial() }
      connection.output.removeTail(from: start)
      waitForSave(connection)
      return false
    }
    if service.denial != nil { noteDenial() }
    clientErrors?.noteReply(connection.output.tail, from: start)
    apply(outcome, on: connection, session: session, replyStart: start)
    return true
  }

  private func apply(
    _ outcome: SectionService.Outcome, on connection: Connection, session: Session, replyStart: Int
  ) {
    switch outcome {
    case .replied, .deferred:
      break
    case .changed:
      holdForSave(connection, replyStart: replyStart)
    case .subscribe:
      subscribe(connection)
    case .streaming:
      guard let stream = service.takeStream() else { break }
      connection.stream = stream
      if stream.isReplay {
        subscribe(connection)
        connection.handle(.replay)
      }
    case .unsubscribe:
      unsubscribe(connection)
    case .quit:
      connection.handle(.quit)
    case .reload:
      // By the client as its session has it: named by a CLIENT NAME earlier in the run.
      do throws(ProtocolError) {
        if try reload(by: session, reply: &connection.output) == .changed {
          apply(.changed, on: connection, session: session, replyStart: replyStart)
        }
      } catch {
        connection.output.append(contentsOf: error.line)
      }
    }
  }

  /// Re-reads the config; on success the sections are replaced, keeping state by id, and the
  /// reply's status goes to `reply`. The reload's changes are the requester's (`session`), come
  /// by reload. Throws the refusal when the config does not load or the reload cannot be done.
  func reload(by session: Session, reply: inout OutputQueue) throws(ProtocolError) -> SectionService.Outcome {
    Notifier.reloading()
    reloadRequested = true
    let outcome: SectionService.Outcome
    do {
      let rules = try loadAccessRules?() ?? accessRules
      let config = try loadConfig()
      if rules != accessRules {
        accessRules = rules
        Log.notice("access rules changed: connections from now on get the new levels")
      }
      let before = service.model
      outcome = try service.reload(config, by: session.author.reloading(), reply: &reply)
      Log.notice(
        "reloaded the config: " + Server.reloadCount(config, service.model)
          + Server.reloadDifference(before, service.model))
    } catch {
      let refusal = service.refuseReload(error)
      Log.error("reload refused, still serving the previous config: \(refusal.message)")
      reloadFinished()
      throw refusal
    }
    // With nothing to save the reload is over now, and systemd hears so before the client's
    // reply goes out; a reload that changed the sections is over once they are saved.
    if outcome != .changed { reloadFinished() }
    return outcome
  }

  /// How many sections the list has after a reload, as `sectionctl reload` says too; and the
  /// config's count when the clients' edits, which a reload keeps, make it another.
  static func reloadCount(_ config: Config, _ after: SectionModel) -> String {
    let listed = counted(after.sections.count, "section")
    return after.sections.count == config.sections.count
      ? listed : "\(listed) in the list, \(config.sections.count) in the config (clients' edits kept)"
  }

  /// The sections a reload took away and brought, for its log line: a section whose id came
  /// from its title goes, open state and all, when the title changes, and the log should
  /// say so. At most `namedInLog` ids each, then how many more.
  static func reloadDifference(_ before: SectionModel, _ after: SectionModel) -> String {
    let kept = Set(after.sections.map(\.id))
    let went = before.sections.indices.filter { !kept.contains(before.sections[$0].id) }.map { index in
      before.sections[index].id + (before.isOpen(index) ? " (open)" : "")
    }
    let had = Set(before.sections.map(\.id))
    let came = after.sections.map(\.id).filter { !had.contains($0) }
    func named(_ ids: [String]) -> String {
      let shown = ids.prefix(namedInLog).joined(separator: ", ")
      return ids.count > namedInLog ? shown + " and \(ids.count - namedInLog) more" : shown
    }
    return (went.isEmpty ? "" : "; went: \(named(went))") + (came.isEmpty ? "" : "; came: \(named(came))")
  }

  static let namedInLog = 10

  /// READY=1 again after RELOADING=1.
  func reloadFinished() {
    reloadRequested = false
    Notifier.ready(status: statusLine)
  }

  /// SIGHUP: reload without a client to answer.
  func reloadFromSignal() {
    if backend.isBusy {
      // Not beside a group whose commit is under way: once it is through.
      reloadWhenIdle = true
      return
    }
    var discarded = OutputQueue()
    // In the history: asked by someone the signal does not name. A refusal is logged.
    _ = try? reload(
      by: Session(access: .control, author: Author(via: .reload, uid: nil, pid: nil, name: "SIGHUP")),
      reply: &discarded)
  }

  /// Handles input kept from an earlier read (lines that waited for a save, or for output to drain).
  func handlePending(_ connection: Connection, replies: Int = .max) {
    let input = connection.pending
    connection.pending = []
    handle(input[...], on: connection, replies: replies)
  }

  // MARK: Closing and stopping

  func close(_ connection: Connection) {
    guard !connection.isClosed else { return }
    unsubscribe(connection)
    connectionStore?.forget(connection)
    connection.handle(.close)
    connections[fd: connection.fd.rawValue] = nil
    if connection.access == .readOnly { readOnlyCount -= 1 }
    connection.fd.close()
    noteClosed()
    if acceptRetry != nil { resumeAccepting() }
    status?.figuresChanged()
  }

  /// SIGTERM/SIGINT: stop accepting, save, and hand the connections over to the next process
  /// (`handOver()`) or, outside systemd's store, say goodbye to subscribers, write what can
  /// be written and close.
  func shutdown() {
    Notifier.stopping()
    for listener in listeners { listener.close() }
    listeners.removeAll()
    if backend.isCommitting {
      // A group's commit under way: its clients hear its outcome first (within the commit's
      // deadline), and changes sent meanwhile wait, to go to the next process with their
      // connections. Taken up again once the backend is through (`finishIteration`).
      if !stopRequested { Log.notice("stopping once the changes being committed are through") }
      stopRequested = true
      backend.gate.sealed = true
      return
    }
    backend.stop()
    // The state file commits at once: the unsaved group is saved before the stop.
    if backend === localCommit && service.hasUnsavedChanges { commitTurn() }
    bus?.close()
    if connectionStore != nil {
      handOver()
    } else {
      Log.notice("stopping: \(statusLine)")
      for subscriber in subscribers {
        SectionService.appendGoodbyeEvent(reason: "shutdown", to: &subscriber.output)
      }
      for connection in connections.values {
        _ = connection.flush()
        close(connection)
      }
    }
    loop.exit(code: 0)
  }
}
