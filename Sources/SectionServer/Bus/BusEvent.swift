import Systemd

/// The protocol events of a saved group (`!opened 7 2 net` ...) sent as their signals: the
/// signals are the events themselves, as rendered at the step of their change (an index in
/// a batch is the index at that step), with the same revisions. Read from the bytes as they
/// are, without a String per word: this runs for every change while the bus is attached.
enum BusEvent {
  /// The signal's member and its argument types, one letter a word of the event, by the
  /// event's name.
  private static func signal(_ name: ArraySlice<UInt8>) -> (member: String, types: StaticString)? {
    switch String(decoding: name, as: UTF8.self) {
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

  /// Emits the signal of every event in `events` on `bus`; returns the properties the
  /// group changed: Revision always, the others when an event of theirs is in the group.
  static func publish(_ events: [UInt8], on bus: Bus) throws -> [String] {
    var mode = false
    var openSections = false
    var sections = false
    for line in events.split(separator: 0x0A) where line.first == UInt8(ascii: "!") {
      let words = line.dropFirst().split(separator: 0x20)
      guard let name = words.first, let (member, types) = signal(name),
        types.utf8CodeUnitCount == words.count - 1
      else { continue }
      switch member {
      case "ModeChanged": mode = true
      case "Renamed", "ItemsChanged": sections = true
      default:
        openSections = true
        sections = true
      }
      try bus.emit(member) { writer in
        for (type, word) in zip(
          UnsafeBufferPointer(start: types.utf8Start, count: types.utf8CodeUnitCount), words.dropFirst())
        {
          switch type {
          case UInt8(ascii: "t"): try writer.append(decimal(word))
          case UInt8(ascii: "u"): try writer.append(UInt32(clamping: decimal(word)))
          default: try writer.append(utf8: word)
          }
        }
      }
    }
    return ["Revision"] + (mode ? ["Mode"] : []) + (openSections ? ["OpenSections"] : [])
      + (sections ? ["Sections"] : [])
  }

  private static func decimal(_ word: ArraySlice<UInt8>) -> UInt64 {
    word.reduce(0) { $0 &* 10 &+ UInt64($1 &- 0x30) }
  }
}
