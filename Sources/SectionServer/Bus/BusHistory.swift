import SectionCore
import Systemd

/// The answers of History and ChangedBy, read from the `history` lines of the protocol's reply
/// to `HISTORY` (one code path for what the history shows, and for its blanks).
enum BusHistory {
  /// An uid or pid the caller may not know, or nobody knows: systemd's UID_INVALID.
  static let unknownID = UInt32.max

  static func write(
    _ answer: BusRequest.Answer, _ reply: [UInt8], revision: UInt64, to writer: inout BusWriter
  ) throws {
    let lines = reply.split(separator: 0x0A).filter { $0.starts(with: "history ".utf8) }
    switch answer {
    case .changedBy(let wanted):
      // HISTORY FROM wanted-1 succeeded: its first line is the change of `wanted`.
      guard let first = lines.first, let change = Change(first), change.revision == wanted else {
        throw ProtocolError(.gone, "\(wanted) is not a revision the state has reached yet")
      }
      try writer.append(change.time)
      try writer.append(change.via)
      try writer.append(change.uid)
      try writer.append(change.pid)
      try writer.append(change.name)
    default:
      try writer.append(revision)
      try writer.container("a", "(tssuuss)") { writer in
        for line in lines {
          guard let change = Change(line) else { continue }
          try writer.container("r", "tssuuss") { writer in
            try writer.append(change.revision)
            try writer.append(change.time)
            try writer.append(change.via)
            try writer.append(change.uid)
            try writer.append(change.pid)
            try writer.append(change.name)
            try writer.append(change.event)
          }
        }
      }
    }
  }

  /// A `history <rev> <time> <via> <uid> <pid> <name> <event>` line as its values.
  private struct Change {
    let revision: UInt64
    let time, via, name, event: String
    let uid, pid: UInt32

    init?(_ line: ArraySlice<UInt8>) {
      let words = String(decoding: line, as: UTF8.self).split(separator: " ", maxSplits: 7)
      guard words.count == 8, let revision = UInt64(words[1]) else { return nil }
      self.revision = revision
      time = String(words[2])
      via = String(words[3])
      uid = UInt32(words[4]) ?? BusHistory.unknownID
      pid = UInt32(words[5]) ?? BusHistory.unknownID
      name = String(words[6])
      event = String(words[7])
    }
  }
}
