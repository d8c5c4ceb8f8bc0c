/// How sections open: each on its own, or as an accordion with at most one open.
public enum Mode: String, Sendable, CaseIterable {
  case multi
  case exclusive

  /// The mode named by protocol bytes, case-insensitively.
  init?(bytes: ArraySlice<UInt8>) {
    guard let mode = Mode.allCases.first(where: { asciiCaseInsensitiveEquals(bytes, $0.word) }) else {
      return nil
    }
    self = mode
  }

  /// The mode's name in the protocol and the state file, as a literal to append without a String.
  var word: StaticString {
    switch self {
    case .multi: "multi"
    case .exclusive: "exclusive"
    }
  }
}
