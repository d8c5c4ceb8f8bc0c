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
    let row = row
    var arguments = EditArguments(words: words, usage: row.usage, form: row.forms[0])
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
        request = try itemRequest(&arguments, row.forms)
      }
      try arguments.finish()
      return .success(request)
    } catch {
      return .failure(error)
    }
  }

  /// ITEM's forms each begin with their action, and go on with the section: both are read
  /// before the action picks the form.
  private func itemRequest(_ arguments: inout EditArguments, _ forms: [Form]) throws(ProtocolError) -> Request
  {
    let actions = forms.map { $0.arguments[0].usage }
    let action = try arguments.word(
      "action (\(actions.dropLast().joined(separator: ", ")) or \(actions.last!))")
    arguments.choose(forms[0], from: 1)  // every form goes on with the section
    let ref = try arguments.section()
    let upper = action.lazy.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }
    guard let chosen = actions.firstIndex(where: { $0.utf8.elementsEqual(upper) }) else {
      throw ProtocolError(
        .syntax,
        "unknown ITEM action \"\(String(decoding: action, as: UTF8.self))\": usage: \(arguments.usage)")
    }
    arguments.choose(forms[chosen], from: 2)
    switch chosen {
    case 0: return .itemInsert(ref, try arguments.position(), text: try arguments.text())
    case 1: return .itemDelete(ref, try arguments.number())
    case 2: return .itemMove(ref, from: try arguments.number(), to: try arguments.number())
    default: return .itemSet(ref, try arguments.number(), text: try arguments.text())
    }
  }
}

/// The words of an edit request, taken one by one; each missing or malformed one is an
/// `ERR SYNTAX` that names it and repeats the usage.
struct EditArguments {
  var words: Words
  let usage: String
  /// The form's arguments, and the next one to read.
  private var form: [Argument]
  private var next: Int

  init(words: Words, usage: String, form: Form) {
    self.words = words
    self.usage = usage
    self.form = form.arguments
    next = 0
  }

  /// Reads the rest as `form`'s arguments from the one at `index` on.
  mutating func choose(_ form: Form, from index: Int) {
    self.form = form.arguments
    next = index
  }

  /// What the next argument is called in a refusal; the form's order is the reading's.
  private mutating func take() -> String {
    defer { next += 1 }
    return form[next].what
  }

  mutating func word() throws(ProtocolError) -> ArraySlice<UInt8> { try word(take()) }

  mutating func word(_ what: String) throws(ProtocolError) -> ArraySlice<UInt8> {
    guard let word = words.next() else { throw ProtocolError(.syntax, "missing \(what): usage: \(usage)") }
    return word
  }

  mutating func section() throws(ProtocolError) -> SectionRef {
    RequestParser.sectionRef(try word())
  }

  mutating func number() throws(ProtocolError) -> Int {
    let what = take()
    let word = try word(what)
    guard let value = RequestParser.number(word) else {
      throw ProtocolError(
        .syntax, "\(what) \"\(String(decoding: word, as: UTF8.self))\" is not a number: usage: \(usage)")
    }
    return value
  }

  /// A number or `end`.
  mutating func position() throws(ProtocolError) -> Position {
    let what = take()
    let word = try word(what)
    if asciiCaseInsensitiveEquals(word, "end") { return .end }
    guard let value = RequestParser.number(word) else {
      throw ProtocolError(
        .syntax,
        "\(what) \"\(String(decoding: word, as: UTF8.self))\" is not a number or end: usage: \(usage)")
    }
    return .at(value)
  }

  mutating func text() throws(ProtocolError) -> ArraySlice<UInt8> {
    let what = take()
    guard let text = words.rest() else { throw ProtocolError(.syntax, "missing \(what): usage: \(usage)") }
    return text
  }

  mutating func finish() throws(ProtocolError) {
    if let extra = words.next() {
      throw ProtocolError(
        .syntax, "unexpected \"\(String(decoding: extra, as: UTF8.self))\": usage: \(usage)")
    }
  }
}
