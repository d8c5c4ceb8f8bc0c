/// The journal: the changes saved since the last whole state file, one text line each, so that
/// a change costs what it changed to save rather than the size of the list.
///
/// Each group commit appends its changes, then `commit <rev>`; only complete groups are read
/// back, so a group torn by a crash is ignored whole (a batch stays all or nothing).
///
/// ```
/// open 8 2
/// insert 9 0 news Latest news
/// items 10 0 news 1 insert 0 Hello
/// commit 10
/// ```
public enum Journal {
  /// Appends the line of `change`. A reload is never journaled: it is saved as a whole state.
  public static func append(_ change: Change, to buffer: inout [UInt8]) {
    func head(_ name: StaticString, _ revision: UInt64, _ index: Int) {
      buffer.append(name)
      buffer.append(" ")
      buffer.appendDecimal(revision)
      buffer.append(" ")
      buffer.appendDecimal(index)
    }
    func word(_ text: String) {
      buffer.append(" ")
      buffer.append(utf8: text)
    }
    func number(_ value: Int) {
      buffer.append(" ")
      buffer.appendDecimal(value)
    }
    switch change {
    case .opened(let revision, let index): head("open", revision, index)
    case .closed(let revision, let index, _): head("close", revision, index)
    case .mode(let revision, let mode):
      buffer.append("mode ")
      buffer.appendDecimal(revision)
      buffer.append(" ")
      buffer.append(mode.word)
    case .reloaded: preconditionFailure("a reload is saved as a whole state")
    case .inserted(let revision, let index, let section):
      head("insert", revision, index)
      word(section.id)
      word(section.title)
    case .deleted(let revision, let index, let section, _):
      head("delete", revision, index)
      word(section.id)
    case .moved(let revision, let from, let to, let id):
      head("move", revision, from)
      number(to)
      word(id)
    case .renamed(let revision, let index, let id, let title, _):
      head("rename", revision, index)
      word(id)
      word(title)
    case .items(let revision, let index, let id, let edit, let count, _):
      head("items", revision, index)
      word(id)
      number(count)
      switch edit {
      case .insert(let position, let text):
        buffer.append(" insert")
        number(position)
        word(text)
      case .delete(let position):
        buffer.append(" delete")
        number(position)
      case .move(let from, let to):
        buffer.append(" move")
        number(from)
        number(to)
      case .set(let position, let text):
        buffer.append(" set")
        number(position)
        word(text)
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

  /// Appends the line that ends a group commit.
  public static func appendCommit(revision: UInt64, to buffer: inout [UInt8]) {
    buffer.append("commit ")
    buffer.appendDecimal(revision)
    buffer.append("\n")
  }

  /// The complete groups in `bytes`, each with the revision it committed. An incomplete last
  /// group (a crash while appending it) is left out; any other damage is an error. What only
  /// undoing needs is not in the journal: the changes read back have it empty.
  public static func decode(_ bytes: [UInt8]) throws(ConfigError) -> [(revision: UInt64, changes: [Change])] {
    var groups: [(revision: UInt64, changes: [Change])] = []
    var group: [Change] = []
    var start = 0
    var number = 0
    while let newline = bytes[start...].firstIndex(of: 0x0A) {
      number += 1
      let line = bytes[start..<newline]
      start = newline + 1
      guard let parsed = parse(line) else {
        throw ConfigError("journal line \(number) is damaged: \(String(decoding: line, as: UTF8.self))")
      }
      switch parsed {
      case .change(let change): group.append(change)
      case .commit(let revision):
        groups.append((revision, group))
        group = []
      }
    }
    return groups
  }

  private enum Line {
    case change(Change)
    case commit(UInt64)
  }

  private static func parse(_ line: ArraySlice<UInt8>) -> Line? {
    var words = Words(line)
    guard let name = words.next(), let revisionWord = words.next(),
      let revision = RequestParser.number(revisionWord).map(UInt64.init)
    else { return nil }
    func string(_ word: ArraySlice<UInt8>?) -> String? { word.map { String(decoding: $0, as: UTF8.self) } }
    func number() -> Int? { words.next().flatMap(RequestParser.number) }
    switch String(decoding: name, as: UTF8.self) {
    case "commit": return .commit(revision)
    case "mode":
      guard let word = words.next(), let mode = Mode(bytes: word) else { return nil }
      return .change(.mode(revision: revision, mode))
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
    return change.map(Line.change)
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
  /// The state after the journal's groups that came after this state file, for a start.
  /// A group that does not repeat is an error: the journal belongs to another state file.
  public func replaying(_ groups: [(revision: UInt64, changes: [Change])]) throws(ConfigError) -> SavedState {
    let newer = groups.filter { $0.revision > revision }
    guard !newer.isEmpty else { return self }
    guard let list else { throw ConfigError("a journal needs a state file of format 2") }
    var model = SectionModel(
      restoring: list, openedAt: list.map { sections[$0.id] ?? nil }, mode: mode, revision: revision,
      deleted: deleted, edited: edited)
    for group in newer {
      for change in group.changes {
        do throws(ProtocolError) {
          try model.replay(change)
        } catch {
          throw ConfigError("journal: \(error.message)")
        }
      }
      guard model.revision == group.revision else {
        throw ConfigError("journal: group committed at revision \(group.revision) ends at \(model.revision)")
      }
    }
    return SavedState(model)
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
