import SectionClient

/// What the ui does with each key and each word from the daemon.
extension TerminalUI {
  /// A change sent and not yet answered: how to name it, and what to say once it is done.
  struct Sent {
    var line: String
    var done: String?
  }

  func handle(_ key: Key) {
    if prompt != nil { return handlePrompt(key) }
    if showsHelp, let scroll = helpScroll(key) {
      let hidden = ScreenModel.help(unicode: style.unicode, level: status.level).count - screen.listHeight
      screen.helpScroll = min(max(0, screen.helpScroll + scroll), max(0, hidden))
      return changed()
    }
    // Esc closes the key list, as any other key does; q quits.
    let action = showsHelp && key == .escape ? nil : UIAction(key)
    if action == nil && !showsHelp { return }
    status.message = nil
    // After the action: it lays out with the old cursor, then moves it.
    defer { changed() }
    if action == .quit {
      running = false
    } else if showsHelp {
      // Any other key closes the key list, and does nothing else.
      showsHelp = false
      screen.helpScroll = 0
    } else if let action {
      perform(action)
    }
  }

  private func perform(_ action: UIAction) {
    if let needs = action.level, let has = status.level, needs > has {
      status.message =
        "this connection may \(has.rawValue), not \(needs.rawValue): the key list (?) shows what it may"
      return
    }
    let layout = layout()
    let cursor = layout.cursor ?? 0
    let state = shown
    switch action {
    case .move(let rows): screen.moveCursor(to: cursor + rows, in: layout, state: state)
    case .page(let pages): screen.moveCursor(to: cursor + pages * screen.listHeight, in: layout, state: state)
    case .first: screen.moveCursor(to: 0, in: layout, state: state)
    case .last: screen.moveCursor(to: layout.rows.count - 1, in: layout, state: state)
    case .scroll(let rows): screen.scroll(by: rows, in: layout, state: state)
    case .click(let line):
      guard let row = screen.row(atScreenLine: line, in: layout) else { return }
      screen.moveCursor(to: row, in: layout, state: state)
      if case .header = layout.rows[row] { perform(.toggle) }
    case .toggle, .open, .close:
      guard let anchor = screen.anchor, let section = state.index(of: anchor.id) else { return }
      // From an item row the cursor goes to the section's header, which stays when its items go.
      if let header = layout.rows.firstIndex(of: .header(section)) {
        screen.moveCursor(to: header, in: layout, state: state)
      }
      switch action {
      case .open: request(.open(anchor.id))
      case .close: request(.close(anchor.id))
      default: request(.toggle(anchor.id))
      }
    case .openAll: request(.openAll)
    case .closeAll: request(.closeAll)
    case .switchMode:
      guard let mode = self.state?.mode else { return }
      request(.setMode(mode == .multi ? .exclusive : .multi))
    case .reload: request(.reload(), done: "sectiond reloaded its config")
    case .addSection, .addItem, .edit, .delete: ask(action, at: layout.cursor.map { layout.rows[$0] })
    case .help: showsHelp = true
    case .quit: running = false
    }
  }

  /// Sends a change to the daemon; the change itself shows when its event comes back, a
  /// refusal in the status line, and `done` once it is made.
  func request<Value>(_ request: Request<Value>, done: String? = nil) {
    let line = request.lines.joined(separator: " ")
    guard !status.readonly else {
      status.message = TerminalUI.readOnly(line)
      return
    }
    guard status.link != .disconnected else {
      status.message = "not connected to sectiond; '\(line)' was not sent"
      return
    }
    sent[daemon.perform(request)] = Sent(line: line, done: done)
  }

  func handle(_ update: Follower.Update) {
    defer { changed() }
    switch update {
    case .state(let state):
      self.state = state
    case .current:
      status.link = .connected
    case .news(.lost):
      status.link = .disconnected
    case .news(.reconnected):
      // What was said about the old connection (`!bye shutdown`) no longer holds.
      status.message = nil
      status.link = .syncing
    case .bye(let reason):
      status.message = "sectiond is closing the connection (\(reason))"
    case .problem(let error), .ended(let error?):
      status.message = error.diagnostic
      status.link = .disconnected
    case .ended(nil):
      status.link = .disconnected
    case .subscribed, .event:
      // Only for a follower of events; the ui follows the state.
      break
    case .answered(let ticket, let error):
      guard let sent = sent.removeValue(forKey: ticket) else { return }
      if let error {
        refused(error, sent.line)
      } else if let done = sent.done {
        status.message = done
      }
    }
  }

  /// A refusal in the status line; ERR READONLY also makes the ui a viewer from then on, and
  /// ERR DENIED offers only the keys of the level it names.
  private func refused(_ error: ClientError, _ line: String) {
    guard case .daemon(let code, let message) = error else {
      status.message = error.diagnostic
      return
    }
    if code == "READONLY" {
      status.readonly = true
      status.message = TerminalUI.readOnly(line)
    } else if let denial = error.denial {
      status.level = denial.has
      status.message = error.diagnostic
    } else {
      status.message = message.isEmpty ? "\(line): \(code)" : message
    }
  }

  /// The refusal a viewer shows for a change.
  private static func readOnly(_ line: String) -> String {
    "read-only: \(line) needs the control socket"
  }
}
