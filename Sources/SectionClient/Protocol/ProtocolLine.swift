import Glibc
import SectionShared

/// One line the daemon sent, classified by its first character as protocol 1 defines:
/// `!` an event, `OK`/`ERR` a status line, a lower-case keyword a data line.
///
/// Parsed from the bytes as they arrived, word by word: numbers straight from their digits,
/// Strings only for the text a value keeps (ids, titles). The parse of
/// each reply's line as a String, split into an array of Strings, was half of what the library
/// spent on a request (callgrind, bench/client_cost.py).
package enum ProtocolLine: Equatable, Sendable {
  case data(DataLine)
  case status(Reply.Status)
  case event(Event)

  typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

  /// True for a line that ends a reply. Raw `send` relies on this alone, so it works for any reply.
  package static func isStatus(_ line: String) -> Bool {
    var line = line
    return line.withUTF8 { isStatus($0[...]) }
  }

  package static func parse(_ line: String) throws(ClientError) -> ProtocolLine {
    var line = line
    return try line.withUTF8 { bytes in Result { () throws(ClientError) in try parse(bytes) } }.get()
  }

  /// The line in `bytes`, without its LF.
  package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(ClientError) -> ProtocolLine {
    let line = bytes[...]
    if isStatus(line) { return .status(try status(line)) }
    if line.first == UInt8(ascii: "!") { return .event(try event(line.dropFirst(), line: line)) }
    guard let first = line.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
      throw malformed(line)
    }
    return .data(try data(line))
  }

  private static func isStatus(_ line: Bytes) -> Bool {
    line.matches("OK") || line.matches("OK ", prefix: true) || line.matches("ERR ", prefix: true)
  }

  private static func status(_ line: Bytes) throws(ClientError) -> Reply.Status {
    var words = Words(line)
    // Only a bare `OK` has no space.
    guard let keyword = words.word() else { return .ok(revision: nil) }
    if keyword.matches("OK") { return .ok(revision: try words.revision(words.last())) }
    // `ERR <code> [<message>]`.
    let code = words.word() ?? words.rest()
    guard !code.isEmpty else { throw malformed(line) }
    let message = text(words.rest())
    if code.matches("GONE") && oldestKept(inGone: message) == nil { throw malformed(line) }
    return .error(code: text(code), message: message)
  }

  /// The first word of `ERR GONE <oldest> ...`'s message: the oldest revision the daemon keeps, or
  /// with none kept the one after the state's, so 1 to 2^63; nil for anything else, which a
  /// reply is refused for when it is read (a follower that trusted a 0 or 2^64-1 went wrong).
  static func oldestKept(inGone message: String) -> UInt64? {
    guard let oldest = UInt64(message.prefix { $0 != " " }), oldest >= 1, oldest <= Words.revisionLimit + 1
    else { return nil }
    return oldest
  }

  /// An event, `text` being the line after its `!`.
  private static func event(_ text: Bytes, line: Bytes) throws(ClientError) -> Event {
    var words = Words(text, in: line)
    let keyword = words.word() ?? words.rest()
    switch keyword {
    case "inserted", "deleted", "renamed":
      guard let edit = SectionEdit(rawValue: Self.text(keyword)) else { throw malformed(line) }
      return .edited(
        edit, revision: try words.revision(words.word()), index: try words.number(words.word()),
        id: try words.nonEmpty(words.last()))
    case "moved":
      return .moved(
        revision: try words.revision(words.word()), from: try words.number(words.word()),
        to: try words.number(words.word()), id: try words.nonEmpty(words.last()))
    case "items":
      return .items(
        revision: try words.revision(words.word()), index: try words.number(words.word()),
        id: try words.nonEmpty(words.word()), count: try words.number(words.last()))
    case "opened", "closed":
      let revision = try words.revision(words.word())
      let index: Int = try words.number(words.word())
      let id = try words.nonEmpty(words.last())
      return keyword.matches("opened")
        ? .opened(revision: revision, index: index, id: id)
        : .closed(revision: revision, index: index, id: id)
    case "mode":
      return .mode(revision: try words.revision(words.word()), mode: try words.mode(words.last()))
    case "state":
      return .state(try snapshot(&words))
    case "reload":
      return .reload(revision: try words.revision(words.last()))
    case "bye":
      return .bye(reason: Self.text(words.rest()))
    default:
      return .other(Self.text(text))
    }
  }

  private static func data(_ line: Bytes) throws(ClientError) -> DataLine {
    var words = Words(line)
    let keyword = words.word() ?? words.rest()
    switch keyword {
    case "section":
      let index: Int = try words.number(words.word())
      let id = try words.nonEmpty(words.word())
      let state = words.word()
      guard let state, state.matches("open") || state.matches("closed") else {
        throw malformed(line)
      }
      let itemCount: Int = try words.number(words.word())
      let title = words.rest()
      guard !title.isEmpty else { throw malformed(line) }
      return .section(
        ListedSection(
          index: index, id: id, isOpen: state.matches("open"), itemCount: itemCount,
          title: text(title)))
    case "item":
      return .item(
        ListedItem(
          sectionIndex: try words.number(words.word()), position: try words.number(words.word()),
          text: text(words.rest())))
    case "state":
      return .state(try snapshot(&words))
    case "mode":
      return .mode(try words.mode(words.last()))
    case "version":
      let daemon = words.word()
      let version = words.rest()
      guard let daemon, !daemon.isEmpty, !version.isEmpty else { throw malformed(line) }
      return .version(daemon: text(daemon), protocolVersion: text(version))
    case "help":
      return .help(text(words.rest().drop { $0 == UInt8(ascii: " ") }))
    case "history":
      let revision = try words.revision(words.word())
      let time = try words.nonEmpty(words.word())
      let via = try words.nonEmpty(words.word())
      guard let uid = words.word(), let pid = words.word(), let name = words.word() else {
        throw malformed(line)
      }
      return .history(
        HistoryEntry(
          revision: revision, time: time, via: via, uid: try words.unknownOr(uid),
          pid: try words.unknownOr(pid),
          name: name.matches("-") ? nil : try words.nonEmpty(name),
          event: try event(words.rest(), line: line)))
    default:
      return .other(text(line))
    }
  }

  /// The rest of a `state` line or event: revision, mode, and the open ids comma-separated or `-`.
  private static func snapshot(_ words: inout Words) throws(ClientError) -> StateSnapshot {
    let revision = try words.revision(words.word())
    let mode = try words.mode(words.word())
    guard let list = words.last() else { throw malformed(words.line) }
    var ids: [String] = []
    if !list.matches("-") {
      var rest = list
      while let comma = rest.index(of: UInt8(ascii: ",")) {
        ids.append(text(rest[..<comma]))
        rest = rest[(comma + 1)...]
      }
      ids.append(text(rest))
    }
    guard !ids.contains(where: \.isEmpty) else { throw malformed(words.line) }
    return StateSnapshot(revision: revision, mode: mode, openIDs: ids)
  }

  /// Bytes from the daemon as text, invalid UTF-8 shown as `\xHH` (`VisibleText.decode`).
  private static func text(_ bytes: Bytes) -> String { VisibleText.decode(bytes) }

  static func malformed(_ line: Bytes) -> ClientError { .malformedReply(text(line)) }
}

