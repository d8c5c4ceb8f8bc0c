/// A section as the daemon lists it: `section <index> <id> <open|closed> <item-count> <title>`.
public struct ListedSection: Equatable, Sendable {
  public let index: Int
  public let id: String
  public let isOpen: Bool
  public let itemCount: Int
  public let title: String

  public init(index: Int, id: String, isOpen: Bool, itemCount: Int, title: String) {
    self.index = index
    self.id = id
    self.isOpen = isOpen
    self.itemCount = itemCount
    self.title = title
  }
}
