/// One section of the list: what the config says about it. Its open/closed state lives in `SectionModel`.
public struct Section: Equatable, Sendable {
  /// Stable name used by clients and by the state file; never all digits, never `all`.
  public let id: String
  public let title: String
  public let items: [String]
  /// The state to start in when no saved state knows this section.
  public let initiallyOpen: Bool

  public init(id: String, title: String, items: [String], initiallyOpen: Bool = false) {
    self.id = id
    self.title = title
    self.items = items
    self.initiallyOpen = initiallyOpen
  }

  /// The id a title gets when the config gives none: lower-cased, every run of characters
  /// other than a-z and 0-9 turned into one `-`, with `-` trimmed from both ends.
  public static func derivedID(fromTitle title: String) -> String {
    var id = ""
    var pendingDash = false
    for scalar in title.lowercased().unicodeScalars {
      if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
        if pendingDash && !id.isEmpty { id += "-" }
        pendingDash = false
        id.unicodeScalars.append(scalar)
      } else {
        pendingDash = true
      }
    }
    return id
  }
}
