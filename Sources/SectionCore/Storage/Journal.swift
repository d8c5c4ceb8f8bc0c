import SectionShared
/// The journal: the changes saved since the last whole state file, one text line each, so that
/// a change costs what it changed to save rather than the size of the list.
///
/// Each group commit appends its changes, then `commit <rev> <crc>`: the CRC-32C (eight hex
/// digits) of the group's bytes up to that checksum. Only complete groups whose checksum holds
/// are read back, so a group torn by a crash or a power cut, or written in part, is dropped
/// whole (a batch stays all or nothing) and never read as something else.
///
/// ```
/// open 8 2
/// insert 9 0 news Latest news
/// items 10 0 news 1 insert 0 Hello
/// commit 10 5f0e8a1c
/// ```
/// Who made the changes travels with them, in the same group: a `by <time> <via> <uid> <pid>
/// <name>` line says whose the changes after it are (see `History`), once for a client's run
/// of changes. Journals written before the history have none.
///
/// Journals written before checksums end groups with `commit <rev>` alone; they are read as
/// before (the first commit line decides which kind a journal is).
public enum Journal {
  /// Appends the line of `change`. A reload is never journaled: it is saved as a whole state.
  public static func append(_ change: Change, to bytes: inout [UInt8]) {
    bytes.appendText { append(change, to: &$0) }
  }

  static func append(_ change: Change, to buffer: inout TextWriter) {
    switch change {
    case .opened(let revision, let index): buffer.appendChangeHead("open ", revision, index)
    case .closed(let revision, let index, _): buffer.appendChangeHead("close ", revision, index)
    case .mode(let revision, let mode):
      buffer.append("mode ")
      buffer.appendDecimal(revision)
      buffer.append(" ")
      buffer.append(mode.word)
    case .reloaded: preconditionFailure("a reload is saved as a whole state")
    case .inserted(let revision, let index, let section):
      buffer.appendChangeHead("insert ", revision, index)
      buffer.appendWord(section.id)
      buffer.appendWord(section.title)
    case .deleted(let revision, let index, let section, _):
      buffer.appendChangeHead("delete ", revision, index)
      buffer.appendWord(section.id)
    case .moved(let revision, let from, let to, let id):
      buffer.appendChangeHead("move ", revision, from)
      buffer.appendNumber(to)
      buffer.appendWord(id)
    case .renamed(let revision, let index, let id, let title, _):
      buffer.appendChangeHead("rename ", revision, index)
      buffer.appendWord(id)
      buffer.appendWord(title)
    case .items(let revision, let index, let id, let edit, let count, _):
      buffer.appendChangeHead("items ", revision, index)
      buffer.appendWord(id)
      buffer.appendNumber(count)
      switch edit {
      case .insert(let position, let text):
        buffer.append(" insert")
        buffer.appendNumber(position)
        buffer.appendWord(text)
      case .delete(let position):
        buffer.append(" delete")
        buffer.appendNumber(position)
      case .move(let from, let to):
        buffer.append(" move")
        buffer.appendNumber(from)
        buffer.appendNumber(to)
      case .set(let position, let text):
        buffer.append(" set")
        buffer.appendNumber(position)
        buffer.appendWord(text)
      }
    }
    buffer.append("\n")
  }

  /// The line of `change`, LF included.
  static func line(_ change: Change) -> [UInt8] {
    var line: [UInt8] = []
    append(change, to: &line)
    return line
  }

  /// Appends the line that ends a group commit; the group is `buffer[groupStart...]`, which
  /// its checksum covers together with the start of this line.
  public static func appendCommit(revision: UInt64, to buffer: inout [UInt8], groupStart: Int) {
    buffer.appendText { line in
      line.append("commit ")
      line.appendDecimal(revision)
      line.append(" ")
    }
    let checksum = CRC32C.checksum(buffer[groupStart...])
    buffer.appendText { line in
      for shift in stride(from: 28, through: 0, by: -4) {
        let digit = UInt8((checksum >> UInt32(shift)) & 0xF)
        line.append(digit < 10 ? 0x30 + digit : 0x57 + digit)
      }
      line.append("\n")
    }
  }

  /// What a journal holds: its intact groups, in order, each with the revision it committed,
  /// and where reading stopped short of the end, if it did.
  public struct Contents {
    public var groups: [(revision: UInt64, changes: [Change])] = []
    /// Who made each change of the intact groups, by revision, from the `by` lines (one that
    /// does not read names no one).
    public var authors: [UInt64: SavedAuthor] = [:]
    public var stop: Stop?
  }

  /// The first group that could not be read, and why. A crash or a power cut leaves at most a
  /// torn last group; one followed by intact groups is damage.
  public struct Stop: Sendable, CustomStringConvertible {
    /// The line that group starts at, from 1.
    public let line: Int
    public let reason: String
    /// Whether complete groups with a good checksum follow it (which were not read).
    public let intactGroupsAfter: Bool

