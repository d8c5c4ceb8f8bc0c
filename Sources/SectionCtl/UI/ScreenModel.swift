import SectionClient

/// Where everything goes on the screen, with no terminal involved: which row shows which
/// header or item, where the cursor is, how far the list is scrolled. Unit-tested as is.
///
/// The cursor is held as a section id (and an item position), not as a row number, so it
/// stays on the same section when sections above it open, close, appear or disappear; the
/// list scrolls so that the cursor keeps its place on the screen.
struct ScreenModel {
  /// One row of the list.
  enum Row: Equatable, Sendable {
    /// A section's header, by the section's index.
    case header(Int)
    /// An item of an open section: the section's index and the item's position.
    case item(Int, Int)

    var section: Int {
      switch self {
      case .header(let section), .item(let section, _): section
      }
    }
  }

  /// What the cursor is on, in terms that survive changes to the list.
  struct Anchor: Equatable, Sendable {
    var id: String
    /// The item's position, nil on the header.
    var position: Int?
    /// The section's index when last seen.
    var index: Int
    /// The ids of the sections after it and, if it was the last, before it, when last seen: if
    /// its section goes away, the cursor goes to the nearest of these that is still there, or
    /// else to the section now at `index`.
    var neighbours: [String] = []
  }

  /// The rows of the list and the cursor's row among them, for one state.
  struct Layout: Equatable, Sendable {
    var rows: [Row]
    var cursor: Int?
  }

  /// The terminal's size; the last line is the status line.
  var size: (rows: Int, columns: Int)
  private(set) var anchor: Anchor?
  /// The first list row on the screen.
  private(set) var top = 0
  /// How many lines of the key list (`?`) are scrolled away, when it is taller than the screen.
  var helpScroll = 0
  /// How far below `top` the cursor is: kept when the list changes above it.
  private var cursorOffset = 0

  init(rows: Int, columns: Int) {
    size = (rows, columns)
  }

  /// Lines for the list: all but the status line.
  var listHeight: Int { max(1, size.rows - 1) }

  /// Lays the state out and places the cursor (on the first header at the start) and the scroll.
  mutating func layout(_ state: SectionState) -> Layout {
    let rows = ScreenModel.rows(state)
    guard !state.sections.isEmpty else {
      top = 0
      return Layout(rows: rows, cursor: nil)
    }
    let anchor = self.anchor ?? Anchor(id: state.sections[0].id, position: nil, index: 0)
    let section =
      state.index(of: anchor.id) ?? anchor.neighbours.lazy.compactMap(state.index(of:)).first
      ?? min(anchor.index, state.sections.count - 1)
    let wanted: Row =
      if section == state.index(of: anchor.id), let position = anchor.position,
        position < state.items[anchor.id, default: []].count, state.sections[section].isOpen
      {
        .item(section, position)
      } else {
        .header(section)
      }
    let cursor = rows.firstIndex(of: wanted) ?? 0
    place(cursor, in: rows, state: state)
    let offset = min(cursorOffset, listHeight - 1)
    top = ScreenModel.clamp(cursor - offset, count: rows.count, height: listHeight)
    cursorOffset = cursor - top
    return Layout(rows: rows, cursor: cursor)
  }

  /// Moves the cursor to `row`, scrolling only as far as needed to show it.
  mutating func moveCursor(to row: Int, in layout: Layout, state: SectionState) {
    guard !layout.rows.isEmpty else { return }
    let row = min(max(row, 0), layout.rows.count - 1)
    place(row, in: layout.rows, state: state)
    if row < top { top = row }
    if row >= top + listHeight { top = row - listHeight + 1 }
    cursorOffset = row - top
  }

  /// Scrolls by `lines` (the mouse wheel); the cursor is pulled along when it would leave the screen.
  mutating func scroll(by lines: Int, in layout: Layout, state: SectionState) {
    top = ScreenModel.clamp(top + lines, count: layout.rows.count, height: listHeight)
    let cursor = layout.cursor ?? 0
    let visible = min(max(cursor, top), top + listHeight - 1)
    place(visible, in: layout.rows, state: state)
    cursorOffset = visible - top
  }

  /// The list row shown on screen line `line` (0 is the top line), if any.
  func row(atScreenLine line: Int, in layout: Layout) -> Int? {
    guard line >= 0, line < listHeight, top + line < layout.rows.count else { return nil }
    return top + line
  }

  /// Every row of the list: each header, and under each open section its known items.
  static func rows(_ state: SectionState) -> [Row] {
    var rows: [Row] = []
    rows.reserveCapacity(state.sections.count)
    for (index, section) in state.sections.enumerated() {
      rows.append(.header(index))
      guard section.isOpen, let items = state.items[section.id] else { continue }
      for position in items.indices { rows.append(.item(index, position)) }
    }
    return rows
  }

  private mutating func place(_ row: Int, in rows: [Row], state: SectionState) {
    guard rows.indices.contains(row) else { return }
    let target = rows[row]
    let position: Int? = if case .item(_, let position) = target { position } else { nil }
    let index = target.section
    // Enough neighbours to survive a reload that removes several sections at once.
    let after = state.sections[(index + 1)...].prefix(ScreenModel.neighbourCount).map(\.id)
    let before = state.sections[..<index].suffix(ScreenModel.neighbourCount).reversed().map(\.id)
    anchor = Anchor(
      id: state.sections[index].id, position: position, index: index, neighbours: after + before)
  }

  /// How many sections on each side the cursor remembers, for when its own goes away.
  private static let neighbourCount = 8

  /// A first row that keeps the screen full: no empty lines below the list when it is long enough.
  private static func clamp(_ top: Int, count: Int, height: Int) -> Int {
    min(max(top, 0), max(count - height, 0))
  }
}
