/// One item line, `item <section-index> <position> <text>`.
public struct ListedItem: Equatable, Sendable {
  public let sectionIndex: Int
  public let position: Int
  public let text: String
}
