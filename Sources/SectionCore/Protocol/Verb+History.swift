import SectionGrammar
import SectionShared
/// Parsing of the requests about the history and who makes changes: `HISTORY [n]`,
/// `HISTORY FROM <rev>`, `SUBSCRIBE [FROM <rev>]` and `CLIENT NAME <name>`.
extension Verb {
  var isAboutHistory: Bool {
    switch self {
    case .history, .subscribe, .client: true
    default: false
    }
  }

  /// Builds the request from the words after the verb, or says what is wrong with them.
  func historyRequest(_ words: inout Words) -> Result<Request, ProtocolError> {
    let first = words.next()
    let second = first == nil ? nil : words.next()
    if let extra = second == nil ? nil : words.next() {
      return .failure(syntax("unexpected \"\(String(decoding: extra, as: UTF8.self))\""))
    }
    switch self {
    case .client:
      guard let first, asciiCaseInsensitiveEquals(first, "name"), let second else {
        return .failure(syntax("CLIENT takes NAME and a name"))
      }
      guard ClientName.isValid(second) else { return .failure(syntax(ClientName.rule)) }
      return .success(.clientName(second))
    case .subscribe, .history:
      guard let first else {
        return .success(self == .history ? .history(last: Grammar.historyDefault) : .subscribe)
      }
      if asciiCaseInsensitiveEquals(first, "from") {
        guard let second, RequestParser.number(second) != nil else {
          return .failure(syntax("FROM needs a revision"))
        }
        guard let revision = RequestParser.revision(second) else {
          let sent = String(decoding: second, as: UTF8.self)
          return .failure(syntax("revision \(sent) is out of range (at most \(UInt64.max))"))
        }
        return .success(self == .history ? .historyFrom(revision) : .subscribeFrom(revision))
      }
      guard self == .history, let count = RequestParser.number(first) else {
        return .failure(syntax("unexpected \"\(String(decoding: first, as: UTF8.self))\""))
      }
      // `HISTORY 1 2`: the count is right, the word after it is the one too many.
      if let second { return .failure(syntax("unexpected \"\(String(decoding: second, as: UTF8.self))\"")) }
      return .success(.history(last: count))
    default:
      preconditionFailure("\(name) is not about the history")
    }
  }

  private func syntax(_ problem: String) -> ProtocolError {
    ProtocolError(.syntax, "\(problem): usage: \(usage)")
  }
}