    public var description: String { "line \(line): \(reason)" }
  }

  /// The intact groups in `bytes`, up to the first that is incomplete, fails its checksum or
  /// does not parse. What only undoing needs is not in the journal: the changes read back have
  /// it empty.
  public static func decode(_ bytes: [UInt8]) -> Contents {
    var contents = Contents()
    var group: [Change] = []
    var groupAuthors: [(UInt64, SavedAuthor)] = []
    var by: SavedAuthor?
    var groupStart = 0
    var groupLine = 1
    var damage: String?
    var checksummed: Bool?
    var start = 0
    var number = 0
    func stop(_ reason: String) -> Contents {
      contents.stop = Stop(
        line: groupLine, reason: reason, intactGroupsAfter: hasIntactGroup(bytes, after: start))
      return contents
    }
    while let newline = bytes[start...].firstIndex(of: 0x0A) {
      number += 1
      let line = bytes[start..<newline]
      start = newline + 1
      guard let commit = commitLine(line) else {
        if damage == nil {
          if line.starts(with: "by ".utf8) {
            var words = Words(line.dropFirst(3))
            by = SavedAuthor(&words, of: line)
          } else if let change = parse(line) {
            group.append(change)
            if let by { groupAuthors.append((change.revision, by)) }
          } else {
            damage = "line \(number) is damaged: \(String(decoding: line.prefix(80), as: UTF8.self))"
          }
        }
        continue
      }
      if checksummed == nil { checksummed = commit.checksum != nil }
      if let checksum = commit.checksum {
        let covered = bytes[groupStart..<(line.endIndex - 8)]
        guard checksummed == true, checksum == CRC32C.checksum(covered) else {
          return stop("the group's checksum does not match (torn or damaged)")
        }
      } else if checksummed == true {
        return stop("line \(number) has no checksum")
      }
      if let damage { return stop(damage) }
      contents.groups.append((commit.revision, group))
      for (revision, author) in groupAuthors { contents.authors[revision] = author }
      group = []
      groupAuthors = []
      by = nil
      groupStart = start
      groupLine = number + 1
    }
    if groupStart < bytes.count { return stop("the last group is incomplete") }
    return contents
  }

  /// `commit <rev> <crc>` or `commit <rev>`: the revision and the checksum, if any; nil for
  /// any other line.
  private static func commitLine(_ line: ArraySlice<UInt8>) -> (revision: UInt64, checksum: UInt32?)? {
    var words = Words(line)
    guard let name = words.next(), name.elementsEqual("commit".utf8), let word = words.next(),
      let revision = RequestParser.number(word).map(UInt64.init)
    else { return nil }
    guard let hex = words.next() else { return (revision, nil) }
    guard hex.count == 8, words.next() == nil, hex.endIndex == line.endIndex,
      let checksum = UInt32(String(decoding: hex, as: UTF8.self), radix: 16)
    else { return nil }
    return (revision, checksum)
  }

  /// Whether a complete group with a good checksum starts somewhere after `offset`: whether
  /// what a stop leaves out holds acknowledged changes rather than only a torn end.
  private static func hasIntactGroup(_ bytes: [UInt8], after offset: Int) -> Bool {
    var groupStart = offset
    var start = offset
    while let newline = bytes[start...].firstIndex(of: 0x0A) {
      let line = bytes[start..<newline]
      start = newline + 1
      guard let commit = commitLine(line) else { continue }
      if let checksum = commit.checksum, CRC32C.checksum(bytes[groupStart..<(line.endIndex - 8)]) == checksum
      {
        return true
      }
      groupStart = start
    }
    return false
  }

  private static func parse(_ line: ArraySlice<UInt8>) -> Change? {
    var words = Words(line)
    guard let name = words.next(), let revisionWord = words.next(),
      let revision = RequestParser.number(revisionWord).map(UInt64.init)
    else { return nil }
    func string(_ word: ArraySlice<UInt8>?) -> String? { word.map { String(decoding: $0, as: UTF8.self) } }
    func number() -> Int? { words.next().flatMap(RequestParser.number) }
    switch String(decoding: name, as: UTF8.self) {
    case "mode":
      guard let word = words.next(), let mode = Mode(bytes: word) else { return nil }
      return .mode(revision: revision, mode)
    default: break
    }
    guard let index = number() else { return nil }
    let change: Change?
    switch String(decoding: name, as: UTF8.self) {
    case "open": change = .opened(revision: revision, index: index)
    case "close": change = .closed(revision: revision, index: index, openSince: 0)
    case "insert":
      change = string(words.next()).flatMap { id in
        string(words.rest()).map { title in
          .inserted(
            revision: revision, index: index,
            section: Section(id: id, title: title, items: [], origin: .client))
        }
      }
    case "delete":
      change = string(words.next()).map {
        .deleted(
          revision: revision, index: index, section: Section(id: $0, title: $0, items: []), openSince: nil)
      }
    case "move":
      guard let to = number(), let id = string(words.next()) else { return nil }
      change = .moved(revision: revision, from: index, to: to, id: id)
    case "rename":
      guard let id = string(words.next()), let title = string(words.rest()) else { return nil }
      change = .renamed(revision: revision, index: index, id: id, title: title, previous: "")
    case "items":
      guard let id = string(words.next()), let count = number(), let edit = itemEdit(&words) else {
        return nil
      }
      change = .items(revision: revision, index: index, id: id, edit: edit, count: count, previous: nil)
    default: change = nil
    }
    return change
  }

