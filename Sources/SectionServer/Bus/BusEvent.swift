import Systemd

/// The protocol events of a saved group (`!opened 7 2 net` ...) sent as their signals: the
/// signals are the events themselves, as rendered at the step of their change (an index in
/// a batch is the index at that step), with the same revisions. Read from the bytes where
/// they are, without an array or a String per event or word: this runs for every change
/// while the bus is attached, whether or not anyone listens.
enum BusEvent {
  /// An event's name, its signal's member and its argument types (one letter a word of
  /// the event), and the properties a change of that kind changes.
  private struct Signal {
    let event: StaticString
    let member: StaticString
    let types: StaticString
    let changes: Changes
  }

  /// The properties a group changed besides Revision.
  private struct Changes: OptionSet {
    let rawValue: UInt8
    static let mode = Changes(rawValue: 1)
    static let openSections = Changes(rawValue: 2)
    static let sections = Changes(rawValue: 4)
  }

  private static let signals: [Signal] = [
    Signal(event: "opened", member: "Opened", types: "tus", changes: [.openSections, .sections]),
    Signal(event: "closed", member: "Closed", types: "tus", changes: [.openSections, .sections]),
    Signal(event: "mode", member: "ModeChanged", types: "ts", changes: .mode),
    Signal(event: "reload", member: "Reloaded", types: "t", changes: [.openSections, .sections]),
    Signal(event: "inserted", member: "Inserted", types: "tus", changes: [.openSections, .sections]),
    Signal(event: "deleted", member: "Deleted", types: "tus", changes: [.openSections, .sections]),
    Signal(event: "moved", member: "Moved", types: "tuus", changes: [.openSections, .sections]),
    Signal(event: "renamed", member: "Renamed", types: "tus", changes: .sections),
    Signal(event: "items", member: "ItemsChanged", types: "tusu", changes: .sections),
  ]

  private static func signal(named name: UnsafeBufferPointer<UInt8>) -> Signal? {
    signals.first { signal in
      signal.event.utf8CodeUnitCount == name.count
        && UnsafeBufferPointer(start: signal.event.utf8Start, count: name.count).elementsEqual(name)
    }
  }

  /// Emits the signal of every event in `events` on `bus`; returns the properties the
  /// group changed: Revision always, the others when an event of theirs is in the group.
  static func publish(_ events: [UInt8], on bus: Bus) throws -> [StaticString] {
    var changes: Changes = []
    try events.withUnsafeBufferPointer { bytes in
      var start = 0
      while start < bytes.count {
        let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
        defer { start = end + 1 }
        guard bytes[start] == UInt8(ascii: "!") else { continue }
        var words = Words(UnsafeBufferPointer(rebasing: bytes[(start + 1)..<end]))
        guard let name = words.next(), let signal = signal(named: name),
          words.count == signal.types.utf8CodeUnitCount
        else { continue }
        changes.formUnion(signal.changes)
        try bus.emit(signal.member) { writer in
          for type in UnsafeBufferPointer(
            start: signal.types.utf8Start, count: signal.types.utf8CodeUnitCount)
          {
            let word = words.next()!
            switch type {
            case UInt8(ascii: "t"): try writer.append(decimal(word))
            case UInt8(ascii: "u"): try writer.append(UInt32(clamping: decimal(word)))
            default: try writer.append(utf8: word)
            }
          }
        }
      }
    }
    var names: [StaticString] = ["Revision"]
    if changes.contains(.mode) { names.append("Mode") }
    if changes.contains(.openSections) { names.append("OpenSections") }
    if changes.contains(.sections) { names.append("Sections") }
    return names
  }

  /// The space-separated words of an event line, in place.
  private struct Words {
    var rest: UnsafeBufferPointer<UInt8>

    init(_ line: UnsafeBufferPointer<UInt8>) { rest = line }

    /// How many words are left.
    var count: Int {
      var count = 0
      var inWord = false
      for byte in rest {
        if byte == 0x20 {
          inWord = false
        } else if !inWord {
          inWord = true
          count += 1
        }
      }
      return count
    }

    mutating func next() -> UnsafeBufferPointer<UInt8>? {
      guard let first = rest.firstIndex(where: { $0 != 0x20 }) else { return nil }
      let end = rest[first...].firstIndex(of: 0x20) ?? rest.endIndex
      defer { rest = UnsafeBufferPointer(rebasing: rest[end...]) }
      return UnsafeBufferPointer(rebasing: rest[first..<end])
    }
  }

  private static func decimal(_ word: UnsafeBufferPointer<UInt8>) -> UInt64 {
    word.reduce(0) { $0 &* 10 &+ UInt64($1 &- 0x30) }
  }
}
