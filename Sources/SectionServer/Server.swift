import CShim
import Glibc
import Posix
import SectionCore
import Systemd

/// The serving loop: accepts clients, feeds their lines to the `SectionService`, saves each
/// group of changes once, then sends replies and events.
///
/// One loop iteration handles every connection that is readable. Requests that change state
/// leave their reply unsent; at the end of the iteration (sd-event's post source) the state is
/// saved once for all of them (group commit), and only then are replies and events written:
/// an `OK` is never sent for a change that is not in the state file.
final class Server {
  let loop: EventLoop
  let service: SectionService
  let store: StateStore?
  let maxClients: Int
  /// Re-reads and validates the config, for RELOAD and SIGHUP.
  let loadConfig: () throws -> Config

  private var listeners: [Listener] = []
  /// Every client socket, watched as one sd-event source (see `Epoll` for why).
  private let clients: Epoll
  private var clientsSource: EventSource?
  private var connections: [Int32: Connection] = [:]
  private var subscribers: [Connection] = []
  /// Connections with output queued during this iteration.
  private var toFlush: [Connection] = []
  /// Connections whose last request changed state and waits for the save.
  private var waitingForSave: [Connection] = []
  /// Connections with input left over that can be handled now.
  private var runnable: [Connection] = []
  /// One read buffer for all connections: input is handled where it lands, never copied
  /// unless a partial line remains.
  private var readBuffer = [UInt8](repeating: 0, count: 64 << 10)
  private var endOfIteration: EventSource?
  private var resume: EventSource?
  private var status: StatusReporter?
  private var reloadRequested = false

  init(
    loop: EventLoop, service: SectionService, store: StateStore?, maxClients: Int,
    loadConfig: @escaping () throws -> Config
  ) throws {
    self.loop = loop
    self.service = service
    self.store = store
    self.maxClients = maxClients
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
    // Clients already connected come first: their hang-ups free slots before new clients
    // are counted against --max-clients, and a flood of connects cannot starve them.
    listener.source?.setPriority(1)
    listeners.append(listener)
  }

  var statusLine: String {
    let open = service.model.openIndices.count
    let sections = service.model.sections.count
    return
      "\(sections) sections (\(open) open), \(connections.count) clients, \(subscribers.count) subscribers, revision \(service.model.revision)"
  }

  // MARK: Accepting

  private func accept(from listener: Listener) {
    for _ in 0..<64 {
      let result: IOResult<FileDescriptor>
      do {
        result = try UnixSocket.accept(listener.fd)
      } catch let error as PosixError
        where error.errno == .tooManyFiles || error.errno == .tooManyFilesInSystem
      {
        pauseAccepting(because: error)
        return
      } catch {
        Log.warning("\(error)")
        return
      }
      guard case .done(let fd) = result else { return }
      if acceptPaused {
        acceptPaused = false
        Log.notice("accepting clients again")
      }
      if connections.count >= maxClients {
        _ = ProtocolError.tooManyClients.line.withUnsafeBytes { try? fd.write($0) }
        fd.close()
        Log.debug("refused a client: \(maxClients) clients already (--max-clients)")
        continue
      }
      add(fd, access: listener.access)
    }
  }

  private func add(_ fd: FileDescriptor, access: SectionService.Access) {
    let connection = Connection(fd: fd, access: access)
    do {
      try clients.add(fd, events: connection.watchedEvents)
    } catch {
      Log.warning("\(error)")
      fd.close()
      return
    }
    connections[fd.rawValue] = connection
    if Log.threshold >= .debug, let peer = UnixSocket.peerCredentials(fd) {
      Log.debug(
        "client connected on the \(access == .control ? "control" : "read-only") socket: uid \(peer.uid), pid \(peer.pid)"
      )
    }
    status?.figuresChanged()
  }

  /// Out of file descriptors: stop accepting instead of spinning on a listener that stays
  /// readable, and try again when a client leaves or after a short pause.
  private func pauseAccepting(because error: PosixError) {
    if !acceptPaused {  // once per shortage, not every 100 ms
      acceptPaused = true
      Log.warning("cannot accept more clients: \(error); retrying every 100 ms until a descriptor is free")
    }
    for listener in listeners { listener.source?.setEnabled(false) }
    acceptRetry =
      acceptRetry ?? (try? loop.timer(after: 100_000) { [unowned self] in self.resumeAccepting() })
    acceptRetry?.rearm(after: 100_000)
  }

  private var acceptRetry: EventSource?
  private var acceptPaused = false

  private func resumeAccepting() {
    for listener in listeners { listener.source?.setEnabled(true) }
  }

  // MARK: Reading and handling requests

  /// Handles one batch of ready clients; sd-event calls again while more are ready.
  private func pollClients() {
    clients.poll { fd, events in
      if let connection = connections[fd.rawValue] { handleEvents(events, on: connection) }
    }
  }

