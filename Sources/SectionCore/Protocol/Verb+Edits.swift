import SectionGrammar

/// Parsing of the runtime edits, whose arguments are several words and a text to the line's end.
extension Verb {
  var isEdit: Bool {
    switch self {
    case .insert, .delete, .move, .rename, .item: true
    default: false
    }
  }

  /// Builds an edit request from the words after the verb, or says what is wrong with them:
  /// the words are read as the verb's form in the grammar (`Verb.row`) has them.
  func editRequest(_ words: inout Words) -> Result<Request, ProtocolError> {
    var arguments = EditArguments(words: words, verb: self)
    defer { words = arguments.words }
    do {
      let request: Request
      switch self {
      case .insert:
        request = .insert(try arguments.position(), id: try arguments.word(), title: try arguments.text())
      case .delete:
        request = .delete(try arguments.section())
      case .move:
        request = .move(try arguments.section(), to: try arguments.number())
      case .rename:
        request = .rename(try arguments.section(), title: try arguments.text())
      default:
        request = try itemRequest(&arguments)
      }
      try arguments.finish()
      return .success(request)
    } catch {
      return .failure(error)
    }
  }

  /// ITEM's forms each begin with their action, and go on with the section: both are read
  /// before the action picks the form.
  private func itemRequest(_ arguments: inout EditArguments) throws(ProtocolError) -> Request {
    let forms = Grammar.rows[index].forms
    let action = try arguments.word {
      let actions = forms.map { $0.arguments[0].usage }
      return "action (\(actions.dropLast().joined(separator: ", ")) or \(actions.last!))"
    }
    arguments.choose(form: 0, from: 1)  // every form goes on with the section
    let ref = try arguments.section()
    guard
      let chosen = forms.firstIndex(where: {
        asciiCaseInsensitiveEquals(action, uppercase: $0.arguments[0].usage)
      })
    else {
      throw ProtocolError(
        .syntax,
        "unknown ITEM action \"\(String(decoding: action, as: UTF8.self))\": usage: \(arguments.usage)")
    }
    arguments.choose(form: chosen, from: 2)
    switch chosen {
    case 0: return .itemInsert(ref, try arguments.position(), text: try arguments.text())
    case 1: return .itemDelete(ref, try arguments.number())
    case 2: return .itemMove(ref, from: try arguments.number(), to: try arguments.number())
    default: return .itemSet(ref, try arguments.number(), text: try arguments.text())
    }
  }
}

/// The words of an edit request, taken one by one; each missing or malformed one is an
/// `ERR SYNTAX` that names it and repeats the usage. The names and the usage come from the
/// verb's row only for a refusal: an edit that parses pays nothing for them.
struct EditArguments {
  var words: Words
  let verb: Verb
  /// The verb's form being read, and the position in it of the next argument.
  private var form = 0
  private var next = 0

  init(words: Words, verb: Verb) {
    self.words = words
    self.verb = verb
  }

  var usage: String { verb.usage }

  /// Reads the rest as the verb's form `form`, from its argument at `index` on.
  mutating func choose(form: Int, from index: Int) {
    self.form = form
    next = index
  }

  /// What the argument at `position` of the form is called in a refusal.
  private func name(_ position: Int) -> String { verb.row.forms[form].arguments[position].what }

  /// The position of the next argument, which is then read.
  private mutating func take() -> Int {
    defer { next += 1 }
    return next
  }

  mutating func word() throws(ProtocolError) -> ArraySlice<UInt8> { try word(at: take()) }

  /// The next word, the form's argument at `position`.
  private mutating func word(at position: Int) throws(ProtocolError) -> ArraySlice<UInt8> {
    guard let word = words.next() else {
      throw ProtocolError(.syntax, "missing \(name(position)): usage: \(usage)")
    }
    return word
  }

  /// The next word, called `what` in a refusal.
  mutating func word(_ what: () -> String) throws(ProtocolError) -> ArraySlice<UInt8> {
    guard let word = words.next() else { throw ProtocolError(.syntax, "missing \(what()): usage: \(usage)") }
    return word
  }

  mutating func section() throws(ProtocolError) -> SectionRef {
    RequestParser.sectionRef(try word())
  }

  mutating func number() throws(ProtocolError) -> Int {
    let position = take()
    let word = try word(at: position)
    guard let value = RequestParser.number(word) else {
      throw ProtocolError(
        .syntax,
        "\(name(position)) \"\(String(decoding: word, as: UTF8.self))\" is not a number: usage: \(usage)")
    }
    return value
  }

  /// A number or `end`.
  mutating func position() throws(ProtocolError) -> Position {
    let position = take()
    let word = try word(at: position)
    if asciiCaseInsensitiveEquals(word, "end") { return .end }
    guard let value = RequestParser.number(word) else {
      throw ProtocolError(
        .syntax,
        "\(name(position)) \"\(String(decoding: word, as: UTF8.self))\" is not a number or end: usage: \(usage)"
      )
    }
    return .at(value)
  }

  mutating func text() throws(ProtocolError) -> ArraySlice<UInt8> {
    let position = take()
    guard let text = words.rest() else {
      throw ProtocolError(.syntax, "missing \(name(position)): usage: \(usage)")
    }
    return text
  }

  mutating func finish() throws(ProtocolError) {
    if let extra = words.next() {
      throw ProtocolError(
        .syntax, "unexpected \"\(String(decoding: extra, as: UTF8.self))\": usage: \(usage)")
    }
  }
}