/// The fields of a line, taken from the left as the daemon writes them: words separated by
/// single spaces, the last of which may hold spaces when it is text (a title, an item).
struct Words {
  /// The whole line, for the error that quotes it.
  let line: ProtocolLine.Bytes
  private var unread: ProtocolLine.Bytes

  init(_ line: ProtocolLine.Bytes, in whole: ProtocolLine.Bytes? = nil) {
    self.line = whole ?? line
    unread = line
  }

  /// The next field, when a space follows it; nil when it is the line's last. Inlined: a
  /// reply's line takes it five times, and the calls were 5% of client-load's instructions.
  @inline(__always) mutating func word() -> ProtocolLine.Bytes? {
    guard let space = unread.index(of: UInt8(ascii: " ")) else { return nil }
    defer { unread = unread[(space + 1)...] }
    return unread[..<space]
  }

  /// The rest of the line, spaces and all.
  mutating func rest() -> ProtocolLine.Bytes {
    defer { unread = unread[unread.endIndex...] }
    return unread
  }

  /// The rest of the line as its last field; nil if it holds a space (more fields than the line may have).
  mutating func last() -> ProtocolLine.Bytes? {
    let last = rest()
    return last.index(of: UInt8(ascii: " ")) == nil ? last : nil
  }

  /// A field of decimal digits as a number; nil when it is not one or does not fit.
  static func number<N: FixedWidthInteger>(_ digits: ProtocolLine.Bytes) -> N? {
    guard !digits.isEmpty else { return nil }
    var value: N = 0
    // As many digits as always fit (18 for an Int or a UInt64, a revision's 8 or so) are added
    // without the checks for overflow, which were half the cost of reading a reply's numbers.
    if digits.count <= (N.bitWidth - (N.isSigned ? 1 : 0)) * 3 / 10 {
      for digit in digits {
        guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") else { return nil }
        value = value &* 10 &+ N(truncatingIfNeeded: digit &- UInt8(ascii: "0"))
      }
      return value
    }
    for digit in digits {
      guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") else { return nil }
      let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
      let (sum, carry) = times10.addingReportingOverflow(N(digit - UInt8(ascii: "0")))
      guard !overflow && !carry else { return nil }
      value = sum
    }
    return value
  }

