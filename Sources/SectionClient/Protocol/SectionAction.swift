import SectionGrammar

/// The three requests that change whether sections are open.
public enum SectionAction: String, Equatable, Sendable {
  case open, close, toggle

  /// The protocol verb.
  public var verb: String { grammarVerb.name }

  /// The verb of the grammar the action is.
  var grammarVerb: Verb {
    switch self {
    case .open: .open
    case .close: .close
    case .toggle: .toggle
    }
  }
}
