import SectionGrammar

/// The words of a request as values, for a face that builds `Request`s from its own arguments
/// (D-Bus) rather than parsing a line: the same readings the parser makes of a line's words,
/// so that a value means on every face what it means in a request.
extension SectionRef {
  /// A section as a request's word names it: all digits is an index, anything else an id.
  public init(word: ArraySlice<UInt8>) { self = RequestParser.sectionRef(word) }

  /// Whether `word` is ALL (in any case): OPEN and CLOSE's every section, no id.
  public static func isAll(_ word: ArraySlice<UInt8>) -> Bool { asciiCaseInsensitiveEquals(word, "all") }
}

extension Position {
  /// `end` (in any case), or an index; nil for anything else.
  public init?(word: ArraySlice<UInt8>) {
    if asciiCaseInsensitiveEquals(word, "end") {
      self = .end
      return
    }
    guard let value = RequestParser.number(word) else { return nil }
    self = .at(value)
  }
}

extension Request {
  /// Why `bytes` cannot be part of a request (a NUL, a control character, not UTF-8), or nil.
  public static func characterProblem(_ bytes: ArraySlice<UInt8>) -> ProtocolError? {
    RequestParser.checkCharacters(bytes)
  }

  /// A title or an item's text as a request carries it, to the end of its line: without the
  /// spaces and tabs around it. Nil when nothing else is there.
  public static func text(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
    var words = Words(bytes)
    return words.rest()
  }

  /// `MODE <word>` (`MODE` alone without one), or the protocol's refusal of the word.
  public static func mode(_ word: ArraySlice<UInt8>?) -> Result<Request, ProtocolError> {
    var words = Words(word ?? [])
    return RequestParser.request(.mode, after: &words)
  }
}
