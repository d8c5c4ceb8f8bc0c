/// Sorts the daemon's lines, in the order they come, into complete replies and events: the one
/// place where data lines are gathered until the status line that ends their reply. The blocking
/// `Client`, the async `AsyncClient` and sectionctl's ui all read through it.
/// Bounded: a reply may not pass `maximumReplyBytes`, so a server that never ends one cannot
/// make a client take all memory.
public struct ReplyAssembler: Sendable {
  /// The most bytes of data lines one reply may have. The largest reply sectiond gives at its
  /// default limits is a VIEW with every section open: 16 MiB of ids, titles and items
  /// (`--max-text-bytes`) and a million `item` lines of about 16 bytes besides their text, about
  /// 35 MB (a full HISTORY 100000 is about 17 MB). 256 MiB is seven times that, and what a
  /// server that never ends a reply can make a client hold (plus the parsed lines' overhead).
  public static let maximumReplyBytes = 256 << 20

  /// The socket, for the error.
  private let path: String
  /// Bytes of the data lines gathered so far.
  private var dataBytes = 0

  /// What a line completed: a reply (its data lines and status), or an event.
  public enum Piece: Equatable, Sendable {
    case reply(Reply)
    case event(Event)
  }

  private var data = DataLines.none

  /// `path`: the socket the lines come from, which an error names.
  public init(path: String = "") { self.path = path }

  /// Takes the next line; nil while a reply is still being gathered.
  public mutating func take(_ line: String) throws(ClientError) -> Piece? {
    var line = line
    return try line.withUTF8 { bytes in Result { () throws(ClientError) in try take(bytes) } }.get()
  }

  /// Takes the next line's bytes, without its LF.
  package mutating func take(_ line: UnsafeBufferPointer<UInt8>) throws(ClientError) -> Piece? {
    switch try ProtocolLine.parse(line) {
    case .event(let event):
      return .event(event)
    case .data(let dataLine):
      dataBytes += line.count + 1
      if dataBytes > ReplyAssembler.maximumReplyBytes {
        (data, dataBytes) = (.none, 0)  // what was gathered is given back
        throw .replyTooLarge(path: path)
      }
      data.append(dataLine)
      return nil
    case .status(let status):
      defer {
        data = .none
        dataBytes = 0
      }
      return .reply(Reply(lines: data, status: status))
    }
  }
}
