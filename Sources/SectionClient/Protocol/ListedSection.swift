/// A section as the daemon lists it: `section <index> <id> <open|closed> <item-count> <title>`.
public struct ListedSection: Equatable, Sendable {
  public let index: Int
  public let id: String
  public let isOpen: Bool
  public let itemCount: Int
  public let title: String
}
