import Posix
import SectionClient

/// A non-blocking connection to the daemon for the ui's poll loop: requests are queued and
/// written as the socket takes them, and whatever has arrived is read and sorted into
/// replies (each paired with the request it answers, as protocol 1 answers in order) and events.
final class LiveConnection {
  /// What a request was for, so its reply can be handled when it comes.
  enum Request: Equatable, Sendable {
    case subscribe
    /// `SUBSCRIBE FROM <rev>` on a reconnection: the changes missed, or a snapshot.
    case resume
    case view
    case items(String)
    /// A change a person asked for (TOGGLE, OPEN ALL, MODE, RELOAD...): only a refusal matters.
    case change(String)
  }

  enum Incoming: Equatable, Sendable {
    case reply(Request, Reply)
    case event(Event)
  }

  let path: String
  let fd: FileDescriptor
  private var input: LineReader
  private var output: [UInt8] = []
  private var awaiting: [Request] = []
  private var awaitingStart = 0
  private var assembler: ReplyAssembler

  /// Connects (a local socket connects at once, so this does not wait); the socket is non-blocking.
  init(path: String, name: String? = nil) throws(ClientError) {
    self.path = path
    input = LineReader(path: path)
    assembler = ReplyAssembler(path: path)
    fd = try Connection.socket(path: path)
    // What the daemon's history calls it; only a refusal (an older daemon) would show.
    if let line = name.flatMap(ClientName.line) { send(line, as: .change("CLIENT NAME")) }
  }

  deinit { fd.close() }

  /// Queues a request; `flush()` sends it.
  func send(_ line: String, as request: Request) {
    output += Array((line + "\n").utf8)
    awaiting.append(request)
  }

  /// True while queued bytes wait for the socket to take them: poll for writable then.
  var wantsToWrite: Bool { !output.isEmpty }

  /// Writes what the socket takes now.
  func flush() throws(ClientError) {
    while !output.isEmpty {
      let result = try? output.withUnsafeBytes { try fd.write($0) }
      switch result {
      case .done(let written): output.removeFirst(written)
      case .wouldBlock: return
      case nil: throw .connectionLost(path: path)
      }
    }
  }

  /// Reads what has arrived and returns the complete replies and events in it, in order; nil
  /// once the daemon has closed the connection (a reset counts as a close).
  func receive() throws(ClientError) -> [Incoming]? {
    var chunk = [UInt8](repeating: 0, count: 65536)
    let result = try? chunk.withUnsafeMutableBytes { try fd.read(into: $0) }
    switch result {
    case .done(let count) where count > 0: input.append(chunk[..<count])
    case .wouldBlock: return []
    default: return nil
    }
    var incoming: [Incoming] = []
    while let line = try input.nextLine() {
      if let item = try take(line) { incoming.append(item) }
    }
    return incoming
  }

  /// A status line completes the oldest request's reply (see `ReplyAssembler`).
  private func take(_ line: String) throws(ClientError) -> Incoming? {
    switch try assembler.take(line) {
    case .event(let event): return .event(event)
    case nil: return nil
    case .reply(let reply):
      guard awaitingStart < awaiting.count else { throw .malformedReply(line) }
      let request = awaiting[awaitingStart]
      awaitingStart += 1
      if awaitingStart == awaiting.count {
        awaiting = []
        awaitingStart = 0
      }
      return .reply(request, reply)
    }
  }
}
