/// The commands of protocol 1, with their syntax and help text in one table.
enum Verb: CaseIterable {
  case ping, version, list, items, view, open, close, toggle, mode, subscribe, unsubscribe, help, quit, reload

  init?(_ word: ArraySlice<UInt8>) {
    guard let (verb, _) = Verb.lowercaseNames.first(where: { asciiCaseInsensitiveEquals(word, $0.1) }) else {
      return nil
    }
    self = verb
  }

  var name: String { "\(self)".uppercased() }

  private static let lowercaseNames = Verb.allCases.map { ($0, Array("\($0)".utf8)) }

  var usage: String {
    switch self {
    case .items, .toggle: "\(name) <index|id>"
    case .open, .close: "\(name) <index|id|ALL>"
    case .mode: "MODE [exclusive|multi]"
    default: name
    }
  }

  var summary: String {
    switch self {
    case .ping: "check that the daemon answers"
    case .version: "daemon version and protocol version"
    case .list: "every section: index, id, open or closed, item count, title"
    case .items: "every item of one section, open or not"
    case .view: "what an accordion shows: sections, and the items of open ones"
    case .open: "open a section (in exclusive mode, closing the open one), or all (multi mode only)"
    case .close: "close a section, or all"
    case .toggle: "open a closed section or close an open one"
    case .mode: "show the mode, or switch it (to exclusive keeps the most recently opened section)"
    case .subscribe: "current state, then one event line per change"
    case .unsubscribe: "stop receiving events"
    case .help: "this list"
    case .quit: "close the connection"
    case .reload: "re-read the config file (control socket only)"
    }
  }

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
        let target: Target = asciiCaseInsensitiveEquals(argument, Verb.all) ? .all : .section(ref)
        return .success(self == .open ? .open(target) : .close(target))
      }
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
    case .reload: .reload
    case .items, .open, .close, .toggle, .mode: preconditionFailure("\(name) takes an argument")
    }
  }

  private static let all = Array("all".utf8)
}
