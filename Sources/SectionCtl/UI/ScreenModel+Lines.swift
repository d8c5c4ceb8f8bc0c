import SectionClient

/// What each line of the screen says: the accordion as `sectionctl view` draws it, with the
/// cursor's row highlighted and marked, then the status line.
extension ScreenModel {
  /// Every line of the screen, top to bottom, escaped and cut to its width; on a one-line
  /// terminal, only the status line. `state` is nil until the daemon has said anything.
  func lines(
    _ state: SectionState?, layout: Layout, status: StatusBar, style: Style, showsHelp: Bool
  ) -> [ScreenLine] {
    var lines: [ScreenLine] =
      showsHelp
      ? ScreenModel.help(unicode: style.unicode, level: status.level).dropFirst(helpScroll).map {
        ScreenLine([.init(text: $0)])
      }
      : state.map { state in
        (top..<min(top + listHeight, layout.rows.count)).map {
          line(layout.rows[$0], state: state, style: style, isCursor: $0 == layout.cursor)
        }
      } ?? []
    if lines.isEmpty && !showsHelp && status.link != .syncing {
      lines.append(ScreenLine([.init(text: "  (no sections)", look: .dim)]))
    }
    lines = Array(lines.prefix(listHeight))
    lines += Array(repeating: ScreenLine([]), count: listHeight - lines.count)
    var shown = status
    if !showsHelp { shown.below = max(0, layout.rows.count - (top + listHeight)) }
    let ellipsis = style.unicode ? "…" : "~"
    // A message that does not fit beside the status takes the line above it (two, when it is
    // wider than the screen), so that mode, revision and link stay in view.
    let message = status.message.map { " " + VisibleText.escape($0, asciiOnly: !style.unicode) } ?? ""
    if status.prompt == nil, !message.isEmpty, listHeight > 1,
      DisplayWidth.of(statusLine(state, status: shown).text) > size.columns
    {
      let first = ScreenLine([.init(text: message)]).fitted(width: size.columns, ellipsis: "").text
      if first.count < message.count && listHeight > 2 {
        lines[lines.count - 2] = ScreenLine([.init(text: first)], highlighted: true)
        lines[lines.count - 1] = ScreenLine(
          [.init(text: " " + message.dropFirst(first.count))], highlighted: true)
      } else {
        lines[lines.count - 1] = ScreenLine([.init(text: message)], highlighted: true)
      }
      shown.message = nil
    }
    lines.append(statusLine(state, status: shown))
    return lines.suffix(max(size.rows, 1)).map {
      $0.escaped(asciiOnly: !style.unicode).fitted(width: size.columns, ellipsis: ellipsis)
    }
  }

  /// A header (marker, title, index, id, item count) or an indented item, after a two-cell
  /// gutter that points at the cursor's row.
  func line(_ row: Row, state: SectionState, style: Style, isCursor: Bool) -> ScreenLine {
    let gutter = ScreenLine.Span(text: isCursor ? (style.unicode ? "› " : "> ") : "  ")
    let section = state.sections[row.section]
    switch row {
    case .header(let index):
      let suffix = "  (\(index) \(section.id), \(counted(section.itemCount, "item")))"
      let marker = style.marker(open: section.isOpen)
      // A long title is cut before the suffix is, while it keeps a few cells of its own.
      let room = size.columns - DisplayWidth.of(gutter.text + marker + " " + suffix)
      let title =
        room >= 8 && DisplayWidth.of(section.title) > room
        ? ScreenLine([.init(text: section.title)]).fitted(width: room, ellipsis: style.unicode ? "…" : "~")
          .text
        : section.title
      return ScreenLine(
        [
          gutter, .init(text: marker, look: section.isOpen ? .green : .plain),
          .init(text: " "), .init(text: title, look: .bold), .init(text: suffix, look: .dim),
        ], highlighted: isCursor)
    case .item(_, let position):
      let text = state.items[section.id].flatMap { $0.indices.contains(position) ? $0[position] : nil } ?? ""
      return ScreenLine([gutter, .init(text: "    " + text)], highlighted: isCursor)
    }
  }

  /// Mode, revision and link; the last message, or key hints; the socket last, as the least
  /// likely to be missed when a narrow terminal cuts the line.
  func statusLine(_ state: SectionState?, status: StatusBar) -> ScreenLine {
    if let prompt = status.prompt { return ScreenLine([.init(text: prompt)], highlighted: true) }
    let link =
      switch status.link {
      case .connected:
        // The level only when it is less than everything: the line is narrow, and a
        // connection that may edit is what a ui has always been.
        status.readonly
          ? "viewer (read-only)"
          : status.level.flatMap { $0 < .edit ? "connected (may \($0.rawValue))" : nil } ?? "connected"
      case .syncing: "connecting"
      case .disconnected: "disconnected, retrying"
      }
    let mode = state?.mode.rawValue ?? "-"
    let hints = "? keys  q quit"
    let more = status.below > 0 ? "  |  \(status.below) more below" : ""
    return ScreenLine(
      [
        .init(
          text:
            " \(mode)  rev \(state?.revision ?? 0)  \(link)  |  \(status.message ?? hints)\(more)  |  \(status.socket)"
        )
      ],
      highlighted: true)
  }

  /// The key list `?` shows in place of the accordion; with `level`, only the keys a connection
  /// of that level may use.
  static func help(unicode: Bool, level: AccessLevel? = nil) -> [String] {
    let all: [(String, String, AccessLevel?)] = [
      ("\(unicode ? "↑ ↓" : "Up Down")  k j", "move the cursor", nil),
      ("Enter  Space", "open or close the cursor's section", .operate),
      ("o  c", "open / close it", .operate),
      ("O  C", "open all (multi mode only) / close all", .operate),
      ("m", "switch mode: multi / exclusive", .edit),
      ("g  G", "first / last row", nil),
      ("PgUp  PgDn", "a page up / down", nil),
      ("r", "ask the daemon to reload its config", .edit),
      ("a", "add a section after the cursor's (type ID TITLE)", .edit),
      ("i", "add an item to the cursor's section", .edit),
      ("e", "rename the section, or edit the item, at the cursor", .edit),
      ("d", "delete the section or item at the cursor (asks first)", .edit),
      ("?", "these keys", nil),
      ("q  Esc  Ctrl-C", "quit", nil),
    ]
    let keys = all.filter { key in key.2.map { needs in level.map { needs <= $0 } ?? true } ?? true }
      .map { ($0.0, $0.1) }
    let width = keys.map { DisplayWidth.of($0.0) }.max()! + 3
    return ["sectionctl ui: keys", ""]
      + keys.map { "  " + $0 + String(repeating: " ", count: width - DisplayWidth.of($0)) + $1 }
      + [
        "", "Mouse: click a header to open or close it; the wheel scrolls.",
        "The prompt of a, i and e edits as a shell's line: \(unicode ? "← →" : "Left Right"), Home End,",
        "Ctrl-A E B F move; Backspace, Delete, Ctrl-D; Ctrl-U K W delete to start, end, word.",
        "j k and the arrows scroll this page; any other key closes it.",
      ]
  }
}