  private static func itemEdit(_ words: inout Words) -> ItemEdit? {
    guard let action = words.next(), let first = words.next().flatMap(RequestParser.number) else {
      return nil
    }
    switch String(decoding: action, as: UTF8.self) {
    case "insert": return words.rest().map { .insert(at: first, text: String(decoding: $0, as: UTF8.self)) }
    case "delete": return .delete(at: first)
    case "move": return words.next().flatMap(RequestParser.number).map { .move(from: first, to: $0) }
    case "set": return words.rest().map { .set(at: first, text: String(decoding: $0, as: UTF8.self)) }
    default: return nil
    }
  }
}

extension SavedState {
  /// The state after the journal's groups that came after this state file, for a start: groups
  /// it already holds are skipped, the rest applied in order as far as they continue it.
  /// `stop` says why a group was not applied (it does not follow on, or does not apply: the
  /// journal belongs to another state file, or lost groups between); nil when all were.
  ///
  /// The history's lines of the changes replayed follow this file's, for those `authors` names
  /// (the journal's `by` lines), their events rendered from the model as it was at each.
  public func replaying(
    _ groups: [(revision: UInt64, changes: [Change])], authors: [UInt64: SavedAuthor] = [:]
  ) -> (state: SavedState, stop: String?) {
    let newer = groups.filter { $0.revision > revision }
    guard !newer.isEmpty else { return (self, nil) }
    guard list != nil else { return (self, "a journal needs a state file of format 2") }
    var lines = history
    var state: SavedState
    var stop: String?
    do throws(ReplayFailure) {
      state = SavedState(try replayed(newer[...], authors: authors, lines: &lines))
    } catch {
      // Applied in part: replay the groups before the one that failed (which all apply).
      let failed = error.group
      lines = history
      state = SavedState((try? replayed(newer[..<failed], authors: authors, lines: &lines)) ?? restored)
      stop = error.message
    }
    state.history = lines
    return (state, stop)
  }

  /// The model this state file holds, as saved (no config reconciled with it): what a host
  /// sharing the list adopts from the shared snapshot.
  public var restored: SectionModel {
    let list = list ?? []
    return SectionModel(
      restoring: list, openedAt: list.map { sections[$0.id] ?? nil }, mode: mode, revision: revision,
      deleted: deleted, edited: edited)
  }

  private struct ReplayFailure: Error {
    let group: Int
    let message: String
  }

  private func replayed(
    _ groups: ArraySlice<(revision: UInt64, changes: [Change])>, authors: [UInt64: SavedAuthor],
    lines: inout [[UInt8]]
  ) throws(ReplayFailure) -> SectionModel {
    var model = restored
    for (index, group) in zip(groups.indices, groups) {
      guard group.revision > model.revision else { continue }
      guard group.changes.first?.revision == model.revision + 1 else {
        throw ReplayFailure(
          group: index,
          message:
            "the group committed at revision \(group.revision) does not follow revision \(model.revision)")
      }
      for change in group.changes {
        do throws(ProtocolError) {
          try model.replay(change)
        } catch {
          throw ReplayFailure(group: index, message: "revision \(change.revision): \(error.message)")
        }
        if let author = authors[change.revision] {
          var event: [UInt8] = []
          event.appendText { change.appendEvent(to: &$0, ids: model) }
          var line: [UInt8] = []
          line.appendText { line in
            History.appendLine(
              revision: change.revision, author: { $0.append(contentsOf: author.text) }, event: event[...],
              to: &line)
          }
          // The state file keeps its lines without LF.
          line.removeLast()
          lines.append(line)
        }
      }
      guard model.revision == group.revision else {
        throw ReplayFailure(
          group: index, message: "the group committed at revision \(group.revision) ends at \(model.revision)"
        )
      }
    }
    return model
  }
}

extension SectionModel {
  /// The model a state file describes, exactly, without a config: for replaying the journal.
  init(
    restoring sections: [Section], openedAt: [UInt64?], mode: Mode, revision: UInt64, deleted: Set<String>,
    edited: Set<String>
  ) {
    self.sections = ChunkedArray(sections)
    self.openedAt = ChunkedArray(openedAt)
    self.mode = mode
    self.revision = revision
    deletedConfigIDs = deleted
    editedConfigIDs = edited
    summarizeSections()
  }
}
