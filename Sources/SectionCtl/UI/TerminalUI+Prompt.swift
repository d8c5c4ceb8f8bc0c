import SectionClient

/// The runtime edits of `sectionctl ui`: a, i, e and d open the prompt line, which edits as a
/// shell's line does (`Prompt.edit`), sends the request on Enter (on y for a delete) and
/// closes on Esc or Ctrl-C.
extension TerminalUI {
  /// Opens the prompt for `action` on the cursor's row (`row`, nil when the list is empty).
  func ask(_ action: UIAction, at row: ScreenModel.Row?) {
    guard !status.readonly else {
      status.message = "read-only: edits need the control socket (run ui without --readonly)"
      return
    }
    let state = shown
    let section = row.map { state.sections[$0.section] }
    switch (action, row) {
    case (.addSection, _):
      prompt = Prompt(
        question: "new section after \(section?.id ?? "none"), ID TITLE",
        purpose: .addSection(at: row.map { $0.section + 1 } ?? 0))
    case (.addItem, .item(_, let position)?):
      prompt = Prompt(
        question: "new item in \(section!.id) after \(position)",
        purpose: .addItem(id: section!.id, at: position + 1))
    case (.addItem, .header?):
      prompt = Prompt(
        question: "new item at the end of \(section!.id)", purpose: .addItem(id: section!.id, at: nil))
    case (.edit, .header?):
      prompt = Prompt(
        question: "rename \(section!.id)", purpose: .rename(id: section!.id), text: section!.title)
    case (.edit, .item(_, let position)?):
      let text = state.items[section!.id].flatMap { $0.indices.contains(position) ? $0[position] : nil } ?? ""
      prompt = Prompt(
        question: "item \(position) of \(section!.id)",
        purpose: .editItem(id: section!.id, position: position), text: text)
    case (.delete, .header?):
      prompt = Prompt(
        question: "delete section \(section!.id) (\(counted(section!.itemCount, "item")))",
        purpose: .deleteSection(id: section!.id))
    case (.delete, .item(_, let position)?):
      prompt = Prompt(
        question: "delete item \(position) of \(section!.id)",
        purpose: .deleteItem(id: section!.id, position: position))
    default:
      status.message = "no section here: 'a' adds one"
    }
  }

  /// A key while the prompt is open: Enter, y/n for a confirmation, Esc, or an edit.
  func handlePrompt(_ key: Key) {
    defer { changed() }
    guard var current = prompt else { return }
    if current.isConfirmation {
      prompt = nil
      if key == .character("y") || key == .character("Y"), case .success(let change) = current.request() {
        request(change)
      } else {
        status.message = "not deleted"
      }
      return
    }
    switch key {
    case .escape, .interrupt:
      prompt = nil
    case .enter:
      switch current.request() {
      case .success(let change):
        prompt = nil
        request(change)
      case .failure(let refusal):
        current.note = refusal.message
        prompt = current
      }
    default:
      guard current.edit(key) else { break }
      current.note = nil
      prompt = current
    }
  }

  /// Keys that scroll the key list when it is taller than the screen.
  func helpScroll(_ key: Key) -> Int? {
    switch key {
    case .down, .character("j"): 1
    case .up, .character("k"): -1
    case .pageDown: screen.listHeight
    case .pageUp: -screen.listHeight
    default: nil
    }
  }
}
