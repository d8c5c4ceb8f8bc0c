import Posix
import SectionShared
import Synchronization

/// A connection to sectiond for async code: every request is a method, any number of tasks may
/// call them at once, and their requests go out at once on the one connection (pipelining),
/// each reply matched to its request in order.
///
/// ```swift
/// let daemon = try AsyncClient.connect(name: "my-panel")
/// let isOpen = try await daemon.toggle("network")
/// for try await state in daemon.states() { render(state.sections) }
/// ```
///
/// Errors are `ClientError`: `.daemon(code:message:)` carries the protocol's ERR code (NOSECTION,
/// READONLY, SYNTAX...) and message. When the daemon goes away, the requests in flight fail
/// with `.connectionLost` (a change among them may or may not have been made); the next request
/// connects again. `events()` and `states()` follow on connections of their own and reconnect
/// by themselves.
///
/// A request waits for its reply at most its timeout (the call's `timeout:`, else the
/// client's), and no longer than its task is not cancelled: it then fails with `.timedOut` or
/// `.cancelled`. Replies come in the order of the requests, so a reply given up on would be
/// taken for the next request's: the connection is closed instead, and every request in flight
/// on it fails with that same error (a change among them may or may not have been made); the
/// next request connects again. Without a timeout the library reads no clock and sets no timer.
public final class AsyncClient: Sendable {
  /// The daemon's control (or read-only) socket.
  public let path: String
  /// What the connections call themselves (`CLIENT NAME`), recorded with each change they make.
  public let name: String?
  /// How many seconds a request waits for its reply unless the call says otherwise; nil for no
  /// limit.
  public let timeout: Double?
  private let link: Mutex<Link?>

  /// Connects to the socket at `path`. A `name` the daemon would refuse (see `ClientName`) is
  /// refused here, with `.invalidArgument`, before anything is sent. With a `timeout`, every
  /// request waits at most that many seconds for its reply (and connecting as long for a
  /// daemon too busy to accept), unless its call gives its own.
  public init(path: String, name: String? = nil, timeout: Double? = nil) throws(ClientError) {
    try ClientName.check(name)
    self.timeout = try AsyncClient.checked(timeout, "timeout").flatMap { $0 > 0 ? $0 : nil }
    self.path = path
    self.name = name
    link = Mutex(try Link(path: path, name: name, timeout: self.timeout))
  }

  /// `seconds` if it is a timeout (0 or more; 0 is no limit), else `.invalidArgument`.
  private static func checked(_ seconds: Double?, _ argument: String) throws(ClientError) -> Double? {
    guard let seconds, !(seconds >= 0) else { return seconds }
    throw .invalidArgument(
      argument: argument, value: "\(seconds)", rule: "a timeout is 0 (no limit) or more seconds")
  }

  /// Connects as sectionctl does: the socket named (`socket`, else `$SECTIOND_SOCKET`), else
  /// for root the system daemon's, else the user's own daemon if it runs and the system's if
  /// not; with `readonly`, the read-only socket beside it. A `list` (else `$SECTIOND_LIST`)
  /// names one of several lists (`sectiond --list NAME`): its sockets in each of those places.
  /// `timeout` is the client's (see `init(path:name:timeout:)`).
  public static func connect(
    socket: String? = nil, readonly: Bool = false, list: String? = nil, name: String? = nil,
    timeout: Double? = nil
  ) throws(ClientError) -> AsyncClient {
    try connect(
      socket: socket, readonly: readonly, list: list, name: name, timeout: timeout, environment: .current)
  }

  /// `connect` with the environment given, for tests (see `SocketLocation`).
  package static func connect(
    socket: String?, readonly: Bool, list: String?, name: String?, timeout: Double? = nil,
    environment: Environment
  ) throws(ClientError) -> AsyncClient {
    var named: ListName?
    if let list {
      do {
        named = try ListName(validating: list)
      } catch {
        throw .invalidArgument(argument: "list", value: list, rule: ListName.rule)
      }
    }
    try ClientName.check(name)
    do {
      named = try SocketLocation.list(explicit: named, environment: environment)
    } catch {
      throw .invalidArgument(argument: "SECTIOND_LIST", value: error.name, rule: ListName.rule)
    }
    let candidates = SocketLocation.candidates(
      explicit: socket, readonly: readonly, list: named, environment: environment)
    return try AsyncClient(path: SocketLocation.find(candidates).path, name: name, timeout: timeout)
  }

  deinit { link.withLock { $0?.close() } }

  /// The thread that reads and writes every connection of this library in the process, as a
  /// task executor. A task that prefers it (`Task(executorPreference: AsyncClient.executor)`,
  /// `group.addTask(executorPreference:)`) makes its requests and gets their replies on that
  /// thread, with no hop between threads, and the requests it and others make in one turn leave
  /// together: the fastest way to make many. Whatever else such a task does holds up every
  /// connection's I/O meanwhile, so keep it to talking to the daemon.
  public static var executor: any TaskExecutor { Reactor.shared }

