import Posix
import Synchronization

/// The daemon's state and answers for a program that runs a poll(2) loop of its own rather
/// than tasks (a terminal ui, as `sectionctl ui`): what `AsyncClient.states()` and `perform`
/// give async code, handed over through one descriptor, so that the program never waits for
/// the daemon however slow or busy it is.
///
/// The state is kept on a thread of its own, on a subscription that reconnects by itself and
/// resumes where it was (`Subscriber`), with the items of the open sections
/// (`SectionState(snapshot:view:)`). Requests go out at once on an `AsyncClient`; their
/// answers come back the same way. Poll `descriptor` for readable, then `take()` what came.
public final class StateFollower: Sendable {
  /// What `take()` returns, in the order it happened.
  public enum Update: Sendable {
    /// The state after a change, or after a subscription began. States that follow one
    /// another are handed over as the last of them.
    case state(SectionState)
    /// The subscription's connection ended (reconnecting), or was made again (subscribing).
    case news(Subscriber.News)
    /// A subscription has begun, or resumed after a reconnection: the last state is where
    /// the daemon is.
    case current
    /// The daemon is closing the connection (`!bye`), for this reason.
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
  private let requests: AsyncClient
  private let mailbox: Mailbox
  private let feed: Feed<Mailbox>
  private let tickets = Atomic<Int>(0)

  /// Connects to the socket at `path` (failing as `AsyncClient` does, so that a program can say
  /// so before it starts), then subscribes on a second connection of its own. Both call
  /// themselves `name` (`CLIENT NAME`).
  public init(path: String, name: String? = nil) throws(ClientError) {
    self.path = path
    requests = try AsyncClient(path: path, name: name)
    let mailbox = try Mailbox(path: path)
    self.mailbox = mailbox
    feed = Feed(subscriber: Subscriber(path: path, name: name), sink: mailbox) {
      subscriber, mailbox throws(ClientError) in
      var keeper = StateKeeper(followsItems: true)
      try subscriber.run(news: { mailbox.post(.news($0)) }, current: { mailbox.post(.current) }) {
        update, client throws(ClientError) in
        if case .event(.bye(let reason)) = update { mailbox.post(.bye(reason)) }
        do throws(ClientError) {
          if let state = try keeper.take(update, on: client) { mailbox.post(.state(state)) }
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
    let requests = requests
    let mailbox = mailbox
    Task(executorPreference: AsyncClient.executor) {
      do throws(ClientError) {
        _ = try await requests.perform(request)
        mailbox.post(.answered(ticket: ticket, error: nil))
      } catch {
        mailbox.post(.answered(ticket: ticket, error: error))
      }
    }
    return ticket
  }
}

extension StateFollower {
  /// The updates waiting for the poll loop, under a lock, announced by an eventfd that reads
  /// as readable while any wait. Never makes a producer wait: a new state replaces one not yet
  /// taken, so what waits stays a state and a few words however far the loop falls behind.
  fileprivate final class Mailbox: FeedSink {
    let wakeUp: EventDescriptor
    private let waiting = Mutex<[Update]>([])

    init(path: String) throws(ClientError) {
      do {
        wakeUp = try EventDescriptor()
      } catch {
        throw .cannotConnect(path: path, errno: (error as? PosixError)?.errno ?? .current)
      }
    }

    deinit { wakeUp.fd.close() }

    func post(_ update: Update) {
      let first = waiting.withLock { waiting in
        if update.isState, waiting.last?.isState == true {
          waiting[waiting.count - 1] = update
          return false
        }
        waiting.append(update)
        return waiting.count == 1
      }
      if first { wakeUp.signal() }
    }

    func take() -> [Update] {
      wakeUp.reset()
      return waiting.withLock { waiting in
        defer { waiting = [] }
        return waiting
      }
    }

    func finish(_ error: ClientError?) { post(.ended(error)) }

    func cancel() {}
  }
}

extension StateFollower.Update {
  fileprivate var isState: Bool {
    if case .state = self { true } else { false }
  }
}
