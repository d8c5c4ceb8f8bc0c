import SectionClient

/// What a key or a mouse report asks the ui to do: the key map, in one place.
enum UIAction: Equatable, Sendable {
  /// The cursor down (positive) or up by rows, or by pages.
  case move(rows: Int)
  case page(Int)
  case first, last
  /// The cursor's section (on an item: the item's section).
  case toggle, open, close
  case openAll, closeAll
  case switchMode
  case reload
  /// Runtime edits, each through the prompt line: a section after the cursor's, an item, a
  /// new title or text for the cursor's row, deleting it (after a yes).
  case addSection, addItem, edit, delete
  case help
  case quit
  /// The mouse wheel: the list, by rows.
  case scroll(Int)
  /// A left click on a screen line (0 at the top).
  case click(line: Int)

  /// Rows one wheel notch scrolls.
  static let wheelRows = 3

  /// The level the daemon asks of the request the action sends (PROTOCOL.md, "Access levels");
  /// nil for what only moves around the screen.
  var level: AccessLevel? {
    switch self {
    case .toggle, .open, .close, .openAll, .closeAll: .operate
    case .switchMode, .reload, .addSection, .addItem, .edit, .delete: .edit
    case .move, .page, .first, .last, .help, .quit, .scroll, .click: nil
    }
  }

  init?(_ key: Key) {
    switch key {
    case .up, .character("k"): self = .move(rows: -1)
    case .down, .character("j"): self = .move(rows: 1)
    case .pageUp: self = .page(-1)
    case .pageDown: self = .page(1)
    case .home, .character("g"): self = .first
    case .end, .character("G"): self = .last
    case .enter, .character(" "): self = .toggle
    case .character("o"): self = .open
    case .character("c"): self = .close
    case .character("O"): self = .openAll
    case .character("C"): self = .closeAll
    case .character("m"): self = .switchMode
    case .character("r"): self = .reload
    case .character("a"): self = .addSection
    case .character("i"): self = .addItem
    case .character("e"): self = .edit
    case .character("d"): self = .delete
    case .character("?"): self = .help
    case .character("q"), .escape, .interrupt: self = .quit
    case .mouse(.wheelUp, _, _): self = .scroll(-UIAction.wheelRows)
    case .mouse(.wheelDown, _, _): self = .scroll(UIAction.wheelRows)
    case .mouse(.press(button: 0), let row, _): self = .click(line: row)
    default: return nil
    }
  }
}
