import SectionClient

/// What the ui does with each key, each reply and each event.
extension TerminalUI {
  func handle(_ key: Key) {
    if prompt != nil { return handlePrompt(key) }
    if showsHelp, let scroll = helpScroll(key) {
      let hidden = ScreenModel.help(unicode: style.unicode).count - screen.listHeight
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
    let layout = layout()
    let cursor = layout.cursor ?? 0
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
      let verb = action == .open ? "OPEN" : action == .close ? "CLOSE" : "TOGGLE"
      request("\(verb) \(anchor.id)")
    case .openAll: request("OPEN ALL")
    case .closeAll: request("CLOSE ALL")
    case .switchMode:
      guard let mode = state.mode else { return }
      request("MODE \(mode == .multi ? Mode.exclusive.rawValue : Mode.multi.rawValue)")
    case .reload: request("RELOAD")
    case .addSection, .addItem, .edit, .delete: ask(action, at: layout.cursor.map { layout.rows[$0] })
    case .help: showsHelp = true
    case .quit: running = false
    }
  }

  /// Sends a change to the daemon; the change itself shows when its event comes back, a refusal in the status line.
  func request(_ line: String) {
    guard !status.readonly else {
      status.message = TerminalUI.readOnly(line)
      return
    }
    guard let connection else {
      status.message = "not connected to sectiond; '\(line)' was not sent"
      return
    }
    connection.send(line, as: .change(line))
  }

  func handle(_ incoming: LiveConnection.Incoming) {
    defer { changed() }
    switch incoming {
    case .event(.bye(let reason)):
      status.message = "sectiond is closing the connection (\(reason))"
    case .event(let event):
      fulfil(state.apply(event))
    case .reply(.subscribe, let reply):
      if let snapshot = reply.state { state.subscribed(snapshot) } else { refused(reply, "SUBSCRIBE") }
    case .reply(.resume, let reply):
      let start = Subscribing.start(of: reply)
      if state.resumed(start) {
        status.link = .connected
      } else {
        // A plain subscription on an older daemon; then the whole view.
        if start == .refused { connection?.send(Subscribing.request(after: nil), as: .subscribe) }
        connection?.send("VIEW", as: .view)
      }
    case .reply(.view, let reply):
      guard let revision = reply.revision else { return refused(reply, "VIEW") }
      status.link = .connected
      fulfil(state.synced(reply.sections, items: reply.items, revision: revision))
    case .reply(.items(let id), let reply):
      if reply.revision != nil {
        state.received(items: reply.items.sorted { $0.position < $1.position }.map(\.text), of: id)
      } else {
        state.itemsFailed(id)
      }
    case .reply(.change(let line), let reply):
      if case .error = reply.status {
        refused(reply, line)
      } else if line == "RELOAD" {
        status.message = "sectiond reloaded its config"
      }
    }
  }

  /// A refusal in the status line; ERR READONLY also makes the ui a viewer from then on.
  private func refused(_ reply: Reply, _ line: String) {
    guard case .error(let code, let message) = reply.status else { return }
    if code == "READONLY" {
      status.readonly = true
      status.message = TerminalUI.readOnly(line)
    } else {
      status.message = message.isEmpty ? "\(line): \(code)" : message
    }
  }

  /// The refusal a viewer shows for a change.
  private static func readOnly(_ line: String) -> String {
    "read-only: \(line) needs the control socket"
  }

  /// Asks the daemon for what the state needs: a section's items, or the whole view again.
  private func fulfil(_ needs: [LiveState.Need]) {
    guard let connection else { return }
    for need in needs {
      switch need {
      case .items(let id): connection.send("ITEMS \(id)", as: .items(id))
      case .resync:
        guard state.isSynced else { continue }
        state.awaitView()
        connection.send("VIEW", as: .view)
      }
    }
  }
}
