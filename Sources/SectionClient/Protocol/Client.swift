/// Protocol 1 over a `Connection`: requests answered in order, events kept aside until asked for.
public final class Client {
  package let connection: Connection
  /// Events that arrived while a reply was being read, oldest first.
  private var pendingEvents: [Event] = []
  private var assembler = ReplyAssembler()
  /// Lines sent ahead of the next request, whose replies are read and dropped: `CLIENT NAME`,
  /// which a daemon older than the history protocol refuses, harmlessly.
  private var preamble: [String] = []

  public var path: String { connection.path }

  /// Connects; with a `timeout`, every reply must have come within that many seconds from now.
  /// A `name` (see `ClientName`) goes to the daemon with the first request, in the same write.
  public init(path: String, timeout: Double? = nil, name: String? = nil) throws(ClientError) {
    try ClientName.check(name)
    connection = try Connection(path: path, timeout: timeout)
    if let line = name.flatMap(ClientName.line) { preamble = [line] }
  }

  /// Sends one line and reads its reply, ERR or not (`succeeded()` turns ERR into an error).
  public func request(_ line: String) throws(ClientError) -> Reply {
    try request([line])[0]
  }

  /// Sends the lines between BATCH and END (which the daemon answers once) and reads the reply.
  public func request(batch lines: [String]) throws(ClientError) -> Reply {
    try request(["BATCH"] + lines + ["END"], replies: 1)[0]
  }

  /// Sends every line at once and reads their replies in order: one round trip, whatever the count.
  public func request(_ lines: [String], replies expected: Int? = nil) throws(ClientError) -> [Reply] {
    let skipped = preamble.count
    try connection.send(preamble + lines)
    preamble = []
    var replies: [Reply] = []
    while replies.count < skipped + (expected ?? lines.count) {
      guard let line = try connection.readLine() else { throw .connectionLost(path: path) }
      switch try assembler.take(line) {
      case .reply(let reply): replies.append(reply)
      case .event(let event): pendingEvents.append(event)
      case nil: break
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

  /// The next event; nil when the daemon closes the connection. Data or status lines here break the protocol.
  public func nextEvent() throws(ClientError) -> Event? {
    if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
    guard let line = try connection.readLine() else { return nil }
    guard case .event(let event) = try ProtocolLine.parse(line) else { throw .malformedReply(line) }
    return event
  }

  /// True when events have already been read and wait to be handled.
  public var hasPendingEvents: Bool { !pendingEvents.isEmpty }
}
