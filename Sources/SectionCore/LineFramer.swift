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
    while let newline = LineFramer.firstNewline(in: input) {
      let line = input[input.startIndex..<newline]
      input = input[(newline + 1)...]
      if discarding {
        discarding = false
        continue
      }
      return frame(line)
    }
    if discarding {
      input = input[input.endIndex...]
      return nil
    }
    // A CR may still be followed by its LF in the next read; it does not count toward the limit.
    if input.count > LineFramer.maximumLineLength + (input.last == 0x0D ? 1 : 0) {
      discarding = !endOfInput
      input = input[input.endIndex...]
      return .tooLong
    }
    if endOfInput && !input.isEmpty {
      let line = input
      input = input[input.endIndex...]
      return frame(line)
    }
    return nil
  }

  /// `input.firstIndex(of: LF)` through memchr: the generic search costs about 50 ns a byte in a
  /// debug build, so one client's flood of bytes without a newline delayed every other client
  /// by milliseconds per 64 KiB read; memchr is fast in every build.
  private static func firstNewline(in input: ArraySlice<UInt8>) -> Int? {
    input.withUnsafeBufferPointer { buffer in
      guard let base = buffer.baseAddress, let found = memchr(base, 0x0A, buffer.count) else { return nil }
      return input.startIndex + UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }
  }

  private func frame(_ line: ArraySlice<UInt8>) -> Frame {
    let trimmed = line.last == 0x0D ? line.dropLast() : line
    return trimmed.count > LineFramer.maximumLineLength ? .tooLong : .line(trimmed)
  }
}