  /// A field that must be a number.
  func number<N: FixedWidthInteger>(_ field: ProtocolLine.Bytes?) throws(ClientError) -> N {
    guard let field, let value: N = Words.number(field) else { throw ProtocolLine.malformed(line) }
    return value
  }

  /// The largest revision protocol 1 allows, 2^63-1: programs hand revisions on as signed
  /// 64-bit numbers (JSON, SQL), so one past it is a broken or hostile server, refused here once.
  static let revisionLimit = UInt64(Int64.max)

  /// A field that must be a revision: 0 to `revisionLimit`.
  func revision(_ field: ProtocolLine.Bytes?) throws(ClientError) -> UInt64 {
    let value: UInt64 = try number(field)
    guard value <= Words.revisionLimit else { throw ProtocolLine.malformed(line) }
    return value
  }

  /// A field that is `-` (not known: nil) or a number (a uid, a pid); anything else breaks the line.
  func unknownOr<N: FixedWidthInteger>(_ field: ProtocolLine.Bytes) throws(ClientError) -> N? {
    field.matches("-") ? nil : try number(field)
  }

  /// A field that must not be empty (an id, a word), as text.
  func nonEmpty(_ field: ProtocolLine.Bytes?) throws(ClientError) -> String {
    guard let field, !field.isEmpty else { throw ProtocolLine.malformed(line) }
    return VisibleText.decode(field)
  }

  func mode(_ field: ProtocolLine.Bytes?) throws(ClientError) -> Mode {
    guard let field, let mode = Mode(rawValue: VisibleText.decode(field)) else {
      throw ProtocolLine.malformed(line)
    }
    return mode
  }
}

/// Lets a `switch` over a line's word match keywords without making a String of it.
func ~= (keyword: StaticString, word: ProtocolLine.Bytes) -> Bool { word.matches(keyword) }

extension Slice where Base == UnsafeBufferPointer<UInt8> {
  /// Where `byte` first occurs. A line can be tens of megabytes (a `state` line with every
  /// section open), which a loop in Swift takes seconds over in a debug build: past a few
  /// words, memchr(3) searches; the few bytes of a word are looked at here, without the call.
  func index(of byte: UInt8) -> Int? {
    if count <= 32 { return firstIndex(of: byte) }
    guard let start = base.baseAddress.map({ $0 + startIndex }), let found = memchr(start, Int32(byte), count)
    else {
      return nil
    }
    return startIndex + start.distance(to: found.assumingMemoryBound(to: UInt8.self))
  }

  /// True when these bytes are `word`'s (or, with `prefix`, start with them).
  func matches(_ word: StaticString, prefix: Bool = false) -> Bool {
    let length = word.utf8CodeUnitCount
    guard prefix ? count >= length : count == length else { return false }
    return length == 0 || memcmp(base.baseAddress! + startIndex, word.utf8Start, length) == 0
  }
}
