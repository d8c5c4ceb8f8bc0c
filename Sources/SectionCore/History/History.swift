/// The last changes, each with who made it and when: what `HISTORY` lists and `SUBSCRIBE FROM`
/// replays.
///
/// A change is kept as a record in a fixed ring (its revision, its time, its author as an index
/// into a table of authors) and its event, the bytes subscribers got, in one buffer behind the
/// others. Keeping a change copies its event once and allocates nothing once the buffer has
/// grown (the part before the oldest kept event is dropped when it is half of it, so each byte
/// moves at most once more); the `history` line is rendered only when asked for. The author
/// table holds each author once, however many changes it made, and is rebuilt with the authors
/// still referred to when it outgrows the ring.
///
/// It keeps at most `capacity` changes and `byteLimit` bytes of events, whichever is reached
/// first: an event repeats its section's id, which may be as long as a request line.
///
/// The changes kept always follow one another, revision after revision, up to the newest: a
/// history with a gap could not say which changes came after a revision.
public struct History {
  /// The most changes kept; 0 keeps none.
  public let capacity: Int
  /// The most bytes of events kept: 4 MiB, 4,000 bytes a change at the default capacity.
  public static let byteLimit = 4 << 20
  /// The events, `!` and LF included.
  private var text: [UInt8] = []
  /// The offset in the stream of all events kept so far of `text[0]`.
  private var dropped = 0
  /// The ring, `capacity` records once the first change is kept.
  private var records: [Record] = []
  /// The ring index of the oldest record.
  private var first = 0
  public private(set) var count = 0
  private var authors: [Author] = []

  /// One kept change: in the ring, and in the group of the changes waiting for their save
  /// (`Group`), the one stored record of a change either way.
  struct Record {
    let revision: UInt64
    /// Milliseconds since the epoch.
    let time: UInt64
    /// Its index in the table of authors (the ring's, or the group's).
    var author: Int32
    /// Where its event is: in the ring, offsets in the stream of all events kept so far; in a
    /// group, in the group's events.
    let events: Range<Int>
  }

  public init(capacity: Int) {
    self.capacity = max(0, capacity)
  }

  /// A history of `capacity` from saved `lines` (`<rev> <time> <via> <uid> <pid> <name>
  /// <event>`, without LF), the newest last, as far back as they follow one another up to
  /// `revision`: those of other revisions, and any before a gap or that do not read, are left out.
  public init(capacity: Int, lines: [[UInt8]], revision: UInt64) {
    self.init(capacity: capacity)
    var kept: [(UInt64, ArraySlice<UInt8>)] = []
    var expected = revision
    for line in lines.reversed() {
      guard kept.count < self.capacity, let lineRevision = History.revision(of: line[...]) else { break }
      if lineRevision > expected { continue }
      guard lineRevision == expected, expected > 0 else { break }
      kept.append((lineRevision, line[...]))
      expected -= 1
    }
    var known: [ArraySlice<UInt8>: Author] = [:]
    for (lineRevision, line) in kept.reversed() {
      var words = Words(line)
      _ = words.next()
      guard let saved = SavedAuthor(&words, of: line), let event = words.rest() else {
        removeAll()
        continue
      }
      let author = known[saved.who] ?? Author(saved)
      known[saved.who] = author
      append(
        revision: lineRevision, time: saved.time, author: author, event: [UInt8(ascii: "!")] + event + [0x0A])
    }
  }

  public var isEmpty: Bool { count == 0 }

  /// The revision of the oldest change kept.
  public var oldestRevision: UInt64? { isEmpty ? nil : records[first].revision }
  public var newestRevision: UInt64? { isEmpty ? nil : record(count - 1).revision }

  private func record(_ position: Int) -> Record {
    records[(first + position) % capacity]
  }

