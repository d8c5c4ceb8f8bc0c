import SectionGrammar

extension Request {
  /// The request that form `form` of `verb` makes of its arguments, read and checked as the
  /// verb's row has them (`ArgumentReader`): with the verb's row and its executor, what a verb
  /// is. Positions are the row's: ITEM's section is its argument 1, after the action.
  init(_ verb: Verb, form: Int, _ read: ReadArguments, in line: ArraySlice<UInt8>) {
    let arguments = Arguments(read: read, line: line)
    switch verb {
    case .ping: self = .ping
    case .version: self = .version
    case .list: self = .list
    case .items: self = .items(arguments.section(0))
    case .view: self = .view
    case .open: self = .open(arguments.target(0))
    case .close: self = .close(arguments.target(0))
    case .toggle: self = .toggle(arguments.section(0))
    case .mode: self = .mode(form == 0 ? nil : arguments.mode(0))
    case .subscribe: self = form == 0 ? .subscribe : .subscribeFrom(arguments.revision(1))
    case .unsubscribe: self = .unsubscribe
    case .help: self = .help
    case .quit: self = .quit
    case .reload: self = form == 0 ? .reload : .reloadFresh
    case .status: self = .status
    case .history:
      switch form {
      case 0: self = .history(last: Grammar.historyDefault)
      case 1: self = .history(last: arguments.number(0))
      default: self = .historyFrom(arguments.revision(1))
      }
    case .client: self = .clientName(arguments[1])
    case .insert: self = .insert(arguments.position(0), id: arguments[1], title: arguments[2])
    case .delete: self = .delete(arguments.section(0))
    case .move: self = .move(arguments.section(0), to: arguments.number(1))
    case .rename: self = .rename(arguments.section(0), title: arguments[1])
    case .item:
      let section = arguments.section(1)
      switch form {
      case 0: self = .itemInsert(section, arguments.position(2), text: arguments[3])
      case 1: self = .itemDelete(section, arguments.number(2))
      case 2: self = .itemMove(section, from: arguments.number(2), to: arguments.number(3))
      default: self = .itemSet(section, arguments.number(2), text: arguments[3])
      }
    case .batch: self = .batch
    case .end: self = .end
    }
  }
}

/// A request's arguments as the reader found and checked them, read as the request needs.
private struct Arguments {
  let read: ReadArguments
  let line: ArraySlice<UInt8>

  subscript(position: Int) -> ArraySlice<UInt8> { line[read[position]] }

  /// A section: all digits is an index, anything else an id.
  func section(_ position: Int) -> SectionRef { RequestParser.sectionRef(self[position]) }

  /// A section or ALL.
  func target(_ position: Int) -> Target {
    let word = self[position]
    return SectionRef.isAll(word) ? .all : .section(RequestParser.sectionRef(word))
  }

  /// A number the reader checked.
  func number(_ position: Int) -> Int { RequestParser.number(self[position])! }

  /// A number or `end`, checked.
  func position(_ position: Int) -> Position { Position(word: self[position])! }

  /// A mode's name, checked.
  func mode(_ position: Int) -> Mode { Mode(bytes: self[position])! }

  /// A revision, checked.
  func revision(_ position: Int) -> UInt64 { RequestParser.revision(self[position])! }
}
