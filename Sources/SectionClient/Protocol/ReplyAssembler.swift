/// Sorts the daemon's lines, in the order they come, into complete replies and events: the one
/// place where data lines are gathered until the status line that ends their reply. The blocking
/// `Client`, the async `AsyncClient` and sectionctl's ui all read through it.
public struct ReplyAssembler: Sendable {
  /// What a line completed: a reply (its data lines and status), or an event.
  public enum Piece: Equatable, Sendable {
    case reply(Reply)
    case event(Event)
  }

  private var data = DataLines.none

  public init() {}

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
      data.append(dataLine)
      return nil
    case .status(let status):
      defer { data = .none }
      return .reply(Reply(lines: data, status: status))
    }
  }
}
