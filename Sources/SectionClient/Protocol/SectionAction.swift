/// The three requests that change whether sections are open.
public enum SectionAction: String, Equatable, Sendable {
  case open, close, toggle

  /// The protocol verb.
  public var verb: String { rawValue.uppercased() }
}
