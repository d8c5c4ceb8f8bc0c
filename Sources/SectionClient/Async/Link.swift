import Posix
import Synchronization

/// One connection of an `AsyncClient`: any number of tasks write requests on it, each at once
/// (pipelining), and the `Reactor`'s thread reads the replies and hands each to the oldest
/// request waiting, as protocol 1 answers in order.
///
/// A request's bytes and its waiter are queued together, so the order of the waiters is the
/// order of the bytes. Requests made at once leave in one `write(2)` (one write per
/// request was much of the library's cost, measured): on the reactor's thread a request waits
/// until the tasks running with it have run (`Reactor.runJobs`); elsewhere the writer that finds
/// nobody writing writes what is queued, and goes on writing what others queue meanwhile. Nobody waits for the socket: what
/// it does not take, the reactor writes when epoll says it has room. So a daemon that stops
/// reading until its replies are read (as sectiond does when a client's replies pile up) cannot
/// deadlock a connection, nor hold up a task.
final class Link: Sendable {
  let path: String
  private let fd: FileDescriptor
  private let pending = Mutex(Pending())
  /// What the reactor's thread has read and not yet made into replies; only it touches this.
  private let reading: Reading

  /// Only the reactor's thread touches it, so the runtime's exclusivity checks on each access
  /// are left out (`@exclusivity(unchecked)`): they were 3% of client-load's CPU.
  private final class Reading: @unchecked Sendable {
    @exclusivity(unchecked) var lines: LineReader
    @exclusivity(unchecked) var assembler: ReplyAssembler
    /// The request whose replies are coming, out of the queue until it has them all.
    @exclusivity(unchecked) var current: Waiter?
    var failure: ClientError
    init(path: String) {
      lines = LineReader(path: path)
      assembler = ReplyAssembler(path: path)
      failure = .connectionLost(path: path)
    }
  }

  fileprivate struct Pending: ~Copyable {
    var waiters: [Waiter] = []
    var head = 0
    /// Why the connection ended; every request from then on fails with it.
    var failure: ClientError?
    /// Bytes queued for the socket, and whether someone is to write them: a writer at it, the
    /// reactor at the end of its turn, or the reactor once the socket has room (`waitingForRoom`).
    var output: [UInt8] = []
    var flushing = false
    var waitingForRoom = false
    /// How many of the last `waiters` are for requests whose bytes are all still in `output`:
    /// never sent, so safe to send again on a new connection if this one has ended.
    var unsent = 0
    /// Why the connection was given up here (`abandon`: a deadline passed, a task was
    /// cancelled): what the requests in flight fail with when the reactor sees it end.
    var abandoned: ClientError?
  }

  /// Connects (waiting at most `timeout` seconds for a listener whose backlog is full); the
  /// reactor reads it until the connection ends (`close`, `abandon`, or the daemon).
  init(path: String, name: String?, timeout: Double? = nil) throws(ClientError) {
    self.path = path
    reading = Reading(path: path)
    fd = try Connection.socket(
      path: path, timeout: timeout, deadline: timeout.map { monotonicMicroseconds() + UInt64($0 * 1_000_000) }
    )
    // On failure deinit closes the socket, as for any Link fully made.
    guard Reactor.shared.add(self, fd: fd) else { throw .cannotConnect(path: path, errno: Errno(0)) }
    if let line = name.flatMap(ClientName.line) { send([line], to: Waiter(count: 1, continuation: nil)) }
  }

  deinit { fd.close() }

  /// True once the connection has ended.
  var isClosed: Bool { closed.load(ordering: .acquiring) }
  /// Set, with `Pending.failure`, once the connection has ended: read without the lock on
  /// every request (`AsyncClient` asks before each).
  private let closed = Atomic<Bool>(false)

  /// Queues `lines` and `waiter` (for `waiter.count` replies), and writes them unless someone
  /// else is to (see the type's comment).
  func send(_ lines: [String], to waiter: Waiter) {
    let deadline = waiter.deadline
    var busy = false
    let started = pending.withLock { pending -> Bool? in
      if let failure = pending.failure {
        if case .busy = failure { busy = true }
        return nil
      }
      pending.waiters.append(waiter)
      pending.unsent += 1
      for line in lines {
        pending.output += line.utf8
        pending.output.append(0x0A)
      }
      if pending.flushing { return false }
      pending.flushing = true
      return true
    }
    // Once queued, where the reactor's check of deadlines (`expire`) finds it.
    if deadline != 0 && started != nil { Reactor.shared.expect(deadline) }
    switch started {
    // A request on a connection that has ended goes again on a new one, unless the daemon said
    // it is busy: then it would only meet the same.
    case nil: waiter.resume(busy ? .failed(.busy(path: path)) : .notSent)
    case false?: break
    case true?:
      if Reactor.shared.isCurrent { Reactor.shared.flushLater(self) } else { flush() }
    }
  }

