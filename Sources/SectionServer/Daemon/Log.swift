import Posix
import SectionShared

/// One line per event worth knowing, to stderr. Under systemd (JOURNAL_STREAM names our stderr)
/// each line starts with its `<N>` syslog priority and the journal adds the time; on a terminal
/// it is a plain `sectiond: warning: ...` line.
package enum Log {
  enum Level: Int32, Comparable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  nonisolated(unsafe) static var threshold = Level.info
  nonisolated(unsafe) private static var toJournal = stderrIsJournal()

  package static func error(_ message: String) { write(.error, message) }
  package static func warning(_ message: String) { write(.warning, message) }
  package static func notice(_ message: String) { write(.notice, message) }
  package static func info(_ message: String) { write(.info, message) }
  package static func debug(_ message: @autoclosure () -> String) {
    if threshold >= .debug { write(.debug, message()) }
  }

  /// `message` as one printable line: it may quote text from outside (an etcd member's error,
  /// a path), whose line break would forge a line of the log.
  static func write(_ level: Level, _ message: String) {
    guard level <= threshold else { return }
    let message = VisibleText.escape(message)
    let line: String
    if toJournal {
      line = "<\(level.rawValue)>\(message)\n"
    } else {
      let label =
        switch level {
        case .error: "error: "
        case .warning: "warning: "
        case .debug: "debug: "
        default: ""
        }
      line = "sectiond: \(label)\(message)\n"
    }
    try? FileDescriptor.standardError.writeAll(Array(line.utf8))
  }

  /// JOURNAL_STREAM is `device:inode` of the journal stream systemd connected to stderr.
  private static func stderrIsJournal() -> Bool {
    guard let stream = ProcessInfo.environment("JOURNAL_STREAM"),
      let identity = FileDescriptor.standardError.identity()
    else { return false }
    return stream == "\(identity.device):\(identity.inode)"
  }
}
