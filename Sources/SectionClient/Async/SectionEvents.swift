/// The daemon's changes as an `AsyncSequence` of `Event`s (see `AsyncClient.events()`): a
/// `.state` snapshot first, then each change as it happens, across daemon restarts.
/// Each iterator follows on a connection (and a thread) of its own, which end with it.
public struct SectionEvents: AsyncSequence, Sendable {
  public typealias Element = Event
  public typealias Failure = ClientError

  let path: String
  let name: String?
  let after: UInt64?

  /// The events of the daemon at `path`, without a connection for requests; `after` resumes
  /// from a revision seen before (see `AsyncClient.events(after:)`).
  public init(path: String, name: String? = nil, after revision: UInt64? = nil) {
    self.path = path
    self.name = name
    self.after = revision
  }

  public func makeAsyncIterator() -> Iterator {
    Iterator(
      feed: Feed(subscriber: Subscriber(path: path, name: name, after: after), sink: Channel(capacity: 1024))
      {
        subscriber, channel throws(ClientError) in
        try subscriber.run { update, _ throws(ClientError) in
          switch update {
          case .subscribed(let snapshot): !channel.push(.state(snapshot))
          case .event(let event): !channel.push(event)
          }
        }
      })
  }

  /// Follows on a connection and a thread of its own, both ended when the iterator goes away
  /// or its task is cancelled.
  public struct Iterator: AsyncIteratorProtocol {
    let feed: Feed<Channel<Event>>

    public mutating func next() async throws(ClientError) -> Event? { try await feed.next() }

    public mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError) -> Event? {
      try await feed.next()
    }
  }
}

/// The state a view needs as an `AsyncSequence` of `SectionState` values (see
/// `AsyncClient.states()`): the first once subscribed, then one after each change.
public struct SectionStates: AsyncSequence, Sendable {
  public typealias Element = SectionState
  public typealias Failure = ClientError

  let path: String
  let name: String?

  public func makeAsyncIterator() -> Iterator {
    Iterator(
      feed: Feed(subscriber: Subscriber(path: path, name: name), sink: Channel(capacity: 1024)) {
        subscriber, channel throws(ClientError) in
        var keeper = StateKeeper(followsItems: false)
        try subscriber.run { update, client throws(ClientError) in
          guard let state = try keeper.take(update, on: client) else { return false }
          return !channel.push(state)
        }
      })
  }

  /// Follows on a connection and a thread of its own, both ended when the iterator goes away
  /// or its task is cancelled.
  public struct Iterator: AsyncIteratorProtocol {
    let feed: Feed<Channel<SectionState>>

    public mutating func next() async throws(ClientError) -> SectionState? { try await feed.next() }

    public mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError)
      -> SectionState?
    {
      try await feed.next()
    }
  }
}
