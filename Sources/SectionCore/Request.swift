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
  case unsubscribe
  case help
  case quit
  case reload

  /// Whether the reply shows the state (RELOAD's too: what it keeps depends on the state), so
  /// that it must wait while changes of other clients are not saved yet.
  public var readsState: Bool {
    switch self {
    case .list, .view, .items, .subscribe, .reload: true
    case .mode(let mode): mode == nil
    default: false
    }
  }

  /// Whether the request changes state, and so is refused on the read-only socket.
  public var changesState: Bool {
    switch self {
    case .open, .close, .toggle, .reload: true
    case .mode(let mode): mode != nil
    default: false
    }
  }
}
