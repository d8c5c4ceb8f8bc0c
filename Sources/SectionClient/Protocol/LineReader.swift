import Glibc

/// The daemon's lines cut out of what its socket delivers, for the blocking `Connection` and
/// the async `Link` alike. Linear: each byte is searched for LF once (by memchr),
/// however many reads a long line takes, and moved at most once. Bounded: a line may not pass
/// `maximumLineLength`, so a server that never sends LF cannot make sectionctl take all memory.
package struct LineReader {
  /// The longest line sectionctl reads. The longest sectiond sends is a `state` line with
  /// every section open: its ids count toward `--max-text-bytes` (16 MiB by default), and even
  /// with that raised, the default 10,000 sections of ids up to ~4,080 bytes (a request line
  /// holds 4,096) make about 41 MB. 64 MiB is above that with room, and what one hostile line
  /// can cost.
  package static let maximumLineLength = 64 << 20

  /// The socket, for the error.
  package let path: String
  private var buffer: [UInt8] = []
  /// Where the next line starts in `buffer`.
  private var start = 0
  /// How far past `start` is known to hold no LF.
  private var searched = 0

  package init(path: String) { self.path = path }

  /// Whether bytes were read and not yet taken as lines.
  package var isEmpty: Bool { start == buffer.count }

  /// Adds what was read.
  package mutating func append(_ bytes: ArraySlice<UInt8>) {
    if start > 0 && start == buffer.count {
      // Every line taken, as after nearly every read: the bytes take their place in one step.
      buffer.replaceSubrange(0..<buffer.count, with: bytes)
      start = 0
      searched = 0
      return
    } else if start > 0 && start >= buffer.count / 2 {
      // The taken lines are dropped once they are half the buffer: each byte moves once at most.
      buffer.removeSubrange(0..<start)
      start = 0
    }
    buffer += bytes
  }

  /// The next complete line without its LF (and CR), its invalid UTF-8 shown as `\xHH`; nil
  /// until one has arrived. Fails once the line in progress is longer than the limit.
  package mutating func nextLine() throws(ClientError) -> String? {
    try nextLine { VisibleText.decode($0) }
  }

  /// `body`'s value for the bytes of the next complete line, without its LF (and CR); nil
  /// until one has arrived. The bytes are only valid inside `body`.
  package mutating func nextLine<Value>(
    _ body: (UnsafeBufferPointer<UInt8>) throws(ClientError) -> Value
  ) throws(ClientError) -> Value? {
    let newline: Int? = buffer.withUnsafeBufferPointer { all in
      let from = start + searched
      guard from < all.count, let found = memchr(all.baseAddress! + from, 0x0A, all.count - from) else {
        return nil
      }
      return all.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
    guard let newline else {
      searched = buffer.count - start
      if searched > LineReader.maximumLineLength + 1 { throw .lineTooLong(path: path) }
      return nil
    }
    var end = newline
    if end > start && buffer[end - 1] == 0x0D { end -= 1 }
    if end - start > LineReader.maximumLineLength { throw .lineTooLong(path: path) }
    let lineStart = start
    start = newline + 1
    searched = 0
    return try buffer.withUnsafeBufferPointer { (all) throws(ClientError) in
      try body(UnsafeBufferPointer(rebasing: all[lineStart..<end]))
    }
  }
}