  private func handleEvents(_ events: IOEvents, on connection: Connection) {
    if events.contains(.writable) {
      write(connection)
      if connection.isClosed { return }
    }
    if !events.isDisjoint(with: [.readable, .hangUp]) { read(connection) }
  }

  private func read(_ connection: Connection) {
    guard connection.canHandleRequests, !connection.inputEnded else { return }
    if connection.pending.contains(0x0A) {
      handlePending(connection)
      return
    }
    let carried = connection.pending.count
    let result: Result<IOResult<Int>, Error> = readBuffer.withUnsafeMutableBytes { buffer in
      connection.pending.withUnsafeBytes { buffer.copyMemory(from: $0) }
      return Result {
        try connection.fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[carried...]))
      }
    }
    switch result {
    case .success(.wouldBlock):
      return
    case .success(.done(0)):
      connection.inputEnded = true
      watch(connection, for: [])
      handlePending(connection)
    case .success(.done(let count)):
      connection.pending.removeAll()
      handle(readBuffer[0..<(carried + count)], on: connection)
    case .failure(let error):
      Log.debug("client read failed: \(error)")
      close(connection)
    }
  }

  /// Handles the complete lines in `input` until one changes state or output backs up; keeps the rest.
  private func handle(_ input: ArraySlice<UInt8>, on connection: Connection) {
    var input = input
    while connection.canHandleRequests {
      guard let frame = connection.framer.next(&input, endOfInput: connection.inputEnded) else { break }
      guard case .line(let line) = frame else {
        connection.output.append(contentsOf: ProtocolError.tooLong.line)
        continue
      }
      let start = connection.output.count
      guard let outcome = service.handle(line, access: connection.access, reply: &connection.output) else {
        continue
      }
      apply(outcome, on: connection, replyStart: start)
    }
    if !input.isEmpty { connection.pending = Array(input) }
    if connection.unsentCount >= Connection.outputLimit { pauseReading(connection) }
    queueFlush(connection)
  }

  private func apply(_ outcome: SectionService.Outcome, on connection: Connection, replyStart: Int) {
    switch outcome {
    case .replied:
      break
    case .changed:
      connection.unsavedReplyStart = replyStart
      waitingForSave.append(connection)
    case .subscribe:
      subscribe(connection)
    case .unsubscribe:
      unsubscribe(connection)
    case .quit:
      connection.quitting = true
    case .reload:
      let outcome = reload(reply: &connection.output)
      if outcome == .changed { apply(outcome, on: connection, replyStart: replyStart) }
    }
  }

  /// Re-reads the config; on success the sections are replaced, keeping state by id.
  func reload(reply: inout [UInt8]) -> SectionService.Outcome {
    Notifier.reloading()
    reloadRequested = true
    do {
      let config = try loadConfig()
      let outcome = service.reload(config, reply: &reply)
      Log.notice("reloaded the config: \(config.sections.count) sections")
      return outcome
    } catch {
      Log.error("reload refused, still serving the previous config: \(error)")
      service.refuseReload("\(error)", reply: &reply)
      return .replied
    }
  }

  /// SIGHUP: reload without a client to answer.
  func reloadFromSignal() {
    var discarded: [UInt8] = []
    _ = reload(reply: &discarded)
  }

  private func handleRunnable() {
    let ready = runnable
    runnable.removeAll(keepingCapacity: true)
    for connection in ready where !connection.isClosed && connection.canHandleRequests {
      handlePending(connection)
    }
  }

  /// Handles input kept from an earlier read (lines that waited for a save, or for output to drain).
  private func handlePending(_ connection: Connection) {
    let input = connection.pending
    connection.pending = []
    handle(input[...], on: connection)
  }

  // MARK: Saving, broadcasting, writing

  /// End of a loop iteration: save the changes of this iteration once, then write everything.
  private func finishIteration() {
    if service.hasUnsavedChanges { save() }
    if reloadRequested && !service.hasUnsavedChanges {
      reloadRequested = false
      Notifier.ready(status: statusLine)
    }
    let connections = toFlush
    toFlush.removeAll(keepingCapacity: true)
    for connection in connections {
      connection.flushQueued = false
      write(connection)
    }
  }

  private func save() {
    for connection in subscribedBeforeSave where connection.isSubscribed && !connection.missedEvents {
      connection.missedEvents = true
      queueFlush(connection)
    }
    subscribedBeforeSave.removeAll()
    do {
      try store?.save(service)
    } catch {
      Log.error("state not saved, changes refused: \(error)")
      service.rollback()
      let refusal = ProtocolError(.internal, "state not saved: \(error)").line
      for connection in waitingForSave where !connection.isClosed {
        connection.output.removeSubrange(connection.unsavedReplyStart!...)
        connection.output.append(contentsOf: refusal)
      }
      releaseWaiting()
      return
    }
    broadcast(service.commit())
    releaseWaiting()
    status?.figuresChanged()
  }

  private func releaseWaiting() {
    for connection in waitingForSave where !connection.isClosed {
      connection.unsavedReplyStart = nil
      queueFlush(connection)
      if !connection.pending.isEmpty { runnable.append(connection) }
    }
    waitingForSave.removeAll(keepingCapacity: true)
    if !runnable.isEmpty { resume?.trigger() }
  }

  /// Queues the events for every subscriber; one that has too much unread gets a snapshot later.
  private func broadcast(_ events: [UInt8]) {
    guard !events.isEmpty else { return }
    for subscriber in subscribers where !subscriber.missedEvents {
      if subscriber.unsentCount + events.count > Connection.eventLimit {
        subscriber.missedEvents = true
        queueFlush(subscriber)
      } else if subscriber.enqueue(events) {
        queueFlush(subscriber)
      }
    }
  }

  private func queueFlush(_ connection: Connection) {
    guard !connection.flushQueued else { return }
    connection.flushQueued = true
    toFlush.append(connection)
  }

  private func write(_ connection: Connection) {
    guard !connection.isClosed else { return }
    guard connection.flush() else {
      close(connection)
      return
    }
    if connection.missedEvents && connection.unsentCount == 0 && service.hasUnsavedChanges {
      // A snapshot now would show changes whose events are still to be broadcast after the
      // save (or that a failed save undoes): send it at the end of the iteration instead.
      queueFlush(connection)
    } else if connection.missedEvents && connection.unsentCount == 0 {
      connection.missedEvents = false
      service.appendStateEvent(to: &connection.output)
      guard connection.flush() else {
        close(connection)
        return
      }
    }
    if connection.isFinished {
      close(connection)
      return
    }
    let blocked = connection.unsentCount > 0 && connection.unsavedReplyStart == nil
    var events: IOEvents = blocked ? .writable : []
    if connection.readPaused && connection.unsentCount < Connection.outputLimit / 2 {
      connection.readPaused = false
      if !connection.pending.isEmpty {
        runnable.append(connection)
        resume?.trigger()
      }
    }
    if !connection.readPaused && !connection.inputEnded && !connection.quitting { events.insert(.readable) }
    watch(connection, for: events)
  }

  private func pauseReading(_ connection: Connection) {
    connection.readPaused = true
    watch(connection, for: .writable)
  }

  private func watch(_ connection: Connection, for events: IOEvents) {
    guard events != connection.watchedEvents else { return }
    connection.watchedEvents = events
    do {
      try clients.modify(connection.fd, events: events)
    } catch {
      Log.warning("\(error)")
      close(connection)
    }
  }

  // MARK: Subscribers and closing

  private func subscribe(_ connection: Connection) {
    guard !connection.isSubscribed else { return }
    connection.isSubscribed = true
    connection.subscriberSlot = subscribers.count
    subscribers.append(connection)
    if service.hasUnsavedChanges { subscribedBeforeSave.append(connection) }
    status?.figuresChanged()
  }

  /// Subscribed while changes of this iteration wait for the save: the SUBSCRIBE reply already
  /// shows them, so their events would repeat revs the client has seen (and a rollback would
  /// undo what it saw). Such subscribers get a `!state` snapshot after the save instead.
  private var subscribedBeforeSave: [Connection] = []

  private func unsubscribe(_ connection: Connection) {
    guard connection.isSubscribed else { return }
    let slot = connection.subscriberSlot
    subscribers.swapAt(slot, subscribers.count - 1)
    subscribers[slot].subscriberSlot = slot
    subscribers.removeLast()
    connection.isSubscribed = false
    connection.missedEvents = false
    status?.figuresChanged()
  }

  private func close(_ connection: Connection) {
    guard !connection.isClosed else { return }
    unsubscribe(connection)
    connection.isClosed = true
    connections[connection.fd.rawValue] = nil
    connection.fd.close()
    if acceptRetry != nil { resumeAccepting() }
    status?.figuresChanged()
  }

  // MARK: Stopping

  /// SIGTERM/SIGINT: stop accepting, save, say goodbye to subscribers, write what can be written.
  func shutdown() {
    Notifier.stopping()
    Log.notice("stopping: \(statusLine)")
    for listener in listeners { listener.close() }
    listeners.removeAll()
    if service.hasUnsavedChanges { save() }
    for subscriber in subscribers {
      SectionService.appendGoodbyeEvent(reason: "shutdown", to: &subscriber.output)
    }
    for connection in Array(connections.values) {
      connection.unsavedReplyStart = nil
      _ = connection.flush()
      close(connection)
    }
    loop.exit(code: 0)
  }
}
