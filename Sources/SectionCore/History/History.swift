/// The last changes, each with who made it and when: what `HISTORY` lists and `SUBSCRIBE FROM`
/// replays.
///
/// Each change is kept as the text of its `history` line without that word and with its LF:
/// `<rev> <time> <via> <uid> <pid> <name> <event>`, the event as subscribers got it without its
/// `!`. The lines lie one after another in one buffer and a fixed ring of records says where
/// each is: keeping a change copies its line once and allocates nothing once the buffer has
/// grown to hold `capacity` lines (the part of the buffer before the oldest kept line is
/// dropped when it is half of it, so each byte is moved at most once more).
///
/// It keeps at most `capacity` changes and `byteLimit` bytes of their lines, whichever is
/// reached first: an event repeats its section's id, which may be as long as a request line.
///
/// The changes kept always follow one another, revision after revision, up to the newest: a
/// history with a gap could not say which changes came after a revision.
public struct History: Sendable {
  /// The most changes kept; 0 keeps none.
  public let capacity: Int
  /// The most bytes of lines kept: 4 MiB, 4,000 bytes a change at the default capacity.
  public static let byteLimit = 4 << 20
  private var text: [UInt8] = []
  /// The offset in the stream of all lines kept so far of `text[0]`.
  private var dropped = 0
  /// The ring, `capacity` records once the first change is kept.
  private var records: [Record] = []
  /// The ring index of the oldest record.
  private var first = 0
  public private(set) var count = 0

  private struct Record: Sendable {
    let revision: UInt64
    /// Offsets in the stream of all lines kept so far.
    let start: Int
    let end: Int
  }

  public init(capacity: Int) {
    self.capacity = max(0, capacity)
  }

  /// A history of `capacity` from saved `lines` (without LF), the newest last, as far back as
  /// they follow one another up to `revision`: those of other revisions, and any before a gap,
  /// are left out.
  public init(capacity: Int, lines: [[UInt8]], revision: UInt64) {
    self.init(capacity: capacity)
    var kept: [(UInt64, [UInt8])] = []
    var expected = revision
    for line in lines.reversed() {
      guard kept.count < self.capacity, let lineRevision = History.revision(of: line[...]) else { break }
      if lineRevision > expected { continue }
      guard lineRevision == expected, expected > 0 else { break }
      kept.append((lineRevision, line))
      expected -= 1
    }
    for (lineRevision, line) in kept.reversed() { append(revision: lineRevision, line: line[...] + [0x0A]) }
  }

  public var isEmpty: Bool { count == 0 }

  /// The revision of the oldest change kept.
  public var oldestRevision: UInt64? { isEmpty ? nil : records[first].revision }
  public var newestRevision: UInt64? { isEmpty ? nil : record(count - 1).revision }

  private func record(_ position: Int) -> Record {
    records[(first + position) % capacity]
  }

  /// The line of the change at `position`, from the oldest (0), LF included.
  public func line(_ position: Int) -> ArraySlice<UInt8> {
    let record = record(position)
    return text[(record.start - dropped)..<(record.end - dropped)]
  }

  /// Keeps the change of `revision`, whose line (LF included) is `line`, as the newest;
  /// the oldest goes when `capacity` are kept. Revisions must follow one another: a change that
  /// does not follow the newest starts the history afresh.
  public mutating func append(revision: UInt64, line: ArraySlice<UInt8>) {
    guard capacity > 0 else { return }
    if let newest = newestRevision, newest + 1 != revision { removeAll() }
    if records.isEmpty { records = Array(repeating: Record(revision: 0, start: 0, end: 0), count: capacity) }
    let start = dropped + text.count
    text.append(contentsOf: line)
    if count == capacity { dropOldest() }
    records[(first + count) % capacity] = Record(revision: revision, start: start, end: start + line.count)
    count += 1
    while count > 1, start + line.count - records[first].start > History.byteLimit { dropOldest() }
    let oldest = records[first].start - dropped
    if oldest > text.count / 2 {
      text.removeSubrange(0..<oldest)
      dropped += oldest
    }
  }

  private mutating func dropOldest() {
    first = (first + 1) % capacity
    count -= 1
  }

  public mutating func removeAll() {
    text.removeAll(keepingCapacity: true)
    first = 0
    count = 0
    dropped = 0
  }

