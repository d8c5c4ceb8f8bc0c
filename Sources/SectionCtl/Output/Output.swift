import Posix
import SectionClient

/// Standard output and standard error, written unbuffered so that `watch` lines reach a pipe at once.
struct Output: Sendable {
  /// --json: errors too are JSON, one object on standard error.
  var json = false

  /// Writes to standard output. When the reader has gone (`sectionctl watch | head -1`) the process
  /// ends quietly with status 0, as it would by SIGPIPE had the parent not ignored it; any other
  /// failure (a full disk) is reported and ends it with status 1, so a script never trusts a cut-off result.
  func print(_ text: String) {
    do {
      try FileDescriptor.standardOutput.writeAll(Array(text.utf8), subject: "standard output")
    } catch let error as PosixError where error.errno == .brokenPipe {
      ProcessInfo.exit(ExitStatus.success.rawValue)
    } catch {
      diagnose("cannot write the output: \(error)")
      ProcessInfo.exit(ExitStatus.daemonError.rawValue)
    }
  }

  /// One JSON document on one line, C1, bidi and invisible characters escaped too.
  func print(_ json: JSON) {
    print(VisibleText.escape(json: json.serialized()) + "\n")
  }

  /// An error as the output was asked for: a diagnostic line, or with --json one object
  /// `{"error": CODE, "message": TEXT, "exit": STATUS}` on standard error, so that a script
  /// reading JSON reads its failures the same way.
  func report(_ error: CommandLineError) {
    guard json else { return diagnose(error.diagnostic) }
    let object = JSON.object([
      ("error", .string(error.code)), ("message", .string(error.diagnostic)),
      ("exit", .integer(Int64(error.exitStatus.rawValue))),
    ])
    let text = VisibleText.escape(json: object.serialized()) + "\n"
    try? FileDescriptor.standardError.writeAll(Array(text.utf8), subject: "stderr")
  }

  /// A diagnostic on standard error, prefixed with the program's name. Messages quote what the
  /// daemon said (ERR texts, lines it cannot read), so every line of it is escaped here.
  func diagnose(_ message: String) {
    let text = "sectionctl: \(VisibleText.escapeLines(message))\n"
    try? FileDescriptor.standardError.writeAll(Array(text.utf8), subject: "stderr")
  }
}
