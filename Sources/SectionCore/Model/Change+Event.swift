/// The ids of the sections by index, as an event names them: the one thing an event needs that
/// an open or a close does not hold.
protocol EventSectionIDs {
  /// Appends the id of the section at `index`, a space before it.
  func appendID(_ index: Int, to buffer: inout TextWriter)
}

extension Change {
  /// Appends the event subscribers get for this change (`!opened 7 2 net` ...), `!` and LF
  /// included: the one place an event is rendered, live for subscribers and the history, and
  /// again for the history of changes replayed from the journal. An open or close holds its
  /// section's index only: `ids` gives the id of the section at that index as the change left
  /// it (live, the pre-rendered pieces: a TOGGLE copies no id). Generic rather than a closure:
  /// specialized, the live call costs no context and no indirect call (callgrind).
  @inline(__always)
  func appendEvent(to buffer: inout TextWriter, ids: some EventSectionIDs) {
    switch self {
    case .opened(let revision, let index):
      buffer.appendChangeHead("!opened ", revision, index)
      ids.appendID(index, to: &buffer)
    case .closed(let revision, let index, _):
      buffer.appendChangeHead("!closed ", revision, index)
      ids.appendID(index, to: &buffer)
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

extension SectionModel: EventSectionIDs {
  /// The id from the list itself: for the history of changes replayed from the journal.
  func appendID(_ index: Int, to buffer: inout TextWriter) {
    buffer.appendWord(sections[index].id)
  }
}
