import Posix

/// Client errors (ERR replies, peers gone before their replies were read), logged one line
/// each at debug level (the server keeps one only with `--verbose`), and at most `perSecond`
/// a second: a client sending garbage as fast as it can must not flood the journal. Requests
/// refused as above their client's level are logged the same way at notice level, always, as
/// an administrator wants to see who tried what (`Server.denials`).
struct ClientErrorLog {
  static let perSecond = 10

  /// What is logged, and as what its suppressed lines are counted.
  let level: Log.Level
  let kind: String
  private var second: UInt64 = 0
  private var logged = 0
  private var suppressed = 0

  init(level: Log.Level = .debug, kind: String = "client errors") {
    self.level = level
    self.kind = kind
  }

  /// Logs the `ERR` line that `tail[start...]` begins with, if it begins with one.
  mutating func noteReply(_ tail: [UInt8], from start: Int) {
    guard Log.threshold >= .debug, start < tail.count, tail[start...].starts(with: "ERR ".utf8) else {
      return
    }
    let end = tail[start...].firstIndex(of: 0x0A) ?? tail.count
    note("answered a client \(String(decoding: tail[start..<end], as: UTF8.self))")
  }

  mutating func note(_ message: @autoclosure () -> String) {
    let now = monotonicMicroseconds() / 1_000_000
    if now != second {
      if suppressed > 0 { Log.write(level, "\(suppressed) more \(kind) in the last second, not logged") }
      second = now
      logged = 0
      suppressed = 0
    }
    guard logged < ClientErrorLog.perSecond else {
      suppressed += 1
      return
    }
    logged += 1
    Log.write(level, message())
  }
}