  /// The event of the change at `position`, from the oldest (0), as subscribers got it.
  public func event(_ position: Int) -> ArraySlice<UInt8> {
    let record = record(position)
    return text[(record.events.lowerBound - dropped)..<(record.events.upperBound - dropped)]
  }

  /// Keeps the change of `revision` made at `time` by `author`, whose event (`!` and LF
  /// included) is `event`, as the newest; the oldest goes when `capacity` are kept. Revisions
  /// must follow one another: a change that does not follow the newest starts the history afresh.
  public mutating func append(revision: UInt64, time: UInt64, author: Author, event: some Collection<UInt8>) {
    guard capacity > 0 else { return }
    if let newest = newestRevision, newest + 1 != revision { removeAll() }
    makeRoom(forChanges: 1, bytes: event.count)
    let start = dropped + text.count
    text.append(contentsOf: event)
    let change = Record(revision: revision, time: time, author: 0, events: start..<(dropped + text.count))
    keep(CollectionOfOne(change), author: slot(of: author), shift: 0)
  }

  /// Keeps the changes of `group` as the newest, their events taken from `events` (where the
  /// group's ranges point) in one copy, each run of one author's changes looking its author up
  /// once: a saved group of a thousand changes costs one copy, not a thousand. Of a group larger
  /// than the history (a BATCH), only what it can keep is copied: its newest `capacity`
  /// changes, within `byteLimit`, and nothing older.
  mutating func append(_ group: Group, events: [UInt8]) {
    let changes = group.changes
    guard capacity > 0, let newestChange = changes.last else { return }
    var from = max(0, changes.count - capacity)
    while from < changes.count - 1,
      newestChange.events.upperBound - changes[from].events.lowerBound > History.byteLimit
    {
      from += 1
    }
    // A group that does not follow the newest kept starts the history afresh (one whose
    // oldest changes are left out never does).
    if let newest = newestRevision, newest + 1 != changes[from].revision { removeAll() }
    let kept = changes[from].events.lowerBound..<newestChange.events.upperBound
    makeRoom(forChanges: changes.count - from, bytes: kept.count)
    let shift = dropped + text.count - kept.lowerBound
    text.append(contentsOf: events[kept])
    var start = from
    while start < changes.count {
      let author = changes[start].author
      var end = start + 1
      while end < changes.count && changes[end].author == author { end += 1 }
      keep(changes[start..<end], author: slot(of: group.authors[Int(author)]), shift: shift)
      start = end
    }
  }

  /// The index of `author` in the table of authors, added when it is not there yet.
  private mutating func slot(of author: Author) -> Int32 {
    if author.slot < 0 || author.slot >= authors.count || authors[author.slot] !== author {
      if authors.count >= capacity + 64 { rebuildAuthors() }
      author.slot = authors.count
      authors.append(author)
    }
    return Int32(author.slot)
  }

  /// Puts the records of `changes`, made by the author in slot `author`, after the
  /// newest, in the room `makeRoom` made. Their events are in `text` already, `shift` bytes of
  /// the stream after where their ranges say. One pass over the ring's storage: a record costs
  /// its stores, not a check of the array's uniqueness.
  private mutating func keep(
    _ changes: some Collection<Record>, author: Int32, shift: Int
  ) {
    if records.isEmpty {
      records = Array(repeating: Record(revision: 0, time: 0, author: 0, events: 0..<0), count: capacity)
    }
    precondition(count + changes.count <= capacity, "no room made in the history")
    let capacity = self.capacity
    var index = first + count
    records.withUnsafeMutableBufferPointer { ring in
      for change in changes {
        if index >= capacity { index -= capacity }
        ring[index] = Record(
          revision: change.revision, time: change.time, author: author,
          events: (change.events.lowerBound + shift)..<(change.events.upperBound + shift))
        index += 1
      }
    }
    count += changes.count
  }

