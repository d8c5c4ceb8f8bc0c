import Posix
import Synchronization

/// Follows the daemon's events on a connection of its own, and outlives the daemon: when the
/// connection ends (a restart, a crash, SIGKILL) it connects again, waiting longer each time up
/// to 2 s, and resumes where it was. A daemon that keeps the changes since the last revision
/// seen (`SUBSCRIBE FROM`) sends the missed events, so nothing is skipped; one that does not
/// (or an older daemon) sends a `state` snapshot, which is handed on as `.state`.
///
/// Blocking: `watch` runs it on its main thread, the async `SectionEvents` on a thread of its own.
public final class Subscriber: Sendable {
  /// Waits between reconnection attempts: short at first, so a restart is noticed quickly,
  /// never longer than the last, so a daemon that comes back is found within 2 s.
  public static let backOffMilliseconds = [100, 200, 400, 800, 1600, 2000]

  /// What happened to the subscription, for a program to report.
  public enum News: Equatable, Sendable {
    /// The connection ended; reconnecting.
    case lost
    /// Connected again; subscribing follows.
    case reconnected
  }

  /// What `handle` is given.
  public enum Update: Equatable, Sendable {
    /// A subscription began with the whole state: the first, or one that could not resume.
    case subscribed(StateSnapshot)
    /// A change, as it happened or (after a resumed subscription) as it was missed.
    case event(Event)
  }

  public let path: String
  let name: String?
  /// False: every subscription starts with a snapshot, even where the daemon could resume.
  let resumes: Bool
  private let stopped = Atomic<Bool>(false)
  /// The connection being read, so `stop()` can wake the thread blocked on it. Held here until
  /// `run` is done with it, so that its socket stays open meanwhile: a descriptor number kept
  /// past its close could be another connection's by the time `stop()` shuts it down.
  private let current = Mutex<Held?>(nil)

  /// A connection `run` uses, shared with `stop()`, which only calls shutdown(2) on its
  /// socket: safe from any thread.
  private final class Held: @unchecked Sendable {
    let client: Client
    init(_ client: Client) { self.client = client }
  }
  /// The last revision heard of, where a new subscription resumes.
  private let lastRevision = Mutex<UInt64?>(nil)

  /// `revision`: resume after it on the first connection too (nil: start with a snapshot).
  /// `resumes: false` starts every subscription with a snapshot instead: for a reader who is
  /// told where things stand after a gap rather than what happened during it.
  public init(path: String, name: String? = nil, after revision: UInt64? = nil, resumes: Bool = true) {
    self.path = path
    self.name = name
    self.resumes = resumes
    lastRevision.withLock { $0 = revision }
  }

  /// A subscriber whose first connection is `client`, made by the caller so that it fails
  /// where the caller can say so (`Follower`).
  convenience init(connected client: Client, name: String?, after revision: UInt64?) {
    self.init(path: client.path, name: name, after: revision)
    current.withLock { $0 = Held(client) }
  }

  /// The last revision heard of.
  public var revision: UInt64? { lastRevision.withLock { $0 } }

  /// Subscribes and hands each event to `handle`, with the connection for requests of its own
  /// (events that arrive meanwhile wait), until `handle` returns true or `stop()` is called.
  /// Only the first connection may fail: after that the daemon is waited for.
  public func run(
    news: (News) -> Void = { _ in },
    handle: (Update, Client) throws(ClientError) -> Bool
  ) throws(ClientError) {
    try run(news: news, current: {}, handle: handle)
  }

  /// `run`, telling `current` each time a subscription has begun (resumed, or its snapshot
  /// handled): from then on what `handle` was given is where the daemon is.
  func run(
    news: (News) -> Void, current isCurrent: () -> Void,
    handle: (Update, Client) throws(ClientError) -> Bool
  ) throws(ClientError) {
    defer { current.withLock { $0 = nil } }
    // The connection made with the subscriber (`init(connected:)`), else a new one.
    var client: Client
    if let made = current.withLock({ $0?.client }) { client = made } else { client = try connect() }
    while true {
      do throws(ClientError) {
        if try subscribe(client, handle: handle) { return }
        isCurrent()
        if try follow(client, handle: handle) { return }
      } catch .connectionLost {
        // Gone in the middle of a reply: the same as a clean close, reconnect below.
      }
      if stopped.load(ordering: .relaxed) { return }
      news(.lost)
      guard let next = reconnect() else { return }
      client = next
      news(.reconnected)
    }
  }

  /// Ends `run` from another thread, at once even while it waits for an event.
  public func stop() {
    stopped.store(true, ordering: .relaxed)
    current.withLock { held in held.map { UnixSocket.shutdown($0.client.connection.fd) } }
  }

  private func connect() throws(ClientError) -> Client {
    let client = try Client(path: path, name: name)
    let held = Held(client)
    current.withLock { $0 = held }
    if stopped.load(ordering: .relaxed) { UnixSocket.shutdown(client.connection.fd) }
    return client
  }

  /// SUBSCRIBE FROM the last revision heard of, or SUBSCRIBE; a snapshot goes to `handle`.
  /// True when `handle` asked to stop.
  private func subscribe(_ client: Client, handle: (Update, Client) throws(ClientError) -> Bool)
    throws(ClientError) -> Bool
  {
    let after = resumes ? revision : nil
    var reply = try client.request(Subscribing.request(after: after))
    if after != nil, Subscribing.start(of: reply) == .refused {
      reply = try client.request(Subscribing.request(after: nil))
    }
    _ = try reply.succeeded()
    guard case .snapshot(let snapshot) = Subscribing.start(of: reply) else { return false }
    lastRevision.withLock { $0 = snapshot.revision }
    return try handle(.subscribed(snapshot), client)
  }

  /// Hands on events until the connection ends (false) or `handle` asks to stop (true).
  private func follow(_ client: Client, handle: (Update, Client) throws(ClientError) -> Bool)
    throws(ClientError)
    -> Bool
  {
    while let event = try client.nextEvent() {
      if let revision = event.revision { lastRevision.withLock { $0 = max($0 ?? 0, revision) } }
      if try handle(.event(event), client) { return true }
    }
    return false
  }

  /// Tries again and again, waiting longer each time up to the cap, until the daemon answers;
  /// nil once stopped.
  private func reconnect() -> Client? {
    current.withLock { $0 = nil }
    var attempt = 0
    while !stopped.load(ordering: .relaxed) {
      let delays = Subscriber.backOffMilliseconds
      ProcessInfo.sleep(milliseconds: delays[min(attempt, delays.count - 1)])
      attempt += 1
      if let client = try? connect() { return client }
    }
    return nil
  }
}
