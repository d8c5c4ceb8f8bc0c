import Glibc

/// Reads the etcd gateway's JSON of a known shape straight from its bytes, member by member,
/// for the answers a fleet host reads on every change (`WatchLine`, `TxnAnswer`): the JSON tree,
/// its Strings and their release cost more than the rest of reading them. Every reader is nil
/// on anything it does not know (white space, a member it does not expect or that comes twice,
/// an escape, a number written as a number or out of range), and its caller then parses in
/// full: nil never changes an answer, only its cost. No string needs its escapes looked at: each
/// is either compared with known names or decoded as base64 or digits, and a backslash is none
/// of those.
struct GatewayScanner {
  let bytes: UnsafeBufferPointer<UInt8>
  var at = 0

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  /// What `reader` makes of `text`.
  static func read<Answer>(_ text: ArraySlice<UInt8>, _ reader: (inout GatewayScanner) -> Answer?) -> Answer?
  {
    text.withUnsafeBufferPointer { bytes in
      var scanner = GatewayScanner(bytes: bytes)
      return reader(&scanner)
    }
  }

  /// Whether the whole input was read.
  var atEnd: Bool { at == bytes.count }

  /// A response's header, its numbers checked as the full parser checks them.
  mutating func header() -> ResponseHeader? {
    var header = ResponseHeader()
    var seen = Members()
    let read = object { scanner, name in
      switch name {
      case "cluster_id" where seen.first(0): Self.store(scanner.unsigned(), in: &header.clusterID)
      case "member_id" where seen.first(1): Self.store(scanner.unsigned(), in: &header.memberID)
      case "revision" where seen.first(2): Self.store(scanner.signed(), in: &header.revision)
      case "raft_term" where seen.first(3): Self.store(scanner.unsigned(), in: &header.raftTerm)
      default: false
      }
    }
    return read ? header : nil
  }

  /// Reads an object (`{"name":value,…}`, one member at least): `member` reads each member's
  /// value, given its name; false when it does (an unknown name, a value it cannot read), or
  /// when this is no object. Each reader is this call with a switch over its own members (the
  /// name, once, its value stored): the readers share that shape and no logic.
  mutating func object(_ member: (inout GatewayScanner, Text) -> Bool) -> Bool {
    guard take("{") else { return false }
    repeat {
      let name = name()
      guard member(&self, name) else { return false }
    } while take(",")
    return take("}")
  }

  /// Puts `value` in `field` when there is one.
  static func store<Value>(_ value: Value?, in field: inout Value) -> Bool {
    guard let value else { return false }
    field = value
    return true
  }

  /// Consumes `text` when the bytes at `at` are exactly it.
  mutating func take(_ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard bytes.count - at >= count, memcmp(bytes.baseAddress! + at, text.utf8Start, count) == 0 else {
      return false
    }
    at += count
    return true
  }

  /// The bytes of a string (without its quotes), up to the next quote: an escaped quote ends
  /// it early, leaving a backslash that no reader of the result accepts.
  mutating func string() -> UnsafeBufferPointer<UInt8>? {
    guard at < bytes.count, bytes[at] == UInt8(ascii: "\""), let base = bytes.baseAddress,
      let end = memchr(base + at + 1, Int32(UInt8(ascii: "\"")), bytes.count - at - 1)
    else { return nil }
    let start = at + 1
    let count = end.assumingMemoryBound(to: UInt8.self) - UnsafeMutablePointer(mutating: base + start)
    at = start + count + 1
    return UnsafeBufferPointer(start: base + start, count: count)
  }

  /// A member's name and its colon, as `Text` to switch on (matching nothing when the bytes
  /// are not a name and a colon).
  mutating func name() -> Text {
    let name = string()
    return Text(take(":") ? name : nil)
  }

  mutating func base64() -> [UInt8]? { string().flatMap(Base64.decode) }

  /// A string of decimal digits, as the gateway writes a 64-bit integer.
  mutating func unsigned() -> UInt64? { string().flatMap(Self.magnitude) }

  /// `unsigned`, with a minus sign allowed, within Int64.
  mutating func signed() -> Int64? {
    guard let text = string() else { return nil }
    guard text.first == UInt8(ascii: "-") else { return Self.magnitude(text).flatMap { Int64(exactly: $0) } }
    guard let magnitude = Self.magnitude(UnsafeBufferPointer(rebasing: text.dropFirst())),
      magnitude <= UInt64(Int64.max) + 1
    else { return nil }
    return Int64(truncatingIfNeeded: 0 &- magnitude)
  }

  /// The number that `digits` (one at least, nothing else) write; nil past UInt64.
  static func magnitude(_ digits: UnsafeBufferPointer<UInt8>) -> UInt64? {
    guard !digits.isEmpty else { return nil }
    var value: UInt64 = 0
    for byte in digits {
      let digit = byte &- UInt8(ascii: "0")
      guard digit < 10 else { return nil }
      let (times, over) = value.multipliedReportingOverflow(by: 10)
      let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
      guard !over, !carry else { return nil }
      value = sum
    }
    return value
  }
}

/// Which members an object had: each may come once.
struct Members {
  private var bits: UInt8 = 0

  /// Whether member `index` comes for the first time (and now counts as seen).
  mutating func first(_ index: UInt8) -> Bool {
    defer { bits |= 1 << index }
    return bits & 1 << index == 0
  }
}

/// Bytes of the line compared with a literal in a `switch`.
struct Text: Equatable, ExpressibleByStringLiteral {
  let bytes: UnsafeBufferPointer<UInt8>?
  let literal: StaticString?

  /// Nil bytes match no literal.
  init(_ bytes: UnsafeBufferPointer<UInt8>?) {
    self.bytes = bytes
    literal = nil
  }

  init(stringLiteral value: StaticString) {
    bytes = nil
    literal = value
  }

  static func == (lhs: Text, rhs: Text) -> Bool {
    guard let bytes = lhs.bytes ?? rhs.bytes, let literal = lhs.literal ?? rhs.literal else { return false }
    return bytes.count == literal.utf8CodeUnitCount
      && (bytes.isEmpty || memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0)
  }
}