  /// Drops the oldest changes that `adding` changes with `incoming` bytes of events would push
  /// past `capacity` or `byteLimit`, then the events before the oldest kept once they are half
  /// of `text`: room is made before the events come, so `text` holds at most about twice
  /// `byteLimit` however many come at once.
  private mutating func makeRoom(forChanges adding: Int, bytes incoming: Int) {
    // Once full, a group pushes out as many as it brings, in one step.
    dropOldest(min(count, max(0, count + adding - capacity)))
    while count > 0, dropped + text.count + incoming - records[first].events.lowerBound > History.byteLimit {
      dropOldest(1)
    }
    let oldest = count > 0 ? records[first].events.lowerBound - dropped : text.count
    if oldest > text.count / 2 {
      text.removeSubrange(0..<oldest)
      dropped += oldest
    }
  }

  private mutating func dropOldest(_ dropping: Int) {
    first += dropping
    if first >= capacity { first -= capacity }
    count -= dropping
  }

  /// The authors the kept changes refer to, each once, in a table of their own.
  private mutating func rebuildAuthors() {
    var kept: [Author] = []
    for author in authors { author.slot = -1 }
    for position in 0..<count {
      let index = (first + position) % capacity
      let author = authors[Int(records[index].author)]
      if author.slot < 0 {
        author.slot = kept.count
        kept.append(author)
      }
      records[index].author = Int32(author.slot)
    }
    authors = kept
  }

  public mutating func removeAll() {
    text.removeAll(keepingCapacity: true)
    for author in authors { author.slot = -1 }
    authors.removeAll(keepingCapacity: true)
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

  /// The position of the change of `revision`; nil when it is not kept.
  public func position(of revision: UInt64) -> Int? {
    guard let oldest = oldestRevision, revision >= oldest, revision - oldest < UInt64(count) else {
      return nil
    }
    return Int(revision - oldest)
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

  /// The change at `position`, from the oldest (0), as values; with `blankingWho`, without its
  /// uid, pid and name, as `appendLine` blanks them.
  func record(_ position: Int, blankingWho: Bool, processName: (Int32) -> String?) -> HistoryRecord {
    let record = record(position)
    return HistoryRecord(
      revision: record.revision, time: record.time,
      who: HistoryRecord.Who(authors[Int(record.author)], blanking: blankingWho, processName: processName),
      event: text[(record.events.lowerBound - dropped + 1)..<(record.events.upperBound - dropped - 1)])
  }

  /// Appends the line of the change at `position`, `<rev> <time> <via> <uid> <pid> <name>
  /// <event>` and LF; with `blankingWho`, uid, pid and name are `-` (the read-only socket:
  /// SECURITY.md).
  func appendLine(
    _ position: Int, blankingWho: Bool, clock: inout HistoryClock, processName: (Int32) -> String?,
    to buffer: inout [UInt8]
  ) {
    let record = record(position)
    let author = authors[Int(record.author)]
    buffer.appendText { line in
      History.appendLine(
        revision: record.revision,
        author: { line in
          clock.append(milliseconds: record.time, to: &line)
          line.append(" ")
          if blankingWho {
            line.append(utf8: author.via.rawValue)
            line.append(" - - -")
          } else {
            line.append(contentsOf: author.who(processName))
          }
        }, event: text[(record.events.lowerBound - dropped)..<(record.events.upperBound - dropped)], to: &line
      )
    }
  }

  /// Appends a history line, `<rev> <time> <via> <uid> <pid> <name> <event>` and LF (the one
  /// place one is written, from the ring or replayed from the journal; `init(capacity:lines:
  /// revision:)` reads it): `author` appends `<time>` to `<name>`, and `event` is the event
  /// as subscribers got it, `!` and LF included.
  static func appendLine(
    revision: UInt64, author: (inout TextWriter) -> Void, event: ArraySlice<UInt8>, to line: inout TextWriter
  ) {
    line.appendDecimal(revision)
    line.append(" ")
    author(&line)
    line.append(" ")
    line.append(contentsOf: event.dropFirst())
  }
}
