import Posix
import Synchronization

/// The daemon's state (or its events) and the answers to requests, for a program that runs a
/// poll(2) loop of its own rather than tasks (a terminal ui, as `sectionctl ui`; a shell that
/// prints events above the line being typed): what `AsyncClient.states()`, `events()` and
/// `perform` give async code, handed over through one descriptor, so that the program never
/// waits for the daemon however slow or busy it is.
///
/// The subscription runs on a thread of its own, reconnects by itself and resumes where it was
/// (`Subscriber`). Following `.state`, it keeps a `SectionState` with the items of the open
/// sections (`SectionState(snapshot:view:)`); following `.events`, it hands each event on.
/// Requests go out at once on an `AsyncClient`, connected at the first; their answers come
/// back the same way. Poll `descriptor` for readable, then `take()` what came.
public final class Follower: Sendable {
  /// What a follower follows.
  public enum Subject: Sendable {
    /// The state a view needs, with the open sections' items (`.state` updates).
    case state
    /// The events as they happen (`.subscribed` and `.event` updates), resuming after
    /// `after` (nil: starting with a snapshot).
    case events(after: UInt64?)
  }

  /// What `take()` returns, in the order it happened.
  public enum Update: Sendable {
    /// `.state`: the state after a change, or after a subscription began. States that follow
    /// one another are handed over as the last of them.
    case state(SectionState)
    /// `.events`: a subscription began with this snapshot (the first, or one that could not
    /// resume where the last ended).
    case subscribed(StateSnapshot)
    /// `.events`: a change, as it happened or (after a resumed subscription) as it was missed.
    case event(Event)
    /// The subscription's connection ended (reconnecting), or was made again (subscribing).
    case news(Subscriber.News)
    /// A subscription has begun, or resumed after a reconnection: what was handed over is
    /// where the daemon is.
    case current
    /// `.state`: the daemon is closing the connection (`!bye`), for this reason.
    case bye(String)
    /// The subscription met an error (a refused or broken reply) and starts again.
    case problem(ClientError)
    /// The subscription ended for good: with this error, or (nil) stopped.
    case ended(ClientError?)
    /// The answer to the request `perform` gave this ticket: nil when it succeeded.
    case answered(ticket: Int, error: ClientError?)
  }

  /// The daemon's control (or read-only) socket.
  public let path: String
  private let name: String?
  private let requests = Mutex<AsyncClient?>(nil)
  private let mailbox: Mailbox
  private let feed: Feed<Mailbox>
  private let tickets = Atomic<Int>(0)

  /// Connects to the socket at `path` (failing as `Client` does, so that a program can say so
  /// before it starts) and follows `subject` on that connection. The connections call
  /// themselves `name` (`CLIENT NAME`).
  public init(path: String, name: String? = nil, following subject: Subject = .state) throws(ClientError) {
    self.path = path
    self.name = name
    let client = try Client(path: path, name: name)
    let mailbox = try Mailbox(path: path)
    self.mailbox = mailbox
    var after: UInt64?
    if case .events(let revision) = subject { after = revision }
    feed = Feed(subscriber: Subscriber(connected: client, name: name, after: after), sink: mailbox) {
      subscriber, mailbox throws(ClientError) in
      var keeper = StateKeeper(followsItems: true)
      // A state kept and not yet posted: one is posted once no more events have been read, not
      // after each (under load a read brings many), so that the state is changed in place
      // rather than copied for every event the poll loop takes.
      var unposted = false
      try subscriber.run(news: { mailbox.post(.news($0)) }, current: { mailbox.post(.current) }) {
        update, client throws(ClientError) in
        guard case .state = subject else {
          switch update {
          case .subscribed(let snapshot): mailbox.post(.subscribed(snapshot))
          case .event(let event): mailbox.post(.event(event))
          }
          return false
        }
        if case .event(.bye(let reason)) = update { mailbox.post(.bye(reason)) }
        do throws(ClientError) {
          if try keeper.take(update, on: client) != nil { unposted = true }
          let more = client.hasPendingEvents || client.connection.hasReadAhead
          if case .event = update, more { return false }
          if unposted, let state = keeper.state {
            mailbox.post(.state(state))
            unposted = false
          }
        } catch .connectionLost(let path) {
          throw .connectionLost(path: path)
        } catch {
          // Said, then as a lost connection: the subscriber connects again after its wait.
          mailbox.post(.problem(error))
          throw .connectionLost(path: client.path)
        }
        return false
      }
    }
  }

  /// Readable while updates wait to be taken.
  public var descriptor: Int32 { mailbox.wakeUp.fd.rawValue }

  /// What came since the last call, in order; the descriptor is not readable after it until
  /// something more comes.
  public func take() -> [Update] { mailbox.take() }

  /// Sends `request` at once; its answer comes as `.answered` with the ticket returned.
  @discardableResult
  public func perform<Value>(_ request: Request<Value>) -> Int {
    let ticket = tickets.add(1, ordering: .relaxed).newValue
    let mailbox = mailbox
    // On the library's thread, which connects if need be: never on the caller's.
    Task(executorPreference: AsyncClient.executor) { [self] in
      do throws(ClientError) {
        _ = try await requestClient().perform(request)
        mailbox.post(.answered(ticket: ticket, error: nil))
      } catch {
        mailbox.post(.answered(ticket: ticket, error: error))
      }
    }
    return ticket
  }

  /// The connection for requests, made at the first.
  private func requestClient() throws(ClientError) -> AsyncClient {
    try requests.withLock { (client: inout AsyncClient?) throws(ClientError) -> AsyncClient in
      if let client { return client }
      let made = try AsyncClient(path: path, name: name)
      client = made
      return made
    }
  }
}

extension Follower {
  /// The updates waiting for the poll loop, under a lock, announced by an eventfd that reads
  /// as readable while any wait. A new state replaces one not yet taken, so a follower of the
  /// state never waits. Events are bounded as `Channel` bounds them: the subscription's thread
  /// waits while `capacity` wait (a shell running a long command does not take them), so the
  /// daemon sees a slow subscriber and sends a `!state` in place of what it skipped, rather
  /// than this process holding every event. Answers never wait: they come on the thread of
  /// every `AsyncClient` connection.
  fileprivate final class Mailbox: FeedSink, @unchecked Sendable {
    static let capacity = 1024
    let wakeUp: EventDescriptor
    private let condition = Condition()
    private var waiting: [Update] = []
    /// The follower has gone: the subscription's thread stops waiting.
    private var cancelled = false

    init(path: String) throws(ClientError) {
      do {
        wakeUp = try EventDescriptor()
      } catch {
        throw .cannotConnect(path: path, errno: (error as? PosixError)?.errno ?? .current)
      }
    }

    deinit { wakeUp.fd.close() }

    func post(_ update: Update) {
      let first = condition.withLock { () -> Bool in
        if update.isState, waiting.last?.isState == true {
          waiting[waiting.count - 1] = update
          return false
        }
        let waits = if case .answered = update { false } else { true }
        while waits && !cancelled && waiting.count >= Mailbox.capacity { condition.wait() }
        waiting.append(update)
        return waiting.count == 1
      }
      if first { wakeUp.signal() }
    }

    func take() -> [Update] {
      wakeUp.reset()
      return condition.withLock {
        defer {
          waiting = []
          condition.broadcast()
        }
        return waiting
      }
    }

    func finish(_ error: ClientError?) { post(.ended(error)) }

    func cancel() {
      condition.withLock {
        cancelled = true
        condition.broadcast()
      }
    }
  }
}

extension Follower.Update {
  fileprivate var isState: Bool {
    if case .state = self { true } else { false }
  }
}
