import SectionShared

// The daemon's side of `Mode`: kept here, beside the parser and the writers that call them on
// every MODE request and state line, so that they compile with them (and the daemon's flags).
extension Mode {
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
