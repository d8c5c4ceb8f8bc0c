/// One item line, `item <section-index> <position> <text>`.
struct ListedItem: Equatable, Sendable {
  let sectionIndex: Int
  let position: Int
  let text: String
}
