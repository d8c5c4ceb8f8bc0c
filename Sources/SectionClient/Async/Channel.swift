import Posix

/// Hands what a thread produces to one task that consumes it, in order. Bounded: the producer
/// waits while `capacity` elements wait, so a consumer that falls behind makes the daemon see a
/// slow subscriber (and send a `!state` snapshot in place of what it skipped) rather than
/// making this process hold every event in memory.
final class Channel<Element: Sendable>: @unchecked Sendable {
  typealias Resumption = CheckedContinuation<Result<Element?, ClientError>, Never>

  private let condition = Condition()
  private let capacity: Int
  private var buffer: [Element] = []
  private var head = 0
  private var waiting: Resumption?
  /// Set once the producer is done: nil for a plain end, else why it ended.
  private var end: Result<Void, ClientError>?
  /// The consumer has gone: the producer stops.
  private var cancelled = false

  init(capacity: Int) { self.capacity = capacity }

  /// The producer's side: waits while the buffer is full; false once the consumer has gone.
  func push(_ element: Element) -> Bool {
    condition.withLock {
      while !cancelled && buffer.count - head >= capacity { condition.wait() }
      guard !cancelled else { return false }
      if let waiting {
        self.waiting = nil
        waiting.resume(returning: .success(element))
      } else {
        buffer.append(element)
      }
      return true
    }
  }

  /// The producer is done; the consumer gets what is buffered, then the end (or `error`).
  func finish(_ error: ClientError? = nil) {
    condition.withLock {
      end = error.map { .failure($0) } ?? .success(())
      waiting?.resume(returning: error.map { .failure($0) } ?? .success(nil))
      waiting = nil
    }
  }

  /// The consumer has gone (or was cancelled): the producer's next push returns false.
  func cancel() {
    condition.withLock {
      cancelled = true
      condition.broadcast()
      waiting?.resume(returning: .success(nil))
      waiting = nil
    }
  }

  /// The next element; nil at the end.
  func next() async -> Result<Element?, ClientError> {
    if let ready = condition.withLock({ take() }) { return ready }
    return await withCheckedContinuation { continuation in
      condition.withLock {
        if let ready = take() { return continuation.resume(returning: ready) }
        waiting = continuation
      }
    }
  }

  /// Inside the lock: what the consumer gets now, if anything is ready.
  private func take() -> Result<Element?, ClientError>? {
    if head < buffer.count {
      let element = buffer[head]
      head += 1
      if head == buffer.count {
        buffer.removeAll(keepingCapacity: true)
        head = 0
      }
      condition.broadcast()
      return .success(element)
    }
    if cancelled { return .success(nil) }
    switch end {
    case .failure(let error):
      end = .success(())
      return .failure(error)
    case .success: return .success(nil)
    case nil: return nil
    }
  }
}

/// Where a `Feed`'s thread puts what it makes: told when the thread is done (and why), and
/// told when its consumer has gone, which stops the producer.
protocol FeedSink: Sendable {
  func finish(_ error: ClientError?)
  func cancel()
}

extension Channel: FeedSink {}

/// A thread running a `Subscriber` into a sink (a `Channel` for a task, an `Inbox` for a
/// poll(2) loop), ended when its consumer goes away.
final class Feed<Sink: FeedSink>: Sendable {
  let sink: Sink
  private let subscriber: Subscriber

  /// `body` runs the subscriber on the thread, putting what it makes into the sink.
  init(
    subscriber: Subscriber, sink: Sink,
    body: @escaping @Sendable (Subscriber, Sink) throws(ClientError) -> Void
  ) {
    self.sink = sink
    self.subscriber = subscriber
    do {
      try Thread.start {
        do throws(ClientError) {
          try body(subscriber, sink)
          sink.finish(nil)
        } catch {
          sink.finish(error)
        }
      }.detach()
    } catch {
      sink.finish(.connectionLost(path: subscriber.path))
    }
  }

  deinit { Feed.stop(subscriber, sink) }

  fileprivate static func stop(_ subscriber: Subscriber, _ sink: Sink) {
    sink.cancel()
    subscriber.stop()
  }
}

extension Feed {
  /// The next element, or nil once the consumer's task is cancelled.
  func next<Element>() async throws(ClientError) -> Element? where Sink == Channel<Element> {
    let channel = sink
    let subscriber = subscriber
    return try await withTaskCancellationHandler {
      await channel.next()
    } onCancel: {
      Feed.stop(subscriber, channel)
    }.get()
  }
}
