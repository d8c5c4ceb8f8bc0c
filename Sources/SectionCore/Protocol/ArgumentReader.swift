import SectionGrammar
import SectionShared

/// Reads the words after a verb as the verb's row of the grammar has them (`ParseTable`):
/// which of its forms the words are, then each argument by its kind, then nothing more. What
/// it reads, `Request.init(_:form:_:in:)` makes into the request; what it refuses, its
/// refusal names from the row (`SyntaxRefusal`).
enum ArgumentReader {
  /// The form the rest of `words` is, and where its arguments are; or the refusal of them.
  /// Inlined into the parser, which it serves for every request (callgrind: 124 instructions
  /// a TOGGLE fewer than as a call, whose result was copied out and into the request).
  @inline(__always)
  static func read(_ verb: Verb, _ words: inout Words) throws(ProtocolError) -> (form: Int, ReadArguments) {
    var next = words.nextRange()
    var form = 0
    var shape = ParseTable.shape(verb, form: 0)
    if shape.forms > 1 {
      form = try choose(verb, first: next.map { words.line[$0] })
      shape = ParseTable.shape(verb, form: form)
    }
    var arguments = ReadArguments()
    var position = 0
    while position < shape.count {
      let slot = shape[position]
      guard let word = next else { throw refusal(verb, .missing, form: form, at: position) }
      if slot == .text {
        arguments[position] = words.rest(from: word.lowerBound)
      } else {
        if slot != .word, !fits(words.line[word], slot, verb, form: form, at: position) {
          throw refusal(verb, .malformed(words.line[word]), form: form, at: position)
        }
        arguments[position] = word
      }
      position &+= 1
      next = words.nextRange()
    }
    if let extra = next { throw refusal(verb, .unexpected(words.line[extra]), form: form, at: position) }
    return (form, arguments)
  }

  /// The form whose first argument the first word can be: a keyword's form by its keyword,
  /// else the first form that takes something other than a keyword; with no first word, the
  /// form that takes nothing.
  private static func choose(_ verb: Verb, first: ArraySlice<UInt8>?) throws(ProtocolError) -> Int {
    let forms = 0..<ParseTable.shape(verb, form: 0).forms
    guard let first else {
      if let empty = forms.first(where: { ParseTable.shape(verb, form: $0).count == 0 }) { return empty }
      throw refusal(verb, .missing, form: 0, at: 0)
    }
    let named = forms.first { form in
      let shape = ParseTable.shape(verb, form: form)
      return shape.count > 0 && shape[0] == .keyword && fits(first, .keyword, verb, form: form, at: 0)
    }
    if let named { return named }
    let unnamed = forms.first {
      ParseTable.shape(verb, form: $0).count > 0 && ParseTable.shape(verb, form: $0)[0] != .keyword
    }
    guard let unnamed else { throw refusal(verb, .noForm(first), form: 0, at: 0) }
    return unnamed
  }

  /// Whether `word` is an argument of kind `slot`, the one at `position` of the form.
  private static func fits(
    _ word: ArraySlice<UInt8>, _ slot: ParseTable.Slot, _ verb: Verb, form: Int, at position: Int
  )
    -> Bool
  {
    switch slot {
    case .word, .text: true
    case .keyword: asciiCaseInsensitiveEquals(word, uppercase: ParseTable.keyword(verb, form: form, position))
    case .mode: Mode(bytes: word) != nil
    case .count, .number: RequestParser.number(word) != nil
    case .numberOrEnd: Position(word: word) != nil
    case .revision: RequestParser.revision(word) != nil
    case .clientName: ClientName.isValid(word)
    }
  }

  private static func refusal(_ verb: Verb, _ problem: SyntaxRefusal.Problem, form: Int, at position: Int)
    -> ProtocolError
  {
    SyntaxRefusal(verb: verb, form: form, position: position, problem: problem).error
  }
}

/// Where each argument of a request's form is in its line: ranges, a plain value, so that
/// reading a request retains nothing per argument. The request reads each as it needs.
struct ReadArguments {
  private var first = 0..<0
  private var second = 0..<0
  private var third = 0..<0
  private var fourth = 0..<0

  /// Where the argument at `position` is.
  subscript(position: Int) -> Range<Int> {
    get {
      switch position {
      case 0: first
      case 1: second
      case 2: third
      default: fourth
      }
    }
    set {
      switch position {
      case 0: first = newValue
      case 1: second = newValue
      case 2: third = newValue
      default: fourth = newValue
      }
    }
  }
}
