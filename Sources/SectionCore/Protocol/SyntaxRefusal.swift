import SectionGrammar
import SectionShared

/// Why a request's words do not fit its verb's row, in the words the row gives (`Row.usage`,
/// `Argument.what`): made only for a refusal, so a request that parses pays nothing for them.
struct SyntaxRefusal {
  enum Problem {
    /// The argument at the position is not there.
    case missing
    /// The word at the position is not of the argument's kind.
    case malformed(ArraySlice<UInt8>)
    /// A word after the form's last argument.
    case unexpected(ArraySlice<UInt8>)
    /// The first word begins none of the verb's forms.
    case noForm(ArraySlice<UInt8>)
  }

  let verb: Verb
  let form: Int
  let position: Int
  let problem: Problem

  var error: ProtocolError { ProtocolError(.syntax, message) }

  private var row: Row { verb.row }
  private var usage: String { "usage: \(row.usage)" }
  private var argument: Argument { row.forms[form].arguments[position] }

  var message: String {
    switch problem {
    case .missing: missing
    case .malformed(let word): malformed(word)
    case .unexpected(let word): unexpected(quoted(word))
    case .noForm(let word): noForm(quoted(word))
    }
  }

  /// An edit names what is missing (`missing title`); another request says what needs it,
  /// the verb and any keyword before it (`TOGGLE needs a section`, `SUBSCRIBE FROM needs a
  /// revision`). Where each form begins with its own keyword, the keyword is the action.
  private var missing: String {
    if case .keyword = argument, row.forms.count > 1 {
      let actions = row.forms.map { $0.arguments[0].usage }
      return "missing action (\(actions.dropLast().joined(separator: ", ")) or \(actions.last!)): \(usage)"
    }
    if row.forms[form].level == .edit { return "missing \(argument.what): \(usage)" }
    let before = row.forms[form].arguments[..<position].compactMap { argument -> String? in
      if case .keyword(let word) = argument { word } else { nil }
    }
    let subject = ([verb.name] + before).joined(separator: " ")
    if case .keyword(let word) = argument { return "\(subject) needs \(word): \(usage)" }
    return "\(subject) needs a \(argument.what): \(usage)"
  }

  private func malformed(_ bytes: ArraySlice<UInt8>) -> String {
    let word = quoted(bytes)
    switch argument {
    case .mode:
      let modes = Mode.allCases.map(\.rawValue).sorted()
      return "unknown mode \(word): use \(modes.dropLast().joined(separator: ", ")) or \(modes.last!)"
    case .index, .position: return "\(argument.what) \(word) is not a number: \(usage)"
    case .indexOrEnd, .positionOrEnd: return "\(argument.what) \(word) is not a number or end: \(usage)"
    case .revision where RequestParser.number(bytes) != nil:
      return
        "revision \(String(decoding: bytes, as: UTF8.self)) is out of range (at most \(UInt64.max)): \(usage)"
    case .revision: return missing
    case .clientName: return "\(ClientName.rule): \(usage)"
    default: return unexpected(word)
    }
  }

  /// A word too many: a verb that takes nothing says so.
  private func unexpected(_ word: String) -> String {
    if row.forms.allSatisfy(\.arguments.isEmpty) {
      return "unexpected \(word): \(verb.name) takes no arguments"
    }
    return "unexpected \(word): \(usage)"
  }

  /// A first word no form begins with: a verb whose forms are each nothing or a keyword names
  /// them (`RELOAD takes FRESH or nothing`); one whose forms each begin with their own keyword
  /// calls the word an unknown action.
  private func noForm(_ word: String) -> String {
    let forms = row.forms.map(\.arguments)
    let keywords = forms.compactMap { arguments -> String? in
      if arguments.count == 1, case .keyword(let keyword) = arguments[0] { keyword } else { nil }
    }
    if forms.contains(where: \.isEmpty), keywords.count == forms.count - 1, !keywords.isEmpty {
      return "unexpected \(word): \(verb.name) takes \(keywords.joined(separator: ", ")) or nothing"
    }
    let actions = forms.allSatisfy { if case .keyword? = $0.first { true } else { false } }
    if actions, forms.count > 1 { return "unknown \(verb.name) action \(word): \(usage)" }
    return unexpected(word)
  }

  private func quoted(_ word: ArraySlice<UInt8>) -> String { "\"\(String(decoding: word, as: UTF8.self))\"" }
}
