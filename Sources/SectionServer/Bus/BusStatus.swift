import SectionCore

/// Reads the protocol's reply to a bus call back: its status line, and Toggle's section line.
enum BusStatus {
  /// The revision of `OK <rev>`, or the `ERR <CODE> <message>` that ends `reply`.
  static func of(_ reply: [UInt8]) -> Result<UInt64, ProtocolError> {
    var end = reply.endIndex
    if end > reply.startIndex && reply[end - 1] == 0x0A { end -= 1 }
    let start = reply[..<end].lastIndex(of: 0x0A).map { $0 + 1 } ?? reply.startIndex
    let line = String(decoding: reply[start..<end], as: UTF8.self)
    if line.hasPrefix("OK") {
      return .success(UInt64(line.dropFirst(3)) ?? 0)
    }
    let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
    let code = words.count > 1 ? ProtocolError.Code(rawValue: String(words[1])) : nil
    return .failure(ProtocolError(code ?? .internal, words.count > 2 ? String(words[2]) : line))
  }

  /// Whether the `section <index> <id> <open|closed> ...` line that starts `reply` says open.
  static func isOpen(_ reply: [UInt8]) -> Bool {
    guard reply.starts(with: "section ".utf8) else { return false }
    var spaces = 0
    for (position, byte) in reply.enumerated() {
      if byte == 0x0A { return false }
      if byte == 0x20 {
        spaces += 1
        if spaces == 3 { return reply[(position + 1)...].starts(with: "open ".utf8) }
      }
    }
    return false
  }

  /// The D-Bus error name of a protocol error code (docs/DBUS.md, "Errors").
  static func errorName(_ code: ProtocolError.Code) -> String {
    switch code {
    case .noSection: "org.sectiond.Sectiond1.Error.NoSuchSection"
    case .mode: "org.sectiond.Sectiond1.Error.WrongMode"
    case .exists: "org.sectiond.Sectiond1.Error.Exists"
    case .limit: "org.sectiond.Sectiond1.Error.Limit"
    case .internal, .busy: "org.sectiond.Sectiond1.Error.NotSaved"
    case .noItem: "org.sectiond.Sectiond1.Error.NoSuchItem"
    case .range: "org.sectiond.Sectiond1.Error.OutOfRange"
    case .config: "org.sectiond.Sectiond1.Error.Config"
    case .readOnly: "org.freedesktop.DBus.Error.AccessDenied"
    // History takes a count, never a revision: GONE does not reach the bus.
    case .gone: "org.sectiond.Sectiond1.Error.Gone"
    // UNKNOWN reaches the bus only from a line of Batch: an argument, like SYNTAX.
    case .syntax, .tooLong, .unknown: "org.freedesktop.DBus.Error.InvalidArgs"
    }
  }
}
