import Posix
import SectionGrammar

/// Protocol 1 over a `Connection`: requests answered in order, events kept aside until asked for.
public final class Client {
  /// How much of the events that arrive before a reply a client keeps, each counted as its
  /// line's bytes and `eventOverhead`; past it the request fails with `tooManyEvents`. What
  /// sectiond sends ahead of one reply is what it had queued for the subscriber (at most 64
  /// KiB, past which it sends one `!state` instead) and what the socket's buffers held, a few
  /// hundred KiB, over the one or two loop turns a reply waits: about 1 MiB at the most, a
  /// hundred thousand short events with their overhead, 8 MiB. 16 MiB is twice that. A
  /// `!state` says all that the events before it said, so it takes their place, as the daemon
  /// does for a subscriber that falls behind; the one `!state` is bounded by the line limit.
  public static let maximumPendingEventBytes = 16 << 20
  /// What a kept event costs beyond its line: the `Event` and its strings' headers, about.
  static let eventOverhead = 64

  package let connection: Connection
  /// Events that arrived while a reply was being read, oldest first from `pendingHead`: taken
  /// by index, so that draining n of them is O(n), and dropped once all are taken.
  private var pendingEvents: [Event] = []
  private var pendingHead = 0
  /// What the kept events cost, against `maximumPendingEventBytes`.
  private var pendingBytes = 0
  private var assembler: ReplyAssembler
  /// Lines sent ahead of the next request, whose replies are read and dropped: `CLIENT NAME`,
  /// which a daemon older than the history protocol refuses, harmlessly.
  private var preamble: [String] = []

  public var path: String { connection.path }

  /// Connects; with a `timeout`, every reply must have come within that many seconds from now.
  /// A `name` (see `ClientName`) goes to the daemon with the first request, in the same write.
  public init(path: String, timeout: Double? = nil, name: String? = nil) throws(ClientError) {
    try ClientName.check(name)
    connection = try Connection(path: path, timeout: timeout)
    assembler = ReplyAssembler(path: path)
    if let line = name.flatMap(ClientName.line) { preamble = [line] }
  }

  /// Sends one line and reads its reply, ERR or not (`succeeded()` turns ERR into an error).
  public func request(_ line: String) throws(ClientError) -> Reply {
    try request([line])[0]
  }

  /// Sends the lines between BATCH and END (which the daemon answers once) and reads the reply.
  public func request(batch lines: [String]) throws(ClientError) -> Reply {
    try request([Verb.batch.name] + lines + [Verb.end.name], replies: 1)[0]
  }

  /// Sends every line at once and reads their replies in order: one round trip, whatever the count.
  public func request(_ lines: [String], replies expected: Int? = nil) throws(ClientError) -> [Reply] {
    let skipped = preamble.count
    do {
      try connection.send(preamble + lines)
    } catch .connectionLost {
      // A daemon at --max-clients answers ERR BUSY and closes at once, maybe before this wrote.
      if let line = try? connection.readLine(), case .status(let status)? = try? ProtocolLine.parse(line),
        status.isBusy
      {
        throw .busy(path: path)
      }
      throw .connectionLost(path: path)
    }
    preamble = []
    var replies: [Reply] = []
    while replies.count < skipped + (expected ?? lines.count) {
      guard let line = try connection.readLine() else { throw .connectionLost(path: path) }
      do throws(ClientError) {
        switch try assembler.take(line) {
        // The daemon sends BUSY only as the first line of a connection it will not serve, which
        // the preamble's reply would otherwise have swallowed.
        case .reply(let reply) where reply.status.isBusy: throw .busy(path: path)
        case .reply(let reply): replies.append(reply)
        case .event(let event): try keep(event, bytes: line.utf8.count)
        case nil: break
        }
      } catch {
        // Past a bound, or not protocol 1: what follows cannot be read in step. The connection
        // is dropped, and with it what it held; a further request fails as connectionLost.
        dropPending()
        UnixSocket.shutdown(connection.fd)
        throw error
      }
    }
    return Array(replies.dropFirst(skipped))
  }

  /// Sends `request` and reads its reply as a value; the daemon's ERR as `ClientError.daemon`.
  @discardableResult
  public func perform<Value>(_ request: Request<Value>) throws(ClientError) -> Value {
    if let problem = request.problem { throw problem }
    return try request.value(from: self.request(request.lines, replies: request.replyCount))
  }

  /// Sends every request at once and reads their replies in order, one round trip whatever
  /// the count, as `AsyncClient.perform(each:)` does: each request's outcome, its value or its
  /// error, in its place. A request that cannot be sent as it is fails alone and is not sent;
  /// a failure of the connection throws.
  ///
  /// ```swift
  /// let outcomes = try client.perform(each: [.list.asReply, .reload().asReply, .list.asReply])
  /// ```
  public func perform<Value>(each requests: [Request<Value>]) throws(ClientError) -> [Result<
    Value, ClientError
  >] {
    let sent = requests.filter { $0.problem == nil }
    let replies = try request(sent.flatMap(\.lines), replies: sent.reduce(0) { $0 + $1.replyCount })
    var next = replies.startIndex
    return requests.map { request in
      if let problem = request.problem { return .failure(problem) }
      defer { next += request.replyCount }
      return Result { () throws(ClientError) in
        try request.value(from: replies[next..<next + request.replyCount])
      }
    }
  }

  /// Keeps an event that came before a reply, within `maximumPendingEventBytes`.
  private func keep(_ event: Event, bytes: Int) throws(ClientError) {
    if case .state = event { dropPending() }
    pendingBytes += bytes + Client.eventOverhead
    if pendingBytes > Client.maximumPendingEventBytes { throw .tooManyEvents(path: path) }
    pendingEvents.append(event)
  }

  private func dropPending() {
    pendingEvents.removeAll()
    pendingHead = 0
    pendingBytes = 0
  }

  /// The next event; nil when the daemon closes the connection. Data or status lines here break the protocol.
  public func nextEvent() throws(ClientError) -> Event? {
    if pendingHead < pendingEvents.count {
      let event = pendingEvents[pendingHead]
      pendingHead += 1
      if pendingHead == pendingEvents.count { dropPending() }
      return event
    }
    guard let line = try connection.readLine() else { return nil }
    guard case .event(let event) = try ProtocolLine.parse(line) else { throw .malformedReply(line) }
    return event
  }

  /// True when events have already been read and wait to be handled.
  public var hasPendingEvents: Bool { pendingHead < pendingEvents.count }
}
