import SectionClient

/// What the runtime edits (`add`, `rm`, `mv`, `rename`, `item ...`) share: their arguments read
/// one by one, the help text they have in common, and how each is sent.
struct EditWords {
  let command: Subcommand
  private var words: ArraySlice<String>
  /// The command's synopsis, for the messages that say what it needs.
  private let usage: String

  init(_ command: Subcommand, _ arguments: [String]) {
    self.command = command
    words = arguments[...]
    usage = command.usage.map { "sectionctl \($0)" }.joined(separator: "; ")
  }

  /// The next word, which the command needs: it names `what`.
  mutating func next(_ what: String) throws(CommandLineError) -> String {
    guard let word = words.popFirst() else {
      throw .usage("\(command.rawValue) needs \(what): \(usage)")
    }
    return word
  }

  /// A section reference.
  mutating func ref() throws(CommandLineError) -> String {
    try ArgumentParser.reference(try next("a section (an index or an id)"))
  }

  /// An index or a position, 0 or more.
  mutating func number(_ what: String) throws(CommandLineError) -> Int {
    let word = try next(what)
    guard let value = Int(word), value >= 0 else {
      throw .usage("\(what) must be a number, 0 or more, not '\(word)'")
    }
    return value
  }

  /// The free text to the end: a title, an item's text, one line.
  mutating func rest(_ what: String) throws(CommandLineError) -> String {
    let text = words.joined(separator: " ")
    words = []
    guard !text.isEmpty else { throw .usage("\(command.rawValue) needs \(what): \(usage)") }
    guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
      throw .usage("the \(what) must be one line of text, without control characters")
    }
    return text
  }

  /// The command that sends `request`, once no word is left over (read every word before:
  /// this copy of the words is the one checked).
  func edit(_ request: Request<UInt64>) throws(CommandLineError) -> Command {
    if let extra = words.first { throw .usage("unexpected '\(extra)': \(usage)") }
    return .edit(Edit(request: request, command: command))
  }
}

/// Text shared by the help of several commands.
enum SectionCtlText {
  static let freeText = """
    Once the text has begun, every further word is the text's, '-2' and '-j' too: put
    options before it, and '--' before a text whose first word begins with '-'.
    """
  static let editOutput = """
    Needs the control socket, not --readonly. Prints the new revision ('revision 7'; with
    --json: {"revision"}).
    """
}

extension Runner {
  /// Sends an edit's request and prints its revision.
  func runEdit() throws(ClientError) -> ExitStatus {
    guard case .edit(let edit) = invocation.command else { preconditionFailure("an edit runs .edit") }
    showRevision(try connect().perform(edit.request.asReply).succeeded())
    return .success
  }
}
