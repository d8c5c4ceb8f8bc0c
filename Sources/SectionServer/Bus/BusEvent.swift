import SectionCore
import Systemd

/// The saved changes sent as their signals: each signal is its change's protocol event
/// (`!opened 7 2 net` is `Opened(7, 2, "net")`), with the same revisions, and an index in a
/// group is the index at the step of its change, as in the event. Made from the changes
/// themselves (`SavedGroup`), not from the events' text.
///
/// The bus daemon, not sd-bus, knows who matches a signal: a sender cannot tell whether
/// anyone listens, so the signals of every saved change are sent while the bus is attached.
/// What they cost sectiond is the message sd-bus builds; reading the change adds nothing.
enum BusEvent {
  /// The properties a group changed besides Revision.
  private struct Changes: OptionSet {
    let rawValue: UInt8
    static let mode = Changes(rawValue: 1)
    static let openSections = Changes(rawValue: 2)
    static let sections = Changes(rawValue: 4)
  }

  /// Emits the signal of every change in `changes` on `bus`, `ids` the ids of the sections
  /// they name (`SavedGroup.sectionIDs`); returns the properties the changes changed:
  /// Revision always, the others when a change of theirs is there.
  static func publish(_ changes: [Change], ids: [String?], on bus: Bus) throws -> [StaticString] {
    var changed: Changes = []
    for (change, id) in zip(changes, ids) {
      switch change {
      case .opened(let revision, let index), .closed(let revision, let index, _):
        guard let id else { continue }
        changed.formUnion([.openSections, .sections])
        try bus.emit(change.isOpened ? "Opened" : "Closed") { try $0.append(revision, index, id) }
      case .mode(let revision, let mode):
        changed.formUnion(.mode)
        try bus.emit("ModeChanged") { writer in
          try writer.append(revision)
          try writer.append(mode.rawValue)
        }
      case .reloaded(let revision):
        changed.formUnion([.openSections, .sections])
        try bus.emit("Reloaded") { try $0.append(revision) }
      case .inserted(let revision, let index, let section):
        changed.formUnion([.openSections, .sections])
        try bus.emit("Inserted") { try $0.append(revision, index, section.id) }
      case .deleted(let revision, let index, let section, _):
        changed.formUnion([.openSections, .sections])
        try bus.emit("Deleted") { try $0.append(revision, index, section.id) }
      case .moved(let revision, let from, let to, let id):
        changed.formUnion([.openSections, .sections])
        try bus.emit("Moved") { writer in
          try writer.append(revision)
          try writer.append(UInt32(clamping: from))
          try writer.append(UInt32(clamping: to))
          try writer.append(id)
        }
      case .renamed(let revision, let index, let id, _, _):
        changed.formUnion(.sections)
        try bus.emit("Renamed") { try $0.append(revision, index, id) }
      case .items(let revision, let index, let id, _, let count, _):
        changed.formUnion(.sections)
        try bus.emit("ItemsChanged") { writer in
          try writer.append(revision, index, id)
          try writer.append(UInt32(clamping: count))
        }
      }
    }
    var names: [StaticString] = ["Revision"]
    if changed.contains(.mode) { names.append("Mode") }
    if changed.contains(.openSections) { names.append("OpenSections") }
    if changed.contains(.sections) { names.append("Sections") }
    return names
  }
}

extension Change {
  fileprivate var isOpened: Bool {
    if case .opened = self { true } else { false }
  }
}

extension BusWriter {
  /// `t u s`: a revision, a section's index, its id; the arguments most signals begin with.
  fileprivate mutating func append(_ revision: UInt64, _ index: Int, _ id: String) throws {
    try append(revision)
    try append(UInt32(clamping: index))
    try append(id)
  }
}
