/// How sections open: each on its own, or as an accordion with at most one open.
public enum Mode: String, Sendable, CaseIterable {
  case multi
  case exclusive

  /// The mode named by protocol bytes, case-insensitively.
  init?(bytes: ArraySlice<UInt8>) {
    if asciiCaseInsensitiveEquals(bytes, "multi") {
      self = .multi
    } else if asciiCaseInsensitiveEquals(bytes, "exclusive") {
      self = .exclusive
    } else {
      return nil
    }
  }

  var bytes: [UInt8] {
    switch self {
    case .multi: Mode.multiBytes
    case .exclusive: Mode.exclusiveBytes
    }
  }

  private static let multiBytes = Array("multi".utf8)
  private static let exclusiveBytes = Array("exclusive".utf8)
}