  /// Ends the connection: requests waiting fail with `connectionLost`.
  func close() { UnixSocket.shutdown(fd) }

  /// Gives the connection up, from any thread: a request on it is no longer waited for (its
  /// deadline passed, its task was cancelled). Protocol 1 answers in order, so its late reply
  /// would be taken for the next request's: the connection ends instead, and every request in
  /// flight on it fails with `error` (the reactor resumes them when it sees the end, as for any
  /// end); requests made from then on go on a new connection.
  func abandon(_ error: ClientError) {
    let first = pending.withLock { pending -> Bool in
      guard pending.failure == nil else { return false }
      pending.failure = error
      pending.abandoned = error
      closed.store(true, ordering: .releasing)
      return true
    }
    if first { UnixSocket.shutdown(fd) }
  }

  /// On the reactor's thread: gives the connection up (`abandon`) if a request's deadline has
  /// passed at `now`; else the earliest deadline of its requests (`UInt64.max`: none). A look
  /// at each request in flight, on the reactor's alarm only, not on each reply.
  func expire(_ now: UInt64) -> UInt64 {
    var earliest = UInt64.max
    var passed: Double?
    func look(_ waiter: Waiter) {
      guard waiter.deadline != 0 else { return }
      if waiter.deadline <= now { passed = max(passed ?? 0, waiter.timeout) }
      earliest = min(earliest, waiter.deadline)
    }
    if let current = reading.current { look(current) }
    pending.withLock { pending in
      guard pending.failure == nil else { return }
      for index in pending.head..<pending.waiters.count { look(pending.waiters[index]) }
    }
    guard let passed else { return earliest }
    abandon(.timedOut(path: path, seconds: passed))
    return .max
  }

  /// Writes what is queued, as long as the socket takes it, then leaves the rest to the reactor
  /// for when the socket has room. Called by whoever set `flushing`.
  func flush() {
    var bytes: [UInt8] = []
    var taken = 0
    while true {
      let done = pending.withLock { pending -> Bool in
        swap(&pending.output, &bytes)
        taken = pending.unsent
        pending.unsent = 0
        guard bytes.isEmpty else { return false }
        pending.flushing = false
        if pending.waitingForRoom { Reactor.shared.watch(fd, writable: false) }
        pending.waitingForRoom = false
        return true
      }
      if done { return }
      let written = bytes.withUnsafeBytes { try? fd.write($0) }
      switch written {
      case .done(let count)? where count == bytes.count:
        bytes.removeAll(keepingCapacity: true)
      case .done(let count)?:
        // Part of a request left: those taken are sent as far as anyone can tell.
        return waitForRoom(leaving: bytes[count...], unsent: 0)
      case .wouldBlock?:
        return waitForRoom(leaving: bytes[...], unsent: taken)
      case nil:
        return failUnsent(taken)
      }
    }
  }

  /// On the reactor's thread, when epoll says the socket has room: writes the rest, if it was
  /// left for then (epoll may report room after it was written by then).
  func roomToWrite() {
    guard pending.withLock({ $0.waitingForRoom }) else { return }
    flush()
  }

  /// Puts back what the socket did not take, ahead of what was queued meanwhile, for the reactor
  /// to write once epoll says the socket has room.
  private func waitForRoom(leaving rest: ArraySlice<UInt8>, unsent: Int) {
    pending.withLock { pending in
      pending.output.insert(contentsOf: rest, at: 0)
      pending.unsent += unsent
      if !pending.waitingForRoom { Reactor.shared.watch(fd, writable: true) }
      pending.waitingForRoom = true
    }
  }

  /// The socket took none of a write (the daemon has gone, unseen so far): the requests of
  /// those bytes (`taken` of them) and of any queued since never left, and go again on a new
  /// connection (`AsyncClient.send`); the reader fails the rest when it sees the end.
  private func failUnsent(_ taken: Int) {
    // A daemon at --max-clients answers ERR BUSY and closes, maybe before the first write: then
    // the requests fail as busy, rather than going again only to meet the same.
    let busy = isBusyWaiting
    let unsent = pending.withLock { pending -> ArraySlice<Waiter> in
      pending.failure = pending.failure ?? (busy ? .busy(path: path) : .connectionLost(path: path))
      closed.store(true, ordering: .releasing)
      let count = min(taken + pending.unsent, pending.waiters.count - pending.head)
      pending.unsent = 0
      defer { pending.waiters.removeLast(count) }
      return pending.waiters.suffix(count)
    }
    UnixSocket.shutdown(fd)
    for waiter in unsent { waiter.resume(busy ? .failed(.busy(path: path)) : .notSent) }
  }

