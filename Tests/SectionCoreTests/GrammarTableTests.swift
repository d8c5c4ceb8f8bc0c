import SectionGrammar
import Testing

@testable import SectionCore

/// The daemon's parser, HELP and replies against the grammar's table (`Grammar.rows`): what a
/// row says of a verb is what the daemon does.
@Suite struct GrammarTableTests {
  func parse(_ line: String) -> Result<Request, ProtocolError>? { RequestParser.parse(bytes(line)) }

  /// Every form of every row, as its example line.
  static let forms: [(Row, Form)] = Grammar.rows.flatMap { row in row.forms.map { (row, $0) } }

  @Test func theRowsAreTheVerbsInOrder() {
    #expect(Grammar.rows.map(\.verb) == Verb.allCases)
  }

  /// Each form's example parses, in upper and lower case, as a request of that verb and form.
  @Test func everyFormParsesAsItself() throws {
    for (row, form) in Self.forms {
      let line = form.example(of: row.verb)
      for spelled in [line, line.lowercased()] {
        let request = try #require(try parse(spelled)?.get(), "\(spelled)")
        #expect(request.verb == row.verb, "\(spelled)")
        #expect(
          request.form == form || (row.verb == .history && request.form.hasTheFactsOf(form)), "\(spelled)")
      }
    }
  }

  /// A word more than a form takes is refused, unless its last argument is a text, which
  /// takes the rest of the line.
  @Test func aWordTooManyIsRefused() {
    for (row, form) in Self.forms {
      if case .text? = form.arguments.last { continue }
      let line = form.example(of: row.verb) + " extra"
      guard case .failure(let error)? = parse(line) else {
        Issue.record("\(line) was accepted")
        continue
      }
      #expect(error.code == .syntax, "\(line)")
      #expect(String(decoding: error.line, as: UTF8.self).contains("\"extra\""), "\(line)")
    }
  }

  /// A form without its last argument is refused, unless that is another form of the verb.
  @Test func aMissingWordIsRefused() {
    for (row, form) in Self.forms where !form.arguments.isEmpty {
      let shorter = Array(form.arguments.dropLast())
      let line = ([row.verb.name] + shorter.map(\.example)).joined(separator: " ")
      let result = parse(line)
      if row.forms.contains(where: { $0.arguments == shorter }) {
        #expect(result.map { (try? $0.get()) != nil } == true, "\(line)")
      } else {
        guard case .failure(let error)? = result else {
          Issue.record("\(line) was accepted")
          continue
        }
        #expect(error.code == .syntax, "\(line)")
      }
    }
  }

  /// An argument of the wrong kind is refused where the form wants a number, a position, a
  /// revision, a mode, a name or a keyword.
  @Test func aWordOfTheWrongKindIsRefused() {
    for (row, form) in Self.forms {
      for (index, argument) in form.arguments.enumerated() {
        let wrong: String
        switch argument {
        case .index, .position, .indexOrEnd, .positionOrEnd, .count, .revision, .mode: wrong = "x"
        case .keyword: wrong = "NOPE"
        case .clientName: wrong = "a/b"
        case .section, .sectionOrAll, .id, .text: continue
        }
        var words = form.arguments.map(\.example)
        words[index] = wrong
        let line = ([row.verb.name] + words).joined(separator: " ")
        guard case .failure(let error)? = parse(line) else {
          Issue.record("\(line) was accepted")
          continue
        }
        #expect(error.code == .syntax, "\(line)")
      }
    }
  }

  /// HELP has a line for every row, in the table's order, with its usage and summary.
  @Test func helpListsEveryRow() {
    let lines = Harness().reply("HELP").split(separator: "\n").map(String.init)
    #expect(lines.last == "OK")
    #expect(lines.dropLast() == Grammar.rows.map { "help \($0.usage) - \($0.summary)" }[...])
  }

  /// The data lines a keyword of a reply shape begins with.
  func keywords(_ data: ReplyData) -> Set<String> {
    switch data {
    case .none: []
    case .version: ["version"]
    case .sections, .changedSection: ["section"]
    case .sectionsWithItems: ["section", "item"]
    case .items: ["item"]
    case .mode: ["mode"]
    case .state: ["state"]
    case .history: ["history"]
    case .facts: ["status"]
    case .help: ["help"]
    }
  }

  /// Each form's example, sent to a daemon at the edit level, is answered as its row's reply
  /// shape says: data lines of those keywords only, and `OK <rev>` or plain `OK`.
  @Test func everyFormIsAnsweredInItsShape() {
    // RELOAD's reply waits for the config file, which the server reads.
    for (row, form) in Self.forms where row.verb != .reload {
      let harness = Harness()
      let line = form.example(of: row.verb)
      // BATCH's reply comes at END, and END alone ends no batch.
      let lines = row.verb == .batch || row.verb == .end ? ["BATCH", "END"] : [line]
      var reply = ""
      for sent in lines { reply = harness.reply(sent) }
      var replyLines = reply.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      #expect(replyLines.popLast() == "", "\(line): \(reply)")
      let status = replyLines.popLast() ?? ""
      if form.reply.revision {
        #expect(status.hasPrefix("OK ") && UInt64(status.dropFirst(3)) != nil, "\(line): \(reply)")
      } else {
        #expect(status == "OK", "\(line): \(reply)")
      }
      let seen = Set(replyLines.map { String($0.prefix { $0 != " " }) })
      #expect(seen.isSubset(of: keywords(form.reply.data)), "\(line): \(reply)")
      if [.version, .sections, .sectionsWithItems, .items, .mode, .facts, .help].contains(form.reply.data) {
        #expect(!replyLines.isEmpty, "\(line): \(reply)")
      }
    }
  }
}

extension Form {
  /// Whether the form needs, answers and waits as `other` does: `HISTORY` and `HISTORY <n>`
  /// are one request (the count the daemon's default), of either form.
  func hasTheFactsOf(_ other: Form) -> Bool {
    level == other.level && inBatch == other.inBatch && readsState == other.readsState && reply == other.reply
  }
}
