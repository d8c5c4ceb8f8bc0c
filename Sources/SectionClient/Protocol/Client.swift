/// Protocol 1 over a `Connection`: requests answered in order, events kept aside until asked for.
public final class Client {
  public let connection: Connection
  /// Events that arrived while a reply was being read, oldest first.
  private var pendingEvents: [Event] = []
  /// The name to give the connection (`CLIENT NAME`) with the first request, so that naming
  /// costs no round trip of its own; its reply is dropped (a daemon older than the history
  /// answers it ERR UNKNOWN).
  private var name: String?

  public var path: String { connection.path }

  /// Connects; with a `timeout`, every reply must have come within that many seconds from now.
  public init(path: String, timeout: Double? = nil, name: String? = nil) throws(ClientError) {
    connection = try Connection(path: path, timeout: timeout)
    self.name = name
  }

  public func request(_ line: String) throws(ClientError) -> Reply {
    try request([line])[0]
  }

  /// Sends the lines between BATCH and END (which the daemon answers once) and reads the reply.
  public func request(batch lines: [String]) throws(ClientError) -> Reply {
    try request(["BATCH"] + lines + ["END"], replies: 1)[0]
  }

  /// Sends every line at once and reads their replies in order: one round trip, whatever the count.
  public func request(_ lines: [String], replies expected: Int? = nil) throws(ClientError) -> [Reply] {
    let naming = name.map { ["CLIENT NAME \($0)"] } ?? []
    name = nil
    try connection.send(naming + lines)
    var replies: [Reply] = []
    var data: [DataLine] = []
    while replies.count < naming.count + (expected ?? lines.count) {
      guard let line = try connection.readLine() else { throw .connectionLost(path: path) }
      switch try ProtocolLine.parse(line) {
      case .data(let dataLine): data.append(dataLine)
      case .event(let event): pendingEvents.append(event)
      case .status(let status):
        replies.append(Reply(data: data, status: status))
        data = []
      }
    }
    return Array(replies.dropFirst(naming.count))
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
