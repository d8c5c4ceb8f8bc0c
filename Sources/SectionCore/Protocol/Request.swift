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

  /// Whether the reply shows the state (RELOAD's too: what it keeps depends on the state), so
  /// that it must wait while changes of other clients are not saved yet.
  public var readsState: Bool {
    switch self {
    case .list, .view, .items, .subscribe, .subscribeFrom, .reload, .reloadFresh, .status, .history,
      .historyFrom:
      true
    case .mode(let mode): mode == nil
    default: false
    }
  }

  /// The least `AccessLevel` that may make the request: every face asks this, and only this,
  /// whether a client may. Opening and closing (one section or all, and a batch, whose lines
  /// are each checked again at its END) is `operate`; what changes the list itself, the mode,
  /// or the config it comes from (`RELOAD FRESH` drops every client's edits) is `edit`;
  /// everything else only reads.
  public var level: AccessLevel {
    switch self {
    case .open, .close, .toggle, .batch, .end: .operate
    case .reload, .reloadFresh: .edit
    case .mode(let mode): mode == nil ? .read : .edit
    default: isEdit ? .edit : .read
    }
  }

  /// Whether the request changes state, and so is refused on the read-only socket.
  public var changesState: Bool { level > .read }

  /// Whether the request changes the list itself.
  public var isEdit: Bool {
    switch self {
    case .insert, .delete, .move, .rename, .itemInsert, .itemDelete, .itemMove, .itemSet: true
    default: false
    }
  }

  /// Whether the request may stand in a batch: the changes, but not RELOAD or another batch.
  public var isBatchable: Bool {
    switch self {
    case .open, .close, .toggle: true
    case .mode(let mode): mode != nil
    default: isEdit
    }
  }

  /// The command the request is, as the refusals name it.
  var verb: Verb {
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
