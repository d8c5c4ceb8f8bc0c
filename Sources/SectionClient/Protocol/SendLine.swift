import SectionGrammar
import SectionShared

/// What sectionctl needs to know of a raw protocol line, one a person typed (`send`, `batch`,
/// the shell) or one the daemon sent to a relay (`pipe`): the protocol's words in the library,
/// beside the requests (`Request`), rather than in the command line.
package enum SendLine {
  /// The line's first word, upper-cased as the daemon compares verbs; "" for a blank line.
  package static func verb(_ line: String) -> String {
    line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map { $0.uppercased() } ?? ""
  }

  /// `BATCH`: the lines up to `END` get one reply, after it.
  package static func opensBatch(_ line: String) -> Bool { verb(line) == Verb.batch.name }
  /// `END`: the reply to the lines since `BATCH` comes.
  package static func closesBatch(_ line: String) -> Bool { verb(line) == Verb.end.name }
  /// A verb whose reply the daemon follows by closing the connection (`ReplyShape.after`): QUIT.
  package static func quits(_ line: String) -> Bool {
    Verb(ArraySlice(verb(line).utf8))?.row.forms.contains { $0.reply.after == .close } ?? false
  }

  /// The name a `CLIENT NAME <name>` line gives the connection, when the daemon would take it
  /// (`ClientName.isValid`); nil for any other line.
  package static func clientName(in line: String) -> String? {
    let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
    guard words.count == 3, words[0].uppercased() == "CLIENT", words[1].uppercased() == "NAME",
      ClientName.isValid(String(words[2]))
    else { return nil }
    return String(words[2])
  }

  /// Whether the status line `line` (`ProtocolLine.isStatus`) is an `ERR`.
  package static func isError(_ line: String) -> Bool { line.hasPrefix("ERR ") }

  /// Whether what the daemon sent first begins with `ERR BUSY`: it will not serve the
  /// connection (`--max-clients`), and closes it.
  package static func isBusy(_ bytes: some Collection<UInt8>) -> Bool { bytes.starts(with: "ERR BUSY".utf8) }

  /// What a request's argument at `position` (0 the first after the verb) names, for a shell
  /// that offers words, as the verb's row of the grammar says (`Row.offers`): nil for an
  /// unknown verb, or where nothing can be offered (a title, a position).
  package static func argument(of verb: String, at position: Int) -> Row.Offer? {
    Verb(ArraySlice(verb.utf8))?.row.offers(at: position)
  }
}
