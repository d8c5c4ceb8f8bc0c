import Systemd

/// One protocol event line of a saved group (`!opened 7 2 net`), and the signal it becomes:
/// the signals are the events themselves, as rendered at the step of their change (an index
/// in a batch is the index at that step), with the same revisions.
struct BusEvent {
  let name: Substring
  let words: [Substring]

  /// The events of `bytes`, one per line.
  static func parse(_ bytes: [UInt8]) -> [BusEvent] {
    bytes.split(separator: 0x0A).compactMap { line in
      guard line.first == UInt8(ascii: "!") else { return nil }
      let words = String(decoding: line.dropFirst(), as: UTF8.self).split(separator: " ")
      return words.first.map { BusEvent(name: $0, words: Array(words.dropFirst())) }
    }
  }

  /// The signal's member and its argument types, one letter a word of the event.
  private var signal: (member: String, types: String)? {
    switch name {
    case "opened": ("Opened", "tus")
    case "closed": ("Closed", "tus")
    case "mode": ("ModeChanged", "ts")
    case "reload": ("Reloaded", "t")
    case "inserted": ("Inserted", "tus")
    case "deleted": ("Deleted", "tus")
    case "moved": ("Moved", "tuus")
    case "renamed": ("Renamed", "tus")
    case "items": ("ItemsChanged", "tusu")
    default: nil
    }
  }

  /// Emits the signal on `bus`; an event without one (none today) is skipped.
  func emit(on bus: Bus) throws {
    guard let (member, types) = signal, types.count == words.count else { return }
    try bus.emit(member) { writer in
      for (type, word) in zip(types, words) {
        switch type {
        case "t": try writer.append(UInt64(word) ?? 0)
        case "u": try writer.append(UInt32(word) ?? 0)
        default: try writer.append(String(word))
        }
      }
    }
  }
}
