import Posix
import SectionClient

/// The terminal as the ui borrows it: raw input, the alternate screen, no visible cursor, mouse
/// reports; `end()` gives it back as it was, on every way out (a key, a signal, an error).
final class TerminalSession {
  /// Alternate screen, cursor hidden, mouse buttons and wheel reported (1000) in SGR form
  /// (1006), and no automatic wrap (DECAWM off, 7): text that the terminal finds wider than
  /// the row, whatever its width tables say, stops at the right edge instead of running into
  /// the next row.
  static let enterSequence = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1006h\u{1B}[?7l"
  /// The reverse, in the reverse order.
  static let leaveSequence = "\u{1B}[?7h\u{1B}[?1006l\u{1B}[?1000l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"

  let input = FileDescriptor.standardInput
  let output = FileDescriptor.standardOutput
  private var saved: TerminalSettings?

  /// Takes the terminal over. Fails, changing nothing, when it cannot be put in raw mode.
  init() throws(CommandLineError) {
    do {
      saved = try input.makeRaw()
    } catch {
      throw .terminal(
        "cannot put the terminal in raw mode (\(error)); use 'sectionctl view' or 'sectionctl watch'")
    }
    write(TerminalSession.enterSequence)
  }

  deinit { end() }

  /// Gives the terminal back: normal screen, visible cursor, no mouse reports, the old settings. Safe to call twice.
  func end() {
    guard let saved else { return }
    write(TerminalSession.leaveSequence)
    input.restoreTerminal(saved)
    self.saved = nil
  }

  /// Writes all of `text`; false when the terminal is gone (hung up), which ends the ui.
  @discardableResult
  func write(_ text: String) -> Bool {
    guard !text.isEmpty else { return true }
    return (try? output.writeAll(Array(text.utf8), subject: "the terminal")) != nil
  }

  /// The size in cells; 24x80 when the terminal does not say.
  var size: (rows: Int, columns: Int) { output.windowSize() ?? input.windowSize() ?? (24, 80) }
}
