import Glibc

/// Reads a watch line holding events straight from its bytes, without building the JSON tree:
/// every fleet host reads every change from its watch, and the tree (its Strings, arrays and
/// their release) was about 40% of the instructions a host that did not make the change spent
/// on it (docs/PERFORMANCE.md, "Fleet").
///
/// Only the shape etcd 3.4's gateway writes for events is recognized, member by member:
/// `{"result":{"header":{…},"events":[{"type":…,"kv":{…}},…]}}`, every value a string of
/// digits or base64, no white space, no member twice, no member it does not know. Anything
/// else (a `created`, a cancel, a compaction, an error, a progress notification, `prev_kv`, an
/// escaped character, a number written as a number) is nil, and the caller parses the line in
/// full: nil never changes an answer, only its cost. No string needs its escapes looked at:
/// each is either compared with known names or decoded as base64 or digits, and a backslash
/// is none of those.
enum WatchLine {
  /// The line's events, as the full parser would read them; nil when the line is not one this
  /// reader knows.
  static func events(in line: ArraySlice<UInt8>) -> WatchUpdate? {
    line.withUnsafeBufferPointer { bytes in
      var scanner = Scanner(bytes: bytes)
      return scanner.update()
    }
  }
}

private struct Scanner {
  let bytes: UnsafeBufferPointer<UInt8>
  var at = 0

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  mutating func update() -> WatchUpdate? {
    guard take(#"{"result":{"#) else { return nil }
    var revision: Int64 = 0
    var events: [KeyEvent] = []
    var seen = Members()
    repeat {
      switch name() {
      case "header" where seen.first(0):
        guard let found = header() else { return nil }
        revision = found
      case "events" where seen.first(1):
        guard let found = eventList() else { return nil }
        events = found
      default: return nil
      }
    } while take(",")
    guard take("}}"), at == bytes.count, !events.isEmpty else { return nil }
    return .events(events, revision: revision)
  }

  /// The header's revision, after checking its other numbers as the full parser does.
  private mutating func header() -> Int64? {
    guard take("{") else { return nil }
    var revision: Int64 = 0
    var seen = Members()
    repeat {
      switch name() {
      case "cluster_id" where seen.first(0), "member_id" where seen.first(1),
        "raft_term" where seen.first(2):
        guard unsigned() != nil else { return nil }
      case "revision" where seen.first(3):
        guard let found = signed() else { return nil }
        revision = found
      default: return nil
      }
    } while take(",")
    return take("}") ? revision : nil
  }

  private mutating func eventList() -> [KeyEvent]? {
    guard take("[") else { return nil }
    var events: [KeyEvent] = []
    repeat {
      guard let event = event() else { return nil }
      events.append(event)
    } while take(",")
    return take("]") ? events : nil
  }

  private mutating func event() -> KeyEvent? {
    guard take("{") else { return nil }
    var kind = KeyEvent.Kind.put
    var kv = KeyValue(key: [], value: [], createRevision: 0, modRevision: 0, version: 0, lease: 0)
    var seen = Members()
    repeat {
      switch name() {
      case "type" where seen.first(0):
        switch Text(string()) {
        case "PUT": kind = .put
        case "DELETE": kind = .delete
        default: return nil
        }
      case "kv" where seen.first(1):
        guard let found = keyValue() else { return nil }
        kv = found
      default: return nil
      }
    } while take(",")
    return take("}") ? KeyEvent(kind: kind, kv: kv, prevKV: nil) : nil
  }

  private mutating func keyValue() -> KeyValue? {
    guard take("{") else { return nil }
    var kv = KeyValue(key: [], value: [], createRevision: 0, modRevision: 0, version: 0, lease: 0)
    var seen = Members()
    repeat {
      let read: Bool
      switch name() {
      case "key" where seen.first(0): read = Self.store(base64(), in: &kv.key)
      case "value" where seen.first(1): read = Self.store(base64(), in: &kv.value)
      case "create_revision" where seen.first(2): read = Self.store(signed(), in: &kv.createRevision)
      case "mod_revision" where seen.first(3): read = Self.store(signed(), in: &kv.modRevision)
      case "version" where seen.first(4): read = Self.store(signed(), in: &kv.version)
      case "lease" where seen.first(5): read = Self.store(signed(), in: &kv.lease)
      default: read = false
      }
      guard read else { return nil }
    } while take(",")
    return take("}") ? kv : nil
  }

  /// Puts `value` in `field` when there is one.
  private static func store<Value>(_ value: Value?, in field: inout Value) -> Bool {
    guard let value else { return false }
    field = value
    return true
  }

  /// Consumes `text` when the bytes at `at` are exactly it.
  private mutating func take(_ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard bytes.count - at >= count, memcmp(bytes.baseAddress! + at, text.utf8Start, count) == 0 else {
      return false
    }
    at += count
    return true
  }

  /// The bytes of a string (without its quotes), up to the next quote: an escaped quote ends
  /// it early, leaving a backslash that no reader of the result accepts.
  private mutating func string() -> UnsafeBufferPointer<UInt8>? {
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
  private mutating func name() -> Text {
    let name = string()
    return Text(take(":") ? name : nil)
  }

  private mutating func base64() -> [UInt8]? { string().flatMap(Base64.decode) }

  /// A string of decimal digits, as the gateway writes a 64-bit integer.
  private mutating func unsigned() -> UInt64? { string().flatMap(Self.magnitude) }

  /// `unsigned`, with a minus sign allowed, within Int64.
  private mutating func signed() -> Int64? {
    guard let text = string() else { return nil }
    guard text.first == UInt8(ascii: "-") else { return Self.magnitude(text).flatMap { Int64(exactly: $0) } }
    guard let magnitude = Self.magnitude(UnsafeBufferPointer(rebasing: text.dropFirst())),
      magnitude <= UInt64(Int64.max) + 1
    else { return nil }
    return Int64(truncatingIfNeeded: 0 &- magnitude)
  }

  /// The number that `digits` (one at least, nothing else) write; nil past UInt64.
  private static func magnitude(_ digits: UnsafeBufferPointer<UInt8>) -> UInt64? {
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
private struct Members {
  private var bits: UInt8 = 0

  /// Whether member `index` comes for the first time (and now counts as seen).
  mutating func first(_ index: UInt8) -> Bool {
    defer { bits |= 1 << index }
    return bits & 1 << index == 0
  }
}

/// Bytes of the line compared with a literal in a `switch`.
private struct Text: Equatable, ExpressibleByStringLiteral {
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
