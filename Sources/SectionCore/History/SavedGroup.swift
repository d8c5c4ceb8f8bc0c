/// One group commit's changes as one value: what the service hands the server once per loop
/// turn, and what every consumer of a save reads (the state file's journal, the history, the
/// subscribers, `--log-changes`, the D-Bus signals, and whatever comes next), each from the
/// part it needs, none from another's text.
///
/// It holds the turn's buffers by reference, not copies: the events are rendered once, at the
/// change, and shared by every subscriber; the journal lines are those the store appends.
public struct SavedGroup {
  /// The changes, oldest first, revision after revision.
  public let changes: [Change]
  /// Who made each change and where its event is in `events` (parallel to `changes`), and the
  /// group's time; empty when the history keeps nothing (`--history 0`: nothing reads them
  /// then, and recording them would cost every change).
  let records: History.Group
  /// The protocol events of the changes (`!opened 7 2 net` ...), each with its LF.
  public let events: [UInt8]
  /// The journal lines of the changes (see `Journal`), without the group's `commit` line.
  public let journal: [UInt8]
  /// Whether the group must be saved as a whole state file (a reload: the journal records
  /// edits, not configs).
  public let needsSnapshot: Bool
  /// The state's revision once the group is saved: its last change's, or the current one
  /// when it has none.
  public let revision: UInt64

  init(
    changes: [Change], records: History.Group, events: [UInt8], journal: [UInt8], needsSnapshot: Bool,
    revision: UInt64
  ) {
    self.changes = changes
    self.records = records
    self.events = events
    self.journal = journal
    self.needsSnapshot = needsSnapshot
    self.revision = revision
  }

  public var isEmpty: Bool { changes.isEmpty }

  /// The revisions of the first and the last change; nil for a group without changes.
  public var revisions: ClosedRange<UInt64>? {
    guard let first = changes.first, let last = changes.last else { return nil }
    return first.revision...last.revision
  }

  /// When the changes were made, in milliseconds since the epoch (all in one loop turn); 0
  /// when the history keeps nothing.
  public var time: UInt64 { records.time }

  /// Each author's run of changes, in order: the author and the positions in `changes` of its
  /// changes. One run per author's turn in the group (a client, a bus caller, a reload), as the
  /// journal's `by` lines have them; none when the history keeps nothing.
  public var runs: [(author: Author, changes: Range<Int>)] {
    let entries = records.changes
    var runs: [(author: Author, changes: Range<Int>)] = []
    var start = 0
    while start < entries.count {
      let author = entries[start].author
      var end = start + 1
      while end < entries.count && entries[end].author == author { end += 1 }
      runs.append((records.authors[Int(author)], start..<end))
      start = end
    }
    return runs
  }

  /// The event of the change at `position` in `changes`, `!` and LF included, as subscribers
  /// got it; nil when the history keeps nothing (the events are not divided then).
  public func event(_ position: Int) -> ArraySlice<UInt8>? {
    guard position < records.changes.count else { return nil }
    return events[records.changes[position].events]
  }

  /// The id of the section each change names, as it was at that change, for the group saved
  /// with `model` as the state after it; nil for a mode switch or a reload. A change names its
  /// section by index as of its step, and later changes of the group may insert, delete or
  /// move sections: the ids are walked back from `model`'s through the group's changes, only
  /// when the group moved sections (and only by a consumer that asks: nothing on the path of a
  /// change does).
  ///
  /// A reload is the first change of its group (it waits for other clients' changes to be
  /// saved); should one come later, the sections before it are not known, and changes of
  /// sections before it get nil.
  public func sectionIDs(after model: SectionModel) -> [String?] {
    let moves = changes.contains { change in
      switch change {
      case .inserted, .deleted, .moved, .reloaded: true
      default: false
      }
    }
    guard moves else {
      return changes.map { change in
        switch change {
        case .opened(_, let index), .closed(_, let index, _): model.sections[index].id
        default: change.sectionID
        }
      }
    }
    var ids: [String]? = Array(model.sections.lazy.map(\.id))
    var named = [String?](repeating: nil, count: changes.count)
    for (position, change) in changes.enumerated().reversed() {
      switch change {
      case .opened(_, let index), .closed(_, let index, _):
        named[position] = ids.flatMap { index < $0.count ? $0[index] : nil }
      default:
        named[position] = change.sectionID
      }
      // The ids before this change.
      switch change {
      case .inserted(_, let index, _): ids?.remove(at: index)
      case .deleted(_, let index, let section, _): ids?.insert(section.id, at: index)
      case .moved(_, let from, let to, _):
        if var known = ids { known.insert(known.remove(at: to), at: from); ids = known }
      case .reloaded: ids = nil
      default: break
      }
    }
    return named
  }
}
