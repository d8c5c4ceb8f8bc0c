import Posix
import Synchronization

/// One connection of an `AsyncClient`: any number of tasks write requests on it, each at once
/// (pipelining), and the `Reactor`'s thread reads the replies and hands each to the oldest
/// request waiting, as protocol 1 answers in order.
///
/// A request's bytes and its waiter are queued together, so the order of the waiters is the
/// order of the bytes. The writer that finds nobody writing writes what is queued, and goes on
/// writing what others queue meanwhile: requests made at once leave in one `write(2)` (issue 35
/// measured one write per request as much of the library's cost). The reader never waits for a
/// writer, so a daemon that stops reading until its replies are read (as sectiond does when a
/// client's replies pile up) cannot deadlock one.
final class Link: Sendable {
  let path: String
  private let fd: FileDescriptor
  private let pending = Mutex(Pending())
  /// What the reactor's thread has read and not yet made into replies; only it touches this.
  private let reading: Reading

  private final class Reading: @unchecked Sendable {
    var lines: LineReader
    var assembler = ReplyAssembler()
    var failure: ClientError
    init(path: String) {
      lines = LineReader(path: path)
      failure = .connectionLost(path: path)
    }
  }

  fileprivate struct Pending: ~Copyable {
    var waiters: [Waiter] = []
    var head = 0
    /// Why the connection ended; every request from then on fails with it.
    var failure: ClientError?
    /// Bytes queued for the socket, and whether a writer is writing them.
    var output: [UInt8] = []
    var flushing = false
  }

  /// Connects; the reactor reads it until the connection ends (`close`, or the daemon).
  init(path: String, name: String?) throws(ClientError) {
    self.path = path
    reading = Reading(path: path)
    fd = try Connection.socket(path: path)
    guard Reactor.shared.add(self, fd: fd) else {
      fd.close()
      throw .cannotConnect(path: path, errno: Errno(0))
    }
    if let line = name.flatMap(ClientName.line) { send([line], to: Waiter(count: 1, continuation: nil)) }
  }

  deinit { fd.close() }

  /// True once the connection has ended.
  var isClosed: Bool { pending.withLock { $0.failure != nil } }

  /// Queues `lines` and `waiter` (for `waiter.count` replies), and writes them unless another
  /// writer is at it, which then writes them too.
  func send(_ lines: [String], to waiter: Waiter) {
    let started = pending.withLock { pending -> Result<Bool, ClientError> in
      if let failure = pending.failure { return .failure(failure) }
      for _ in 0..<waiter.count { pending.waiters.append(waiter) }
      for line in lines {
        pending.output += line.utf8
        pending.output.append(0x0A)
      }
      if pending.flushing { return .success(false) }
      pending.flushing = true
      return .success(true)
    }
    switch started {
    case .failure(let failure): return waiter.fail(failure)
    case .success(false): return
    case .success(true): break
    }
    while true {
      let bytes = pending.withLock { pending -> [UInt8]? in
        guard !pending.output.isEmpty else {
          pending.flushing = false
          return nil
        }
        defer { pending.output = [] }
        return pending.output
      }
      guard let bytes else { return }
      // A write that fails leaves the waiters queued: the reader fails them when it sees the end.
      if !write(bytes) { UnixSocket.shutdown(fd) }
    }
  }

  /// Ends the connection: requests waiting fail with `connectionLost`.
  func close() { UnixSocket.shutdown(fd) }

  /// Writes all of `bytes`, waiting as long as the socket takes; false once it takes nothing.
  private func write(_ bytes: [UInt8]) -> Bool {
    let fd = fd
    let written: Void? = try? Connection.write(bytes, to: fd, path: path) { () throws(ClientError) in
      guard (try? Poll.wait([(fd, .writable)], milliseconds: -1)) != nil else {
        throw .connectionLost(path: path)
      }
    }
    return written != nil
  }

  /// On the reactor's thread: reads what has arrived (once; epoll reports the socket again
  /// while more waits) and hands each complete reply to its waiter. False at the end of the
  /// connection, or when the daemon broke the protocol.
  func readAvailable(into chunk: inout [UInt8]) -> Bool {
    let result = try? chunk.withUnsafeMutableBytes { try fd.read(into: $0) }
    switch result {
    case .done(let count) where count > 0: reading.lines.append(chunk[..<count])
    case .wouldBlock: return true
    default: return false
    }
    do throws(ClientError) {
      while let line = try reading.lines.nextLine() {
        guard case .reply(let reply) = try reading.assembler.take(line) else { continue }
        guard let waiter = pending.withLock({ $0.takeFirst() }) else { throw .malformedReply(line) }
        waiter.add(reply)
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
    let failure = reading.failure
    let left = pending.withLock { pending in
      pending.failure = failure
      defer { pending.waiters = [] }
      return pending.waiters[pending.head...]
    }
    for waiter in left { waiter.fail(failure) }
  }
}

extension Link.Pending {
  mutating func takeFirst() -> Waiter? {
    guard head < waiters.count else { return nil }
    let waiter = waiters[head]
    head += 1
    if head == waiters.count {
      waiters.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 1024 && head * 2 >= waiters.count {
      waiters.removeSubrange(0..<head)
      head = 0
    }
    return waiter
  }
}

/// The replies one call waits for, and the task waiting: resumed once, with all of them or the
/// error that ended the connection. Touched by the reactor's thread only, once queued.
final class Waiter: @unchecked Sendable {
  typealias Resumption = CheckedContinuation<Result<[Reply], ClientError>, Never>

  let count: Int
  private var replies: [Reply] = []
  private var continuation: Resumption?

  init(count: Int, continuation: Resumption?) {
    self.count = count
    self.continuation = continuation
    replies.reserveCapacity(count)
  }

  func add(_ reply: Reply) {
    replies.append(reply)
    if replies.count == count { resume(.success(replies)) }
  }

  func fail(_ error: ClientError) { resume(.failure(error)) }

  private func resume(_ result: Result<[Reply], ClientError>) {
    continuation?.resume(returning: result)
    continuation = nil
  }
}
