/// The lines of a `BATCH` collected so far on one connection, up to its `END`.
///
/// The lines are copied (a request line is a slice of the server's read buffer, reused at the
/// next read) into one array. A problem found while collecting (a line too long, too many
/// lines) is kept and answered at `END`, so that the client, which sends the whole batch
/// before it reads, gets one reply for it.
public struct Batch: Sendable {
  /// The most a batch's lines may hold in all: what a connection may make the daemon keep for
  /// it is bounded, like its output (10,000 lines of 100 bytes fit).
  public static let byteLimit = 1 << 20

  private var bytes: [UInt8] = []
  /// For each kept line: its end in `bytes` and its number in the batch (1 is the line after BATCH).
  private var lines: [(end: Int, number: Int)] = []
  /// Lines seen after BATCH, blank ones included.
  private var seen = 0
  /// The bytes of the blank lines seen, each with its newline: not kept, but counted against
  /// `byteLimit`, so that what a batch makes the daemon hold is bounded however it is made up.
  private var blankBytes = 0
  /// The first problem met while collecting, with its line number.
  private(set) var problem: ProtocolError?

  public init() {}

  var count: Int { lines.count }

  /// Keeps `line` of the batch, or the problem it makes (past `limit` lines, or `byteLimit`).
  public mutating func add(_ line: ArraySlice<UInt8>, limit: Int) {
    seen += 1
    guard problem == nil else { return }
    guard line.contains(where: { $0 != 0x20 && $0 != 0x09 }) else {
      blankBytes += line.count + 1
      if bytes.count + blankBytes > Batch.byteLimit { problem = Batch.atLine(seen, Batch.sizeProblem) }
      return
    }
    guard lines.count < limit else {
      problem = Batch.atLine(
        seen, ProtocolError(.limit, "batch lines: at most \(limit) (sectiond --max-batch-lines)"))
      return
    }
    guard bytes.count + blankBytes + line.count <= Batch.byteLimit else {
      problem = Batch.atLine(seen, Batch.sizeProblem)
      return
    }
    bytes.append(contentsOf: line)
    lines.append((bytes.count, seen))
  }

  /// A line over the length limit: the whole batch is refused with `ERR TOOLONG` at its END.
  public mutating func addTooLong() {
    seen += 1
    if problem == nil { problem = Batch.atLine(seen, .tooLong) }
  }

  /// Each kept line with its number.
  func forEachLine(_ body: (ArraySlice<UInt8>, Int) throws(ProtocolError) -> Void) throws(ProtocolError) {
    var start = 0
    for (end, number) in lines {
      try body(bytes[start..<end], number)
      start = end
    }
  }

  static let sizeProblem = ProtocolError(.limit, "batch size: at most \(Batch.byteLimit) bytes of lines")

  /// `error` as the reply to a batch: its code, then `line <n>: ` before its message.
  static func atLine(_ number: Int, _ error: ProtocolError) -> ProtocolError {
    ProtocolError(error.code, "line \(number): \(error.message)")
  }
}
