extension Change {
  /// Appends the event subscribers get for this change (`!opened 7 2 net` ...), `!` and LF
  /// included: the one place an event is rendered, live for subscribers and the history, and
  /// again for the history of changes replayed from the journal. An open or close holds its
  /// section's index only: `appendID` appends the id, a space before it, of the section at that
  /// index as the change left it (live, from the pre-rendered pieces: a TOGGLE copies no id).
  @inline(__always)
  func appendEvent(to buffer: inout TextWriter, appendID: (Int, inout TextWriter) -> Void) {
    switch self {
    case .opened(let revision, let index):
      buffer.appendChangeHead("!opened ", revision, index)
      appendID(index, &buffer)
    case .closed(let revision, let index, _):
      buffer.appendChangeHead("!closed ", revision, index)
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
      buffer.appendChangeHead("!inserted ", revision, index)
      buffer.appendWord(section.id)
    case .deleted(let revision, let index, let section, _):
      buffer.appendChangeHead("!deleted ", revision, index)
      buffer.appendWord(section.id)
    case .moved(let revision, let from, let to, let id):
      buffer.appendChangeHead("!moved ", revision, from)
      buffer.appendNumber(to)
      buffer.appendWord(id)
    case .renamed(let revision, let index, let id, _, _):
      buffer.appendChangeHead("!renamed ", revision, index)
      buffer.appendWord(id)
    case .items(let revision, let index, let id, _, let count, _):
      buffer.appendChangeHead("!items ", revision, index)
      buffer.appendWord(id)
      buffer.appendNumber(count)
    }
    buffer.append("\n")
  }
}
