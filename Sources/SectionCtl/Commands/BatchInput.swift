import Posix
import SectionClient

/// The request lines of `sectionctl batch`, checked whole before a byte is sent. The daemon
/// takes the lines between BATCH and END as one change, all or none; but an END among them
/// would end the batch there, and the daemon would run every line after it as a request of its
/// own, one by one, each applied or refused alone. So a line that is END (or BATCH) is refused
/// here, as is input that is not UTF-8 (which would otherwise reach the daemon as U+FFFD).
enum BatchInput {
  /// The lines to send, CR before LF dropped. Blank lines are sent too: the daemon skips them
  /// but counts them, so the line numbers of its errors are those of the input. Errors here
  /// name the line the same way, counting from 1.
  static func lines(_ bytes: [UInt8]) throws(CommandLineError) -> [String] {
    var lines: [String] = []
    var raws = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    if raws.last?.isEmpty == true { raws.removeLast() }
    for (index, raw) in raws.enumerated() {
      let number = index + 1
      let bytes = raw.last == 0x0D ? raw.dropLast() : raw
      guard let line = String(validating: bytes, as: UTF8.self) else {
        throw .usage(
          "line \(number) of standard input is not valid UTF-8 (\(VisibleText.decode(bytes))); "
            + "nothing was sent: convert it, e.g. with iconv -f LATIN1 -t UTF-8")
      }
      if SendLine.opensBatch(line) || SendLine.closesBatch(line) {
        throw .usage(
          "line \(number) of standard input is '\(line)': sectionctl batch sends BATCH and END itself, "
            + "and a line that ends the batch early would make the lines after it run one by one; "
            + "nothing was sent")
      }
      if let protocolLine = protocolForm(ofCommand: line) {
        throw .usage(
          "line \(number) of standard input is '\(line)', a sectionctl command: batch takes the "
            + "daemon's request lines ('sectionctl send HELP' lists them), here '\(protocolLine)'; nothing was sent"
        )
      }
      lines.append(line)
    }
    return lines
  }

  /// The request line a sectionctl edit command stands for, when `line` is one that is not
  /// also a request (add, rm, mv, item add/rm/mv: the daemon would refuse them as unknown, or
  /// as an unknown ITEM action); nil for anything else.
  static func protocolForm(ofCommand line: String) -> String? {
    guard let words = try? ShellWords.split(line), let first = words.first,
      ["add", "rm", "mv"].contains(first)
        || (first == "item" && ["add", "rm", "mv"].contains(words.dropFirst().first)),
      case .edit(let edit)? = try? ArgumentParser.parse(words).command
    else { return nil }
    return edit.line
  }
}

extension CommandSpec {
  /// `sectionctl batch < REQUESTS`.
  static let batch = CommandSpec(
    usage: ["batch [--json] < REQUESTS"],
    summary: "apply the request lines on standard input as one change, all or none",
    details: """
      Reads request lines (as 'sectionctl send HELP' lists them: INSERT, DELETE, MOVE, RENAME,
      ITEM ..., OPEN, CLOSE, TOGGLE, MODE) from standard input and sends them between BATCH and
      END: the daemon checks them all, then applies them as one change, or none of them and says
      which line failed (blank lines count, as in the input). The input is checked whole first:
      a line that is END or BATCH, or that is not UTF-8, is refused (exit 2) and nothing is sent.
      \(SectionCtlText.editOutput)
      """,
    example: "sectionctl batch < edits.txt",
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .batch)
      return .batch
    },
    run: { (runner) throws(CommandLineError) in
      let lines = try BatchInput.lines(try runner.standardInput())
      try CommandLineError.lifting { () throws(ClientError) in
        runner.showRevision(try runner.connect().request(batch: lines).succeeded())
      }
      return .success
    })
}

extension Runner {
  /// Standard input, whole, for `batch`.
  fileprivate func standardInput() throws(CommandLineError) -> [UInt8] {
    do {
      return try FileDescriptor.standardInput.readAll(subject: "standard input")
    } catch {
      throw .usage("cannot read the requests from standard input: \(error)")
    }
  }
}
