import Glibc

/// Cuts a connection's input into request lines, enforcing the line-length limit.
///
/// It works on whatever slice of bytes the caller has (usually the daemon's shared read
/// buffer), so complete lines are never copied; only a trailing partial line is left for the
/// caller to keep. The one piece of state is whether it is inside an over-long line.
public struct LineFramer: Sendable {
  public static let maximumLineLength = 4096

  public enum Frame: Equatable {
    /// A request line, without its LF and without a CR before the LF.
    case line(ArraySlice<UInt8>)
    /// A line over the limit: answer `ERR TOOLONG` once; the rest of it is skipped.
    case tooLong
  }

  /// Inside an over-long line whose end has not arrived yet.
  public private(set) var discarding = false

  /// `discarding`: carried over from another process (see `HandoverState`).
  public init(discarding: Bool = false) { self.discarding = discarding }

  /// Takes the next frame from the front of `input`, or nil when `input` holds no complete line
  /// (what is left in `input` then is a partial line to keep for the next read). At end of input
  /// a last line without LF is still a line.
  public mutating func next(_ input: inout ArraySlice<UInt8>, endOfInput: Bool) -> Frame? {
    var position = 0
    let span = input.withUnsafeBufferPointer { next(in: $0, from: &position, endOfInput: endOfInput) }
    let start = input.startIndex
    defer { input = input[(start + position)...] }
    switch span {
    case nil: return nil
    case .tooLong?: return .tooLong
    case .line(let line)?: return .line(input[(start + line.lowerBound)..<(start + line.upperBound)])
    }
  }

  /// A frame as positions in the buffer framed, for a caller that keeps the buffer.
  public enum Span: Equatable {
    /// The request line, without its LF and without a CR before the LF.
    case line(Range<Int>)
    /// A line over the limit: answer `ERR TOOLONG` once; the rest of it is skipped.
    case tooLong
  }

  /// `next(_:endOfInput:)` on a buffer and a position in it, which it moves past the frame:
  /// the server's request loop frames its read buffer this way, without making (and
  /// retaining, and releasing) a slice for every line (callgrind: a third of a pipelined
  /// PING's instructions went to framing).
  public mutating func next(
    in input: UnsafeBufferPointer<UInt8>, from position: inout Int, endOfInput: Bool
  ) -> Span? {
    while position < input.count,
      let found = memchr(input.baseAddress! + position, 0x0A, input.count - position)
    {
      // memchr, not `firstIndex(of:)`: the generic search costs about 50 ns a byte in a debug
      // build, so one client's flood of bytes without a newline delayed every other client by
      // milliseconds per 64 KiB read; memchr is fast in every build.
      let newline = UnsafeRawPointer(input.baseAddress!).distance(to: UnsafeRawPointer(found))
      let start = position
      position = newline + 1
      if discarding {
        discarding = false
        continue
      }
      return LineFramer.frame(start..<newline, in: input)
    }
    let rest = input.count - position
    if discarding {
      position = input.count
      return nil
    }
    // A CR may still be followed by its LF in the next read; it does not count toward the limit.
    if rest > LineFramer.maximumLineLength + (rest > 0 && input[input.count - 1] == 0x0D ? 1 : 0) {
      discarding = !endOfInput
      position = input.count
      return .tooLong
    }
    if endOfInput && rest > 0 {
      let start = position
      position = input.count
      return LineFramer.frame(start..<input.count, in: input)
    }
    return nil
  }

  private static func frame(_ line: Range<Int>, in input: UnsafeBufferPointer<UInt8>) -> Span {
    let end = !line.isEmpty && input[line.upperBound - 1] == 0x0D ? line.upperBound - 1 : line.upperBound
    return end - line.lowerBound > LineFramer.maximumLineLength ? .tooLong : .line(line.lowerBound..<end)
  }
}

extension LineFramer {
  /// Answers the lone PINGs at `position`, at most `limit` of them, each with `OK` in `reply`,
  /// and stops before the first line that is anything else (which `next(in:from:endOfInput:)`
  /// then takes); returns how many it answered.
  ///
  /// PING is the keep-alive and the barrier every client pipelines. Answered here, where the
  /// line is framed, a PING costs a compare of its five or six bytes and its three bytes of
  /// reply are appended with the others of its run, with no call into the service, no memchr
  /// and no slice of the input per line (callgrind, 50 connections at 16 in flight: 466
  /// instructions a PING before, see docs/PERFORMANCE.md). The caller decides when PING may
  /// be answered at once: not inside a BATCH, not while replies are held for a save, not while
  /// a snapshot is owed.
  public func answerPings(
    in input: UnsafeBufferPointer<UInt8>, from position: inout Int, limit: Int, reply: inout OutputQueue
  ) -> Int {
    let answered = skipPings(in: input, from: &position, limit: limit)
    reply.appendOK(times: answered)
    return answered
  }

  /// Moves `position` past the lone PINGs there, at most `limit` of them, and returns how
  /// many it passed. A lone PING is `PING` in any case and LF or CR LF: exactly what framing
  /// would make a PING request of.
  public func skipPings(in input: UnsafeBufferPointer<UInt8>, from position: inout Int, limit: Int) -> Int {
    guard !discarding, let base = input.baseAddress else { return 0 }
    var passed = 0
    while passed < limit {
      let rest = input.count - position
      guard rest >= 5, RequestParser.isPing(UnsafeBufferPointer(start: base + position, count: 4)) else {
        break
      }
      if base[position + 4] == 0x0A {
        position += 5
      } else if rest >= 6 && base[position + 4] == 0x0D && base[position + 5] == 0x0A {
        position += 6
      } else {
        break
      }
      passed += 1
    }
    return passed
  }
}