  /// Whether the daemon's first line, waiting unread, is `ERR BUSY`.
  private var isBusyWaiting: Bool {
    let line = Array("ERR BUSY".utf8)
    var bytes = [UInt8](repeating: 0, count: line.count)
    let result = bytes.withUnsafeMutableBytes { try? fd.peek(into: $0) }
    guard case .done(let count)? = result, count == line.count else { return false }
    return bytes == line
  }

  /// On the reactor's thread: reads what has arrived (once; epoll reports the socket again
  /// while more waits) and hands each complete reply to its waiter. False at the end of the
  /// connection, or when the daemon broke the protocol.
  func readAvailable(into chunk: inout [UInt8]) -> Bool {
    // recv(2) through the shim, as the daemon reads: no VFS layer, no cancellation point.
    let result = try? chunk.withUnsafeMutableBytes { try fd.receive(into: $0) }
    switch result {
    case .done(let count) where count > 0: reading.lines.append(chunk[..<count])
    case .wouldBlock: return true
    default: return false
    }
    do throws(ClientError) {
      while let piece = try reading.lines.nextLine({ (line) throws(ClientError) in
        try reading.assembler.take(line)
      }) {
        guard case .reply(let reply)? = consume piece else { continue }
        // The daemon sends BUSY only as the first line of a connection it will not serve: every
        // request on it fails as busy, not as a lost connection.
        if reply.status.isBusy { throw .busy(path: path) }
        if reading.current == nil { reading.current = pending.withLock { $0.takeFirst() } }
        guard reading.current != nil else { throw .malformedReply("a reply to no request: \(reply.status)") }
        if reading.current!.add(consume reply) { reading.current = nil }
      }
      return true
    } catch {
      reading.failure = error
      return false
    }
  }

  /// On the reactor's thread, once the connection is over: every request waiting fails.
  func ended() {
    UnixSocket.shutdown(fd)
    let (failure, left, unsent) = pending.withLock { pending in
      let failure = pending.abandoned ?? reading.failure
      pending.failure = failure
      closed.store(true, ordering: .releasing)
      let unsent = min(pending.unsent, pending.waiters.count - pending.head)
      defer {
        pending.waiters = []
        pending.head = 0
        pending.unsent = 0
      }
      return (
        failure, pending.waiters[pending.head..<(pending.waiters.count - unsent)],
        pending.waiters.suffix(unsent)
      )
    }
    reading.current?.resume(.failed(failure))
    reading.current = nil
    for waiter in left { waiter.resume(.failed(failure)) }
    for waiter in unsent { waiter.resume(.notSent) }
  }
}

extension Link.Pending {
  mutating func takeFirst() -> Waiter? {
    guard head < waiters.count else { return nil }
    let waiter = waiters[head]
    head += 1
    // The waiters taken are dropped once they are half the queue, and a few: each is moved at
    // most once, and at one request in flight the queue is not emptied on every reply (which
    // cost 1% of client-load's CPU).
    if head >= 32 && head * 2 >= waiters.count {
      waiters.removeSubrange(0..<head)
      head = 0
    }
    return waiter
  }
}

/// The replies one call waits for, and the task waiting: resumed once, with all of them, the
/// error that ended the connection, or word that its requests never left. A value, queued with
/// its requests' bytes and taken out of the queue (under the lock) by whoever resumes it: the
/// reactor's thread as replies come and when the connection ends, a writer that finds its
/// requests unsent. (A class here was an allocation, and its retains, on every request.)
struct Waiter {
  enum Outcome {
    case replies(Replies)
    case failed(ClientError)
    /// The connection had ended before any byte of the requests was written.
    case notSent
  }
  typealias Resumption = UnsafeContinuation<Outcome, Never>

  let count: Int
  /// When the call stops waiting, in `monotonicMicroseconds()`; 0 for never.
  let deadline: UInt64
  /// The timeout the deadline came from, in seconds, for `ClientError.timedOut`.
  let timeout: Double
  private var replies: [Reply] = []
  private let continuation: Resumption?

  init(count: Int, deadline: UInt64 = 0, timeout: Double = 0, continuation: Resumption?) {
    self.count = count
    self.deadline = deadline
    self.timeout = timeout
    self.continuation = continuation
  }

  /// True once it has them all (and its task was resumed with them).
  mutating func add(_ reply: consuming Reply) -> Bool {
    if count == 1 {
      resume(.replies(.one(reply)))
      return true
    }
    if replies.isEmpty { replies.reserveCapacity(count) }
    replies.append(reply)
    guard replies.count == count else { return false }
    resume(.replies(.many(replies)))
    return true
  }

  func resume(_ outcome: Outcome) { continuation?.resume(returning: outcome) }
}

/// What a call's requests got back: most calls are one request, whose reply comes without an
/// array around it (an allocation a request, measured in client-load).
@usableFromInline enum Replies: Sendable {
  case one(Reply)
  case many([Reply])
}