  /// Sends `request` and reads its reply as a value, waiting at most `timeout` seconds for it
  /// (nil: the client's `timeout`; 0: no limit). (Inlinable, as `perform(each:)` is, so
  /// that it is compiled for the caller's `Value`: unspecialized, each reply cost lookups of
  /// generic metadata, a tenth of the library's CPU in client-load.)
  @inlinable @discardableResult
  public nonisolated(nonsending) func perform<Value>(_ request: Request<Value>, timeout: Double? = nil)
    async throws(ClientError) -> Value
  {
    if let problem = request.problem { throw problem }
    switch try await exchange(request.lines, replies: request.replyCount, timeout: timeout) {
    case .one(let reply): return try request.value(from: reply)
    case .many(let replies): return try request.value(from: replies[...])
    }
  }

  /// Sends raw request lines and returns their `replies` (one per line unless given), in order:
  /// for requests this library has no method for. `timeout` as for `perform`.
  public nonisolated(nonsending) func send(_ lines: [String], replies: Int? = nil, timeout: Double? = nil)
    async throws(ClientError) -> [Reply]
  {
    if lines.isEmpty && (replies ?? 0) == 0 { return [] }
    switch try await exchange(lines, replies: replies ?? lines.count, timeout: timeout) {
    case .one(let reply): return [reply]
    case .many(let replies): return replies
    }
  }

  /// Sends `lines` and waits for their `count` replies, until `timeout` (or the client's) or
  /// the task's cancellation.
  @usableFromInline nonisolated(nonsending) func exchange(
    _ lines: [String], replies count: Int, timeout: Double?
  ) async throws(ClientError) -> Replies {
    let seconds = try AsyncClient.checked(timeout, "timeout") ?? self.timeout ?? 0
    // The clock is read only for a request with a timeout.
    let deadline = seconds > 0 ? monotonicMicroseconds() + UInt64(min(seconds, 1e9) * 1_000_000) : 0
    // Requests that never left (their connection had ended, not yet seen) go once more, on a new one.
    for _ in 0..<2 {
      if Task.isCancelled { throw .cancelled(path: path) }
      let link = try currentLink()
      // The cancellation handler and the continuation inherit the caller's executor: the
      // public `withTaskCancellationHandler` and `withUnsafeContinuation` first hop to their
      // `isolation` argument, which for a task that prefers the reactor meant a lookup of that
      // preference under the task's lock, once more per request each (5% of client-load's
      // instructions for the continuation; 530 instructions a request at 50 x 1 for the
      // handler, measured with bench/client_cost.py). The hop back to the
      // caller's isolation after it is this function's own (it is `nonisolated(nonsending)`),
      // so a caller on an actor resumes there.
      let outcome = await _unsafeInheritExecutor_withTaskCancellationHandler {
        await _unsafeInheritExecutor_withUnsafeContinuation { continuation in
          link.send(
            lines, to: Waiter(count: count, deadline: deadline, timeout: seconds, continuation: continuation))
        }
      } onCancel: {
        link.abandon(.cancelled(path: link.path))
      }
      switch outcome {
      case .replies(let replies): return replies
      case .failed(let error): throw error
      case .notSent:
        if deadline != 0 && monotonicMicroseconds() >= deadline {
          throw .timedOut(path: path, seconds: seconds)
        }
        continue
      }
    }
    throw .connectionLost(path: path)
  }

  /// Sends every request at once, in order, and waits for all their replies: many requests in
  /// flight from one task, with one wait for all of them (each request's own `perform` in its
  /// own task does the same, with a wait each). Each request's outcome, in order; a request that
  /// cannot be sent fails alone, and when the connection ends they all fail.
  ///
  /// ```swift
  /// let opened = await daemon.perform(each: ids.map { .open($0) })
  /// ```
  @inlinable
  public nonisolated(nonsending) func perform<Value>(each requests: [Request<Value>], timeout: Double? = nil)
    async -> [Result<Value, ClientError>]
  {
    // Through the buffer: a `Request` read out of an array is copied, its lines, closure and
    // error retained and released (5% of client-load's CPU); a buffer's element is borrowed.
    let (lines, replies) = requests.withUnsafeBufferPointer { requests in
      var lines: [String] = []
      var replies = 0
      for index in requests.indices where requests[index].problem == nil {
        lines += requests[index].lines
        replies += requests[index].replyCount
      }
      return (lines, replies)
    }
    let all: [Reply]
    do {
      all = try await send(lines, replies: replies, timeout: timeout)
    } catch {
      return requests.map { .failure($0.problem ?? error) }
    }
    return requests.withUnsafeBufferPointer { requests in
      var next = all.startIndex
      return requests.indices.map { index in
        if let problem = requests[index].problem { return .failure(problem) }
        let count = requests[index].replyCount
        defer { next += count }
        return Result { () throws(ClientError) in try requests[index].value(from: all[next..<next + count]) }
      }
    }
  }

