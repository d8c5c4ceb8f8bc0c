import SectionCore
import Systemd

/// The answers of History and ChangedBy, from the changes `HISTORY` lists as values
/// (`SectionService.Answer.changes`): what the history shows, and its blanks, as its lines
/// show them (docs/DBUS.md).
enum BusHistory {
  /// An uid or pid the caller may not know, or nobody knows: systemd's UID_INVALID.
  static let unknownID = UInt32.max

  static func write(
    _ answer: BusRequest.Answer, _ changes: [HistoryRecord], revision: UInt64, to writer: inout BusWriter
  ) throws {
    var clock = HistoryClock()
    switch answer {
    case .changedBy(let wanted):
      // HISTORY FROM wanted-1 succeeded: its first change is `wanted`.
      guard let change = changes.first, change.revision == wanted else {
        throw ProtocolError(.gone, "\(wanted) is not a revision the state has reached yet")
      }
      try appendWho(change, clock: &clock, to: &writer)
    default:
      try writer.append(revision)
      try writer.container("a", "(tssuuss)") { writer in
        for change in changes {
          try writer.container("r", "tssuuss") { writer in
            try writer.append(change.revision)
            try appendWho(change, clock: &clock, to: &writer)
            try writer.append(String(decoding: change.event, as: UTF8.self))
          }
        }
      }
    }
  }

  /// `(s time, s via, u uid, u pid, s name)` of `change`, as its `history` line shows them.
  private static func appendWho(
    _ change: HistoryRecord, clock: inout HistoryClock, to writer: inout BusWriter
  )
    throws
  {
    try writer.append(clock.string(milliseconds: change.time))
    try writer.append(change.who.via.rawValue)
    try writer.append(change.who.uid ?? unknownID)
    try writer.append(change.who.pid.map { UInt32($0) } ?? unknownID)
    try writer.append(change.who.name.isEmpty ? "-" : String(decoding: change.who.name, as: UTF8.self))
  }
}
