import Glibc

/// Recognizes, in a watch stream's line as the gateway sends it, an update whose one value
/// starts with known bytes, without parsing the JSON or decoding any base64: a client that
/// wrote the value knows it already, and each line it reads back otherwise costs a parse, a
/// decode and their allocations (a fleet host reading its own commit back from its watch:
/// about 15 µs of its 220 a TOGGLE, docs/PERFORMANCE.md).
///
/// The base64 of a value's first 3n bytes is the first 4n characters of the value's base64,
/// so the prefix is compared as text. A line holding more than one value (several events) is
/// never recognized: another writer's event may be among them.
public struct ValuePrefix: Sendable {
  /// How a value begins in the gateway's JSON (base64 holds no quote, so only a value's
  /// member name matches it).
  private static let member = Array(#""value":""#.utf8)
  private static let modRevision = Array(#""mod_revision":""#.utf8)
  /// `member` and the base64 of the prefix.
  private let pattern: [UInt8]

  /// The first `count` bytes of `value` (rounded up to a multiple of three, within `value`)
  /// make the prefix: enough to tell this value from any other a line may hold.
  public init(of value: [UInt8], count: Int) {
    let length = min(value.count, (count + 2) / 3 * 3)
    pattern = Self.member + Array(Base64.encode(value.prefix(length)).utf8)
  }

  /// The mod revision of the line's one event when its value starts with the prefix: the
  /// revision the writer's txn committed at (a txn is one revision, so also its header's).
  /// Nil when the line holds no such value, more than one value or mod revision, or digits that
  /// are no revision.
  public func revision(in line: ArraySlice<UInt8>) -> Int64? {
    guard let first = Self.find(Self.member, in: line, from: line.startIndex),
      line[first...].starts(with: pattern),
      Self.find(Self.member, in: line, from: first + pattern.count) == nil,
      let modRevision = Self.find(Self.modRevision, in: line, from: line.startIndex)
    else { return nil }
    let digits = modRevision + Self.modRevision.count
    guard Self.find(Self.modRevision, in: line, from: digits) == nil,
      let end = line[digits...].firstIndex(of: UInt8(ascii: "\""))
    else { return nil }
    return line[digits..<end].withUnsafeBufferPointer(GatewayScanner.magnitude).flatMap { Int64(exactly: $0) }
  }

  /// Where `needle` (not empty) first occurs in `haystack` at or after `start`: memchr for
  /// its colon (its first byte when it has none), memcmp for the whole. The needles are member
  /// names, `"name":"`: in the gateway's JSON a colon comes once a member and a quote four
  /// times, and each byte memchr stops at costs a memcmp (searching for the quote was 5,500
  /// instructions of a fleet host's commit).
  private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>, from start: Int) -> Int? {
    let anchor = needle.firstIndex(of: UInt8(ascii: ":")) ?? 0
    return haystack.withUnsafeBufferPointer { hay -> Int? in
      needle.withUnsafeBufferPointer { pin -> Int? in
        guard let base = hay.baseAddress, !pin.isEmpty else { return nil }
        var offset = start - haystack.startIndex
        let last = hay.count - pin.count
        while offset <= last {
          guard let found = memchr(base + offset + anchor, Int32(pin[anchor]), last - offset + 1) else {
            return nil
          }
          offset = found.assumingMemoryBound(to: UInt8.self) - UnsafeMutablePointer(mutating: base) - anchor
          if memcmp(base + offset, pin.baseAddress!, pin.count) == 0 { return haystack.startIndex + offset }
          offset += 1
        }
        return nil
      }
    }
  }
}