  /// The connection, made again if the last one ended.
  private func currentLink() throws(ClientError) -> Link {
    try link.withLock { (link: inout Link?) throws(ClientError) -> Link in
      if let current = link, !current.isClosed { return current }
      let fresh = try Link(path: path, name: name, timeout: timeout)
      link = fresh
      return fresh
    }
  }

  /// Every change from now on, as it happens: a `.state` snapshot first, then events. After a
  /// restart or crash of the daemon it reconnects by itself, and resumes with the changes
  /// missed (or, where the daemon no longer has them, a new `.state` snapshot). `after`
  /// resumes from a revision seen before instead of starting with a snapshot.
  public func events(after revision: UInt64? = nil) -> SectionEvents {
    SectionEvents(path: path, name: name, after: revision)
  }

  /// The state a view needs, kept current: a new value after every change (see `SectionState`).
  public func states() -> SectionStates {
    SectionStates(path: path, name: name)
  }
}

// The requests, one method each (see `Request` for what each sends).
extension AsyncClient {
  /// Checks that the daemon answers.
  public nonisolated(nonsending) func ping() async throws(ClientError) { try await perform(.ping) }
  /// The daemon's version and the protocol version it speaks.
  public nonisolated(nonsending) func version() async throws(ClientError) -> DaemonVersion {
    try await perform(.version)
  }
  /// Every section, in order.
  public nonisolated(nonsending) func list() async throws(ClientError) -> [ListedSection] {
    try await perform(.list).sections
  }
  /// The sections and the items of the open ones, as an accordion shows them.
  public nonisolated(nonsending) func view() async throws(ClientError) -> Listing { try await perform(.view) }
  /// Every item of one section (an id, or an index in digits).
  public nonisolated(nonsending) func items(_ section: String) async throws(ClientError) -> [ListedItem] {
    try await perform(.items(section))
  }
  /// Opens a section (in exclusive mode, closing the open one); the revision reached.
  @discardableResult public nonisolated(nonsending) func open(_ section: String) async throws(ClientError)
    -> UInt64
  {
    try await perform(.open(section))
  }
  /// Closes a section; the revision reached.
  @discardableResult public nonisolated(nonsending) func close(_ section: String) async throws(ClientError)
    -> UInt64
  {
    try await perform(.close(section))
  }
  /// Opens a closed section or closes an open one: whether it is open now.
  @discardableResult public nonisolated(nonsending) func toggle(_ section: String) async throws(ClientError)
    -> Bool
  {
    try await perform(.toggle(section))
  }
  /// The mode now: `multi`, or `exclusive` (an accordion: one section open at most).
  public nonisolated(nonsending) func mode() async throws(ClientError) -> Mode { try await perform(.mode) }
  /// Switches the mode (to exclusive keeps the most recently opened section); the revision reached.
  @discardableResult public nonisolated(nonsending) func setMode(_ mode: Mode) async throws(ClientError)
    -> UInt64
  {
    try await perform(.setMode(mode))
  }
  /// The daemon's facts by STATUS's keys: list, pid, uid, systemd, uptime, config, state, clients,
  /// subscribers, and a fleet host's `fleet-…` keys (docs/CLIENT.md lists them); on the read-only
  /// socket only list, systemd and uptime.
  public nonisolated(nonsending) func status() async throws(ClientError) -> [String: String] {
    try await perform(.status)
  }
  /// The last `count` changes the daemon keeps, with who made them.
  public nonisolated(nonsending) func history(last count: Int? = nil) async throws(ClientError)
    -> [HistoryEntry]
  {
    try await perform(.history(last: count))
  }
  /// The changes after `revision`; `.daemon(code: "GONE", ...)` when they are no longer all kept.
  public nonisolated(nonsending) func history(after revision: UInt64) async throws(ClientError)
    -> [HistoryEntry]
  {
    try await perform(.history(after: revision))
  }

  /// The changes `build` adds, made as one: all of them, or (on the first that fails, which the
  /// error names as `line N`) none. The revision reached.
  ///
  /// ```swift
  /// try await daemon.batch { $0.add(.insert(id: "logs", title: "Logs")); $0.add(.open("logs")) }
  /// ```
  @discardableResult
  public nonisolated(nonsending) func batch(_ build: (inout BatchBuilder) -> Void) async throws(ClientError)
    -> UInt64
  {
    var builder = BatchBuilder()
    build(&builder)
    return try await perform(.batch(builder.changes))
  }
}

/// The changes of a `batch`, in order.
public struct BatchBuilder: Sendable {
  public private(set) var changes: [Request<UInt64>] = []
  /// Adds a change: `.open`, `.close`, `.insert`, `.rename`, `.insertItem`...
  public mutating func add(_ change: Request<UInt64>) { changes.append(change) }
}
