extension Change {
  /// Appends the event subscribers get for this change (`!opened 7 2 net` ...), `!` and LF
  /// included: the one place an event is rendered, live for subscribers and the history, and
  /// again for the history of changes replayed from the journal. An open or close holds its
  /// section's index only: `appendID` appends the id, a space before it, of the section at that
  /// index as the change left it (live, from the pre-rendered pieces: a TOGGLE copies no id).
  @inline(__always)
  func appendEvent(to buffer: inout TextWriter, appendID: (Int, inout TextWriter) -> Void) {
    func head(_ name: StaticString, _ revision: UInt64, _ index: Int) {
      buffer.append(name)
      buffer.appendDecimal(revision)
      buffer.append(" ")
      buffer.appendDecimal(index)
    }
    func word(_ id: String) {
      buffer.append(" ")
      buffer.append(utf8: id)
    }
    switch self {
    case .opened(let revision, let index):
      head("!opened ", revision, index)
      appendID(index, &buffer)
    case .closed(let revision, let index, _):
      head("!closed ", revision, index)
      appendID(index, &buffer)
    case .mode(let revision, let mode):
      buffer.append("!mode ")
      buffer.appendDecimal(revision)
      buffer.append(" ")
      buffer.append(mode.word)
    case .reloaded(let revision):
      buffer.append("!reload ")
      buffer.appendDecimal(revision)
    case .inserted(let revision, let index, let section):
      head("!inserted ", revision, index)
      word(section.id)
    case .deleted(let revision, let index, let section, _):
      head("!deleted ", revision, index)
      word(section.id)
    case .moved(let revision, let from, let to, let id):
      head("!moved ", revision, from)
      buffer.append(" ")
      buffer.appendDecimal(to)
      word(id)
    case .renamed(let revision, let index, let id, _, _):
      head("!renamed ", revision, index)
      word(id)
    case .items(let revision, let index, let id, _, let count, _):
      head("!items ", revision, index)
      word(id)
      buffer.append(" ")
      buffer.appendDecimal(count)
    }
    buffer.append("\n")
  }
}
