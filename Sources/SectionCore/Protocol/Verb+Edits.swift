/// Parsing of the runtime edits, whose arguments are several words and a text to the line's end.
extension Verb {
  var isEdit: Bool {
    switch self {
    case .insert, .delete, .move, .rename, .item: true
    default: false
    }
  }

  /// Builds an edit request from the words after the verb, or says what is wrong with them.
  func editRequest(_ words: inout Words) -> Result<Request, ProtocolError> {
    var arguments = EditArguments(words: words, usage: usage)
    defer { words = arguments.words }
    do {
      switch self {
      case .insert:
        let position = try arguments.position("index")
        let id = try arguments.word("id")
        return .success(.insert(position, id: id, title: try arguments.text("title")))
      case .delete:
        let ref = try arguments.section()
        try arguments.finish()
        return .success(.delete(ref))
      case .move:
        let ref = try arguments.section()
        let to = try arguments.number("index")
        try arguments.finish()
        return .success(.move(ref, to: to))
      case .rename:
        let ref = try arguments.section()
        return .success(.rename(ref, title: try arguments.text("title")))
      default:
        return .success(try itemRequest(&arguments))
      }
    } catch {
      return .failure(error)
    }
  }

  private func itemRequest(_ arguments: inout EditArguments) throws(ProtocolError) -> Request {
    let action = try arguments.word("action (INSERT, DELETE, MOVE or SET)")
    let ref = try arguments.section()
    if asciiCaseInsensitiveEquals(action, "insert") {
      let position = try arguments.position("position")
      return .itemInsert(ref, position, text: try arguments.text("text"))
    }
    if asciiCaseInsensitiveEquals(action, "delete") {
      let position = try arguments.number("position")
      try arguments.finish()
      return .itemDelete(ref, position)
    }
    if asciiCaseInsensitiveEquals(action, "move") {
      let from = try arguments.number("position")
      let to = try arguments.number("position")
      try arguments.finish()
      return .itemMove(ref, from: from, to: to)
    }
    if asciiCaseInsensitiveEquals(action, "set") {
      let position = try arguments.number("position")
      return .itemSet(ref, position, text: try arguments.text("text"))
    }
    throw ProtocolError(
      .syntax, "unknown ITEM action \"\(String(decoding: action, as: UTF8.self))\": usage: \(usage)")
  }
}

/// The words of an edit request, taken one by one; each missing or malformed one is an
/// `ERR SYNTAX` that names it and repeats the usage.
struct EditArguments {
  var words: Words
  let usage: String

  mutating func word(_ what: String) throws(ProtocolError) -> ArraySlice<UInt8> {
    guard let word = words.next() else { throw ProtocolError(.syntax, "missing \(what): usage: \(usage)") }
    return word
  }

  mutating func section() throws(ProtocolError) -> SectionRef {
    RequestParser.sectionRef(try word("section"))
  }

  mutating func number(_ what: String) throws(ProtocolError) -> Int {
    let word = try word(what)
    guard let value = RequestParser.number(word) else {
      throw ProtocolError(
        .syntax, "\(what) \"\(String(decoding: word, as: UTF8.self))\" is not a number: usage: \(usage)")
    }
    return value
  }

  /// A number or `end`.
  mutating func position(_ what: String) throws(ProtocolError) -> Position {
    let word = try word(what)
    if asciiCaseInsensitiveEquals(word, "end") { return .end }
    guard let value = RequestParser.number(word) else {
      throw ProtocolError(
        .syntax,
        "\(what) \"\(String(decoding: word, as: UTF8.self))\" is not a number or end: usage: \(usage)")
    }
    return .at(value)
  }

  mutating func text(_ what: String) throws(ProtocolError) -> ArraySlice<UInt8> {
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