  /// The position of the first change after `revision` when every change after it up to
  /// `current` is kept; nil when some is not, or `revision` is past `current`.
  public func position(after revision: UInt64, current: UInt64) -> Int? {
    guard revision <= current else { return nil }
    if revision == current { return count }
    guard let oldest = oldestRevision, newestRevision == current, oldest <= revision + 1 else { return nil }
    return Int(revision + 1 - oldest)
  }

  /// The revision of the oldest change `HISTORY FROM` can list after: the oldest kept, or,
  /// with none kept, the next.
  public func oldestKept(current: UInt64) -> UInt64 { oldestRevision ?? current + 1 }

  /// The bytes kept, for what the defaults bound (SECURITY.md).
  public var bytes: Int { text.capacity + records.capacity * MemoryLayout<Record>.stride }

  /// The revision a line starts with.
  public static func revision(of line: ArraySlice<UInt8>) -> UInt64? {
    var words = Words(line)
    return words.next().flatMap(RequestParser.number).map(UInt64.init)
  }

  /// Appends `history <line>` for the change at `position`; with `blankingWho`, its uid, pid and
  /// name as `-` (the read-only socket: SECURITY.md).
  func appendHistoryLine(_ position: Int, blankingWho: Bool, to buffer: inout [UInt8]) {
    let line = line(position)
    buffer.append("history ")
    guard blankingWho else {
      buffer.append(contentsOf: line)
      return
    }
    // `<rev> <time> <via>` kept, then `- - -` for `<uid> <pid> <name>`, then the event.
    var words = Words(line)
    var via = line.startIndex
    for _ in 0..<3 { via = words.next()?.endIndex ?? via }
    var event = via
    for _ in 0..<3 { event = words.next()?.endIndex ?? event }
    buffer.append(contentsOf: line[..<via])
    buffer.append(" - - -")
    buffer.append(contentsOf: line[event...])
  }

  /// Appends the event of the change at `position` as subscribers got it: `!` and the line's
  /// words from the seventh.
  func appendEvent(_ position: Int, to buffer: inout [UInt8]) {
    let line = line(position)
    var words = Words(line)
    var end = line.startIndex
    for _ in 0..<6 { end = words.next()?.endIndex ?? end }
    buffer.append("!")
    buffer.append(contentsOf: line[(end + 1)...])
  }
}

/// Wall-clock times as RFC 3339 in UTC with milliseconds: `2026-12-03T20:41:07.123Z`.
public struct HistoryClock {
  private var second: UInt64 = .max
  /// `2026-12-03T20:41:07.` for `second`: the same for every change of a second.
  private var prefix: [UInt8] = []

  mutating func append(milliseconds: UInt64, to buffer: inout TextWriter) {
    let seconds = milliseconds / 1000
    if seconds != second {
      second = seconds
      prefix = Array(HistoryClock.text(seconds: seconds).utf8)
    }
    buffer.append(contentsOf: prefix)
    let fraction = milliseconds % 1000
    buffer.append(UInt8(ascii: "0") + UInt8(fraction / 100))
    buffer.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
    buffer.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    buffer.append(UInt8(ascii: "Z"))
  }

  /// The seconds since the epoch of a time `append` wrote (`2026-12-03T20:41:07.123Z`); nil
  /// for any other text. Days from the civil date as Howard Hinnant's days_from_civil.
  public static func seconds(of text: String) -> Int? {
    let digits = Array(text.utf8)
    guard digits.count == 24, digits[4] == UInt8(ascii: "-"), digits[10] == UInt8(ascii: "T"),
      digits[23] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for digit in digits[range] {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
        value = value * 10 + Int(digit - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      (1...12).contains(month)
    else { return nil }
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = shiftedYear / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    return days * 86_400 + hour * 3600 + minute * 60 + second
  }

  /// `YYYY-MM-DDTHH:MM:SS.` of the seconds since the epoch: the civil date of the day (Howard
  /// Hinnant's days_from_civil, inverted), then the time of day.
  static func text(seconds: UInt64) -> String {
    let days = Int64(seconds / 86_400)
    let time = Int(seconds % 86_400)
    let shifted = days + 719_468
    let era = shifted / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let (hour, minute, second) = (Int64(time / 3600), Int64(time / 60 % 60), Int64(time % 60))
    return "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))."
  }
}
