/// A section as the daemon lists it: `section <index> <id> <open|closed> <item-count> <title>`.
struct ListedSection: Equatable, Sendable {
  let index: Int
  let id: String
  let isOpen: Bool
  let itemCount: Int
  let title: String
}
