import SectionGrammar
import SectionShared

/// Parsing of the verbs that take at most one word: a section, ALL, a mode, FRESH or nothing.
extension Verb {
  /// Builds the request from its one optional argument, or says what is wrong with it.
  func request(argument: ArraySlice<UInt8>?) -> Result<Request, ProtocolError> {
    switch self {
    case .items, .toggle, .open, .close:
      guard let argument else {
        return .failure(ProtocolError(.syntax, "\(name) needs a section: usage: \(usage)"))
      }
      let ref = RequestParser.sectionRef(argument)
      switch self {
      case .items: return .success(.items(ref))
      case .toggle: return .success(.toggle(ref))
      default:
        let target: Target = asciiCaseInsensitiveEquals(argument, "all") ? .all : .section(ref)
        return .success(self == .open ? .open(target) : .close(target))
      }
    case .reload:
      guard let argument else { return .success(.reload) }
      guard asciiCaseInsensitiveEquals(argument, "fresh") else {
        return .failure(
          ProtocolError(
            .syntax,
            "unexpected \"\(String(decoding: argument, as: UTF8.self))\": RELOAD takes FRESH or nothing"))
      }
      return .success(.reloadFresh)
    case .mode:
      guard let argument else { return .success(.mode(nil)) }
      guard let mode = Mode(bytes: argument) else {
        return .failure(
          ProtocolError(
            .syntax, "unknown mode \"\(String(decoding: argument, as: UTF8.self))\": use exclusive or multi"))
      }
      return .success(.mode(mode))
    default:
      if let argument {
        return .failure(
          ProtocolError(
            .syntax, "unexpected \"\(String(decoding: argument, as: UTF8.self))\": \(name) takes no arguments"
          ))
      }
      return .success(simpleRequest)
    }
  }

  private var simpleRequest: Request {
    switch self {
    case .ping: .ping
    case .version: .version
    case .list: .list
    case .view: .view
    case .subscribe: .subscribe
    case .unsubscribe: .unsubscribe
    case .help: .help
    case .quit: .quit
    case .batch: .batch
    case .end: .end
    case .status: .status
    case .items, .history, .client, .open, .close, .toggle, .mode, .reload, .insert, .delete, .move, .rename,
      .item:
      preconditionFailure("\(name) takes an argument")
    }
  }
}
