import SectionShared
/// The commands of protocol 1, with their syntax and help text in one table.
public enum Verb: CaseIterable {
  case ping, version, list, items, view, open, close, toggle, mode, subscribe, unsubscribe, help, quit, reload
  case status, history, client
  case insert, delete, move, rename, item, batch, end

  /// The verb `word` names, in any case. Runs for every request: the word's length and first
  /// letter pick the one verb it can be, which is then compared in place (a walk through the
  /// table of all of them cost a TOGGLE 184 instructions, callgrind).
  init?(_ word: ArraySlice<UInt8>) {
    guard let first = word.first, let verb = Verb.candidate(length: word.count, first: first | 0x20, word),
      Verb.equals(word, verb.lowercaseName)
    else { return nil }
    self = verb
  }

  /// `asciiCaseInsensitiveEquals` for a name of letters only, where setting bit 5 of a byte
  /// lower-cases it and makes no other byte a letter: a third of its cost (callgrind).
  private static func equals(_ word: ArraySlice<UInt8>, _ name: StaticString) -> Bool {
    guard word.count == name.utf8CodeUnitCount else { return false }
    let name = name.utf8Start
    return word.withUnsafeBufferPointer { word in
      for index in word.indices where word[index] | 0x20 != name[index] { return false }
      return true
    }
  }

  /// The only verb a word of `length` bytes starting with `first` (lower-cased) can be; the
  /// two pairs alike in both (MODE and MOVE, RELOAD and RENAME) differ in their third byte.
  private static func candidate(length: Int, first: UInt8, _ word: ArraySlice<UInt8>) -> Verb? {
    switch (length, first) {
    case (3, UInt8(ascii: "e")): .end
    case (4, UInt8(ascii: "h")): .help
    case (4, UInt8(ascii: "i")): .item
    case (4, UInt8(ascii: "l")): .list
    case (4, UInt8(ascii: "m")): word[word.startIndex + 2] | 0x20 == UInt8(ascii: "d") ? .mode : .move
    case (4, UInt8(ascii: "o")): .open
    case (4, UInt8(ascii: "p")): .ping
    case (4, UInt8(ascii: "q")): .quit
    case (4, UInt8(ascii: "v")): .view
    case (5, UInt8(ascii: "b")): .batch
    case (5, UInt8(ascii: "c")): .close
    case (5, UInt8(ascii: "i")): .items
    case (6, UInt8(ascii: "d")): .delete
    case (6, UInt8(ascii: "c")): .client
    case (6, UInt8(ascii: "i")): .insert
    case (6, UInt8(ascii: "r")): word[word.startIndex + 2] | 0x20 == UInt8(ascii: "l") ? .reload : .rename
    case (6, UInt8(ascii: "s")): .status
    case (6, UInt8(ascii: "t")): .toggle
    case (7, UInt8(ascii: "h")): .history
    case (7, UInt8(ascii: "v")): .version
    case (9, UInt8(ascii: "s")): .subscribe
    case (11, UInt8(ascii: "u")): .unsubscribe
    default: nil
    }
  }

  var name: String { "\(self)".uppercased() }

  private var lowercaseName: StaticString {
    switch self {
    case .ping: "ping"
    case .version: "version"
    case .list: "list"
    case .items: "items"
    case .view: "view"
    case .open: "open"
    case .close: "close"
    case .toggle: "toggle"
    case .mode: "mode"
    case .subscribe: "subscribe"
    case .unsubscribe: "unsubscribe"
    case .help: "help"
    case .quit: "quit"
    case .reload: "reload"
    case .status: "status"
    case .history: "history"
    case .client: "client"
    case .insert: "insert"
    case .delete: "delete"
    case .move: "move"
    case .rename: "rename"
    case .item: "item"
    case .batch: "batch"
    case .end: "end"
    }
  }

  var usage: String {
    switch self {
    case .items, .toggle: "\(name) <index|id>"
    case .open, .close: "\(name) <index|id|ALL>"
    case .mode: "MODE [exclusive|multi]"
    case .reload: "RELOAD [FRESH]"
    case .subscribe: "SUBSCRIBE [FROM <rev>]"
    case .history: "HISTORY [n] | HISTORY FROM <rev>"
    case .client: "CLIENT NAME <name>"
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
    case .subscribe:
      "current state, then one event line per change; FROM <rev>: the changes after rev, when all are kept, instead of the state"
    case .history: "who changed what, when: the last n changes (default 20), or those after rev"
    case .client: "name this connection in the history (A-Z a-z 0-9 . _ : @ -, at most 64)"
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
    case .items, .history, .client, .open, .close, .toggle, .mode, .reload, .insert, .delete, .move, .rename,
      .item:
      preconditionFailure("\(name) takes an argument")
    }
  }
}
