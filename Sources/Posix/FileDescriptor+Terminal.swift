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

extension FileDescriptor {
  /// Makes this process a process group of its own and the terminal's foreground group, when
  /// it was started in its parent's group (by `sh -c`, a script): a key's signal (Ctrl-C) then
  /// reaches this process only, not the parent, which a SIGINT would end. Returns the group
  /// to give the terminal back to (`giveForeground`); nil when nothing changed (a shell with
  /// job control started it in a group of its own already, or this is no terminal). Ctrl-Z is
  /// then ignored: no job control above would ever continue a group it does not know.
  public func takeForeground() -> pid_t? {
    let previous = tcgetpgrp(rawValue)
    guard previous > 0, previous == getpgrp(), getpgrp() != getpid() else { return nil }
    // tcsetpgrp from a group that is not yet the foreground one raises SIGTTOU unless ignored.
    let ttou = signal(SIGTTOU, SIG_IGN)
    defer { signal(SIGTTOU, ttou) }
    guard setpgid(0, 0) == 0 else { return nil }
    guard tcsetpgrp(rawValue, getpid()) == 0 else {
      _ = setpgid(0, previous)
      return nil
    }
    signal(SIGTSTP, SIG_IGN)
    return previous
  }

  /// Gives the terminal back to `group`, the one `takeForeground` took it from.
  public func giveForeground(_ group: pid_t) {
    let ttou = signal(SIGTTOU, SIG_IGN)
    _ = tcsetpgrp(rawValue, group)
    signal(SIGTTOU, ttou)
  }
}

/// A terminal's settings as they were before a full-screen program changed them.
public struct TerminalSettings: Sendable {
  fileprivate let saved: termios
}
