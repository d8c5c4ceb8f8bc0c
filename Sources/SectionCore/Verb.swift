/// The commands of protocol 1, with their syntax and help text in one table.
enum Verb: CaseIterable {
  case ping, version, list, items, view, open, close, toggle, mode, subscribe, unsubscribe, help, quit, reload
  case status
  case insert, delete, move, rename, item, batch, end

  /// The verb `word` names, in any case. Runs for every request: a table of static strings
  /// compared in place, with no allocation or reference counting.
  init?(_ word: ArraySlice<UInt8>) {
    for (verb, name) in Verb.lowercaseNames where asciiCaseInsensitiveEquals(word, name) {
      self = verb
      return
    }
    return nil
  }

  var name: String { "\(self)".uppercased() }

  private static let lowercaseNames: [(Verb, StaticString)] = [
    (.ping, "ping"), (.version, "version"), (.list, "list"), (.items, "items"), (.view, "view"),
    (.open, "open"), (.close, "close"), (.toggle, "toggle"), (.mode, "mode"), (.subscribe, "subscribe"),
    (.unsubscribe, "unsubscribe"), (.help, "help"), (.quit, "quit"), (.reload, "reload"),
    (.insert, "insert"), (.delete, "delete"), (.move, "move"), (.rename, "rename"), (.item, "item"),
    (.batch, "batch"), (.end, "end"), (.status, "status"),
  ]

  var usage: String {
    switch self {
    case .items, .toggle: "\(name) <index|id>"
    case .open, .close: "\(name) <index|id|ALL>"
    case .mode: "MODE [exclusive|multi]"
    case .reload: "RELOAD [FRESH]"
    case .insert: "INSERT <index|end> <id> <title>"
    case .delete: "DELETE <index|id>"
    case .move: "MOVE <index|id> <index>"
    case .rename: "RENAME <index|id> <title>"
    case .item:
      "ITEM INSERT <index|id> <pos|end> <text> | ITEM DELETE <index|id> <pos> | ITEM MOVE <index|id> <from> <to> | ITEM SET <index|id> <pos> <text>"
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
    case .reload: "re-read the config file, keeping clients' edits; FRESH drops them (control socket only)"
    case .insert: "insert a new closed section with no items (control socket only)"
    case .delete: "delete a section (control socket only)"
    case .move: "move a section to an index (control socket only)"
    case .rename: "give a section a new title; the id stays (control socket only)"
    case .item: "insert, delete, move or replace one item of a section (control socket only)"
    case .batch: "collect the lines up to END and apply them as one change: all or none"
    case .end: "end a BATCH"
    case .status: "the daemon's process, paths, uptime, clients and subscribers"
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
    case .items, .open, .close, .toggle, .mode, .reload, .insert, .delete, .move, .rename, .item:
      preconditionFailure("\(name) takes an argument")
    }
  }
}
