import SectionGrammar
import SectionShared
/// A section named in a request: by its index as LIST shows it, or by its id.
public enum SectionRef: Equatable, Sendable {
  case index(Int)
  /// The id's bytes, a slice of the request line (no copy).
  case id(ArraySlice<UInt8>)
}

/// What OPEN and CLOSE act on.
public enum Target: Equatable, Sendable {
  case all
  case section(SectionRef)
}

/// Where INSERT and ITEM INSERT put the new thing: at an index, or after the last (`end`).
public enum Position: Equatable, Sendable {
  case at(Int)
  case end
}

/// One parsed request line of protocol 1.
public enum Request: Equatable, Sendable {
  case ping
  case version
  case list
  case items(SectionRef)
  case view
  case open(Target)
  case close(Target)
  case toggle(SectionRef)
  /// `MODE` alone asks; `MODE exclusive|multi` switches.
  case mode(Mode?)
  case subscribe
  /// `SUBSCRIBE FROM <rev>`: the changes after rev, when all are kept, else what SUBSCRIBE gets.
  case subscribeFrom(UInt64)
  case unsubscribe
  case help
  case quit
  case reload
  /// `RELOAD FRESH`: the config as it is, clients' edits dropped.
  case reloadFresh
  /// Runtime edits. Ids, titles and texts are slices of the request line, checked on use.
  case insert(Position, id: ArraySlice<UInt8>, title: ArraySlice<UInt8>)
  case delete(SectionRef)
  case move(SectionRef, to: Int)
  case rename(SectionRef, title: ArraySlice<UInt8>)
  case itemInsert(SectionRef, Position, text: ArraySlice<UInt8>)
  case itemDelete(SectionRef, Int)
  case itemMove(SectionRef, from: Int, to: Int)
  case itemSet(SectionRef, Int, text: ArraySlice<UInt8>)
  /// Starts collecting lines up to `END`, applied as one change.
  case batch
  case end
  /// The daemon's own facts (`SectionService.statusFields`), for `sectionctl status`.
  case status
  /// `HISTORY [n]`: the last n changes, with who made them.
  case history(last: Int)
  /// `HISTORY FROM <rev>`: the changes after rev, when all are kept.
  case historyFrom(UInt64)
  /// `CLIENT NAME <name>`: what the history calls the connection; the name, checked.
  case clientName(ArraySlice<UInt8>)

  /// The request's form in the grammar (`Verb.row`), which says what it takes and answers.
  public var form: Form { verb.row.forms[formIndex] }

  /// What its form says the daemon checks before running it (`Form.Facts`), read from the
  /// parser's flat table (`ParseTable`) rather than from the row, which the request path would
  /// copy.
  public var facts: Form.Facts { ParseTable.shape(verb, form: formIndex).facts }

  /// Whether the reply shows the state (`Form.Facts.readsState`), so that it must wait while
  /// changes of other clients are not saved yet.
  public var readsState: Bool { facts.readsState }

  /// The least `AccessLevel` that may make the request (`Form.Facts.level`): every face asks
  /// this, and only this, whether a client may.
  public var level: AccessLevel { facts.level }

  /// Whether the request changes state, and so is refused on the read-only socket.
  public var changesState: Bool { facts.changesState }

  /// Whether the request changes the list itself.
  public var isEdit: Bool {
    switch self {
    case .insert, .delete, .move, .rename, .itemInsert, .itemDelete, .itemMove, .itemSet: true
    default: false
    }
  }

  /// Whether the request may stand in a batch (`Form.inBatch`): the changes, but not RELOAD
  /// or another batch.
  public var isBatchable: Bool { facts.inBatch }

  /// Which of its verb's forms the request is, in the order of the verb's row.
  private var formIndex: Int {
    switch self {
    case .mode(let mode): mode == nil ? 0 : 1
    case .subscribeFrom, .reloadFresh, .itemDelete: 1
    case .historyFrom, .itemMove: 2
    case .itemSet: 3
    default: 0
    }
  }

  /// The command the request is, as the refusals name it.
  public var verb: Verb {
    switch self {
    case .ping: .ping
    case .version: .version
    case .list: .list
    case .items: .items
    case .view: .view
    case .open: .open
    case .close: .close
    case .toggle: .toggle
    case .mode: .mode
    case .subscribe, .subscribeFrom: .subscribe
    case .unsubscribe: .unsubscribe
    case .help: .help
    case .quit: .quit
    case .reload, .reloadFresh: .reload
    case .insert: .insert
    case .delete: .delete
    case .move: .move
    case .rename: .rename
    case .itemInsert, .itemDelete, .itemMove, .itemSet: .item
    case .batch: .batch
    case .end: .end
    case .status: .status
    case .history, .historyFrom: .history
    case .clientName: .client
    }
  }
}
