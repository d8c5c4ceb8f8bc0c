/// The three requests that change whether sections are open.
enum SectionAction: String, Equatable, Sendable {
  case open, close, toggle

  /// The protocol verb.
  var verb: String { rawValue.uppercased() }
}
