import Glibc

extension FileDescriptor {
  /// True when the descriptor is a terminal: decides whether output may carry colour and redraws.
  public var isTerminal: Bool { isatty(rawValue) == 1 }

  /// The terminal's size in character cells, from TIOCGWINSZ; nil when it does not say.
  public func windowSize() -> (rows: Int, columns: Int)? {
    var size = winsize()
    guard ioctl(rawValue, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 else { return nil }
    return (Int(size.ws_row), Int(size.ws_col))
  }

  /// Puts the terminal in raw mode (no echo, no line editing, no signals from keys, no output
  /// processing) and returns the settings it had, for `restoreTerminal` on every way out.
  public func makeRaw() throws -> TerminalSettings {
    var saved = termios()
    _ = try retrying("tcgetattr") { tcgetattr(rawValue, &saved) }
    var raw = saved
    cfmakeraw(&raw)
    _ = try retrying("tcsetattr") { tcsetattr(rawValue, TCSAFLUSH, &raw) }
    return TerminalSettings(saved: saved)
  }

  /// Gives the terminal back the settings `makeRaw` found. Failing here (the terminal hung up)
  /// leaves nothing to restore, so the error is not reported.
  public func restoreTerminal(_ settings: TerminalSettings) {
    var saved = settings.saved
    _ = tcsetattr(rawValue, TCSAFLUSH, &saved)
  }
}

/// A terminal's settings as they were before a full-screen program changed them.
public struct TerminalSettings: Sendable {
  fileprivate let saved: termios
}
