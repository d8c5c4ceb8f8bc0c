import SectionClient

/// sectionctl's output for people: every function returns whole lines, each ending in LF.
/// What the daemon sent (ids, titles, items, versions, reasons) goes through `show`, so that
/// no control sequence in it reaches the terminal (see `VisibleText`).
enum TextRenderer {
  private static func show(_ text: String) -> String { VisibleText.escape(text) }

  /// `sectionctl list`: aligned columns under a header.
  static func table(_ sections: [ListedSection], style: Style) -> String {
    let header = ["INDEX", "ID", "STATE", "ITEMS", "TITLE"]
    let rows = sections.map {
      [String($0.index), show($0.id), $0.isOpen ? "open" : "closed", String($0.itemCount), show($0.title)]
    }
    return columns(header, rows, style: style) { column, cell in column == 2 && cell == "open" }
  }

  /// Aligned columns under a bold header, the last column as it is; a cell `green` picks is green.
  private static func columns(
    _ header: [String], _ rows: [[String]], style: Style, green: (Int, String) -> Bool
  ) -> String {
    let widths = (0..<header.count - 1).map { column in
      ([header] + rows).map { $0[column].count }.max() ?? 0
    }
    func line(_ cells: [String], isHeader: Bool) -> String {
      var text = ""
      for (column, cell) in cells.enumerated() {
        let padded =
          column < widths.count ? cell + String(repeating: " ", count: widths[column] - cell.count + 2) : cell
        text += !isHeader && green(column, cell) ? style.green(padded) : padded
      }
      return (isHeader ? style.bold(text) : text) + "\n"
    }
    return line(header, isHeader: true) + rows.map { line($0, isHeader: false) }.joined()
  }

  /// `sectionctl lists`: a row per list, `-` for the unnamed list's name and for what a list
  /// did not tell (clients, on its read-only socket) or could not (the last column says why).
  /// `looked`: the directories searched, which a search that found nothing names.
  static func lists(_ rows: [Lists.Row], looked: [String], style: Style) -> String {
    guard !rows.isEmpty else {
      return "no lists: no sectiond sockets in \(looked.map(show).joined(separator: " nor in "))\n"
    }
    let header = ["NAME", "SCOPE", "SECTIONS", "OPEN", "REVISION", "CLIENTS", "SOCKET"]
    let cells = rows.map { row -> [String] in
      let start = [row.found.name?.rawValue ?? "-", row.found.kind.rawValue]
      switch row.status {
      case .success(let status):
        return start + [
          String(status.sections.count), String(status.openSections.count), String(status.revision),
          status.facts["clients"].map(show) ?? "-", show(status.socket),
        ]
      case .failure(let error):
        return start + ["-", "-", "-", "-", state(of: error)]
      }
    }
    // Why a list could not be asked, once below the table: a hint is a sentence, not a cell.
    let notes = rows.compactMap { row -> String? in
      guard case .failure(let error) = row.status else { return nil }
      return "\(row.found.name?.rawValue ?? "-"): \(show(error.message))\n"
    }
    return columns(header, cells, style: style) { _, _ in false }
      + (notes.isEmpty ? "" : "\n" + notes.joined())
  }

  /// A word for the SOCKET cell of a list that could not be asked (`lists`); the note below
  /// the table says the rest.
  static func state(of error: ClientError) -> String {
    switch error {
    case .cannotConnect(_, .noEntry), .cannotConnect(_, .connectionRefused), .noDaemon: "stopped"
    case .cannotConnect(_, .permissionDenied): "denied"
    case .timedOut: "no answer"
    case .untrustedSocket: "untrusted"
    case .connectionLost: "closed"
    case .notASocket: "not a socket"
    default: "failed"
    }
  }

  /// `sectionctl reload`: a line for each section the reload took away (an open one says so:
  /// its open state went with it) or brought, then the count and the revision.
  /// `fleetHost`: the fleet host the reload was sent to, whose config now is the list of every
  /// host (docs/FLEET.md, "Reloading the list"); nil outside a fleet.
  static func reload(
    dropped: [ListedSection], added: [ListedSection], count: Int, revision: UInt64?, fleetHost: String? = nil
  ) -> String {
    // "section" between the verb and the id: a section whose id is `added` read "added added".
    let gone = dropped.map {
      "dropped section \(show($0.id)) (\(show($0.title)))\($0.isOpen ? ", which was open" : "")\n"
    }
    let came = added.map { "added section \(show($0.id)) (\(show($0.title)))\n" }
    let unchanged = dropped.isEmpty && added.isEmpty ? ", the same sections" : ""
    return (gone + came).joined()
      + "reloaded the config: \(count) section\(count == 1 ? "" : "s")\(unchanged), revision \(revision.map(String.init) ?? "-")\n"
      + (fleetHost.map {
        "in a fleet: every host now serves \(show($0))'s config, not only \(show($0)) (sectionctl status: fleet-config)\n"
      } ?? "")
  }

  /// `sectionctl view`: a header per section with its marker, the items of open sections under it.
  static func accordion(_ sections: [ListedSection], items: [ListedItem], style: Style) -> String {
    let itemsBySection = Dictionary(grouping: items, by: \.sectionIndex)
    var text = ""
    for section in sections {
      let marker = section.isOpen ? style.green(style.marker(open: true)) : style.marker(open: false)
      let count = counted(section.itemCount, "item")
      text +=
        "\(marker) \(style.bold(show(section.title)))  \(style.dim("(\(section.index) \(show(section.id)), \(count))"))\n"
      for item in itemsBySection[section.index] ?? [] where section.isOpen {
        text += "    \(show(item.text))\n"
      }
    }
    return text
  }

  /// `sectionctl items`: the texts, one per line, ready for `while read`.
  static func items(_ items: [ListedItem]) -> String {
    items.map { show($0.text) + "\n" }.joined()
  }

  /// `sectionctl open|close|toggle`: the sections after the change, as table rows without the header.
  static func changed(_ sections: [ListedSection], style: Style) -> String {
    guard !sections.isEmpty else { return "" }
    return table(sections, style: style).split(separator: "\n", omittingEmptySubsequences: false)
      .dropFirst().joined(separator: "\n")
  }

  static func status(_ status: DaemonStatus) -> String {
    let open = status.openSections
    let openNames = open.isEmpty ? "" : " (\(open.map { show($0.id) }.joined(separator: ", ")))"
    let facts = status.facts.mapValues(show)
    let whose =
      switch status.kind {
      case .system: "the system daemon"
      case .user: "your own daemon"
      case .given: facts["uid"] == "0" ? "a daemon run by root" : "the daemon named"
      }
    var process = ""
    if let pid = facts["pid"] { process += ", pid \(pid)" }
    if let uid = facts["uid"] { process += ", uid \(uid)" }
    if facts["systemd"] == "yes" { process += ", under systemd" }
    var text = """
      daemon:    sectiond \(show(status.daemonVersion)), protocol \(show(status.protocolVersion))\(process)
      socket:    \(show(status.socket)) (\(whose))

      """
    // What this connection may do (the control socket says; the read-only socket is read).
    if let access = facts["access"] { text += "access:    \(access)\n" }
    if let list = facts["list"], list != "-" { text += "list:      \(list)\n" }
    if let uptime = facts["uptime"].flatMap({ UInt64($0) }) { text += "uptime:    \(duration(uptime))\n" }
    if let config = facts["config"] { text += "config:    \(config == "-" ? "built-in demo set" : config)\n" }
    if let state = facts["state"] { text += "state:     \(state == "-" ? "in memory only" : state)\n" }
    if let clients = facts["clients"], let subscribers = facts["subscribers"] {
      text += "clients:   \(clients) (this one included), \(subscribers) subscribed\n"
    }
    text += fleet(facts)
    return text + """
      revision:  \(status.revision)
      mode:      \(status.mode.rawValue)
      sections:  \(status.sections.count), \(open.count) open\(openNames)
      items:     \(status.itemCount), \(status.visibleItemCount) visible

      """
  }

  /// A fleet host's `fleet-*` facts, every one STATUS sent, by its name there (docs/FLEET.md
  /// names them so): those a person looks for first in their order, then any others, so that
  /// a fact a newer daemon adds shows without a newer sectionctl.
  static func fleet(_ facts: [String: String]) -> String {
    let known = fleetOrder.filter { facts[$0] != nil }
    let others = facts.keys.filter { $0.hasPrefix("fleet-") && !fleetOrder.contains($0) }.sorted()
    let keys = known + others
    let width = (keys.map(\.count).max() ?? 0) + 3
    return keys.map { key in
      key + ":" + String(repeating: " ", count: width - key.count - 1) + (facts[key] ?? "") + "\n"
    }.joined()
  }

  static let fleetOrder = [
    "fleet-host", "fleet-prefix", "fleet-id", "fleet-state", "fleet-member", "fleet-revision", "fleet-behind",
    "fleet-stale-since", "fleet-config", "fleet-error",
  ]

  /// Seconds as a person reads them: `42s`, `3m 5s`, `2h 0m`, `3d 4h`.
  static func duration(_ seconds: UInt64) -> String {
    let (days, hours, minutes) = (seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60)
    if days > 0 { return "\(days)d \(hours)h" }
    if seconds >= 3600 { return "\(seconds / 3600)h \(minutes)m" }
    if seconds >= 60 { return "\(minutes)m \(seconds % 60)s" }
    return "\(seconds)s"
  }

  /// `sectionctl watch`: one line per event, the event's words without the `!`, so that
  /// `while read -r event rev rest` splits it.
  static func event(_ event: Event) -> String {
    show(rawEvent(event)) + "\n"
  }

  /// The event's words before escaping: everything but the numbers and names came from the daemon.
  private static func rawEvent(_ event: Event) -> String {
    switch event {
    case .opened(let revision, let index, let id): "opened \(revision) \(index) \(id)"
    case .closed(let revision, let index, let id): "closed \(revision) \(index) \(id)"
    case .mode(let revision, let mode): "mode \(revision) \(mode.rawValue)"
    case .state(let snapshot):
      "state \(snapshot.revision) \(snapshot.mode.rawValue) "
        + (snapshot.openIDs.isEmpty ? "-" : snapshot.openIDs.joined(separator: ","))
    case .reload(let revision): "reload \(revision)"
    case .edited(let edit, let revision, let index, let id): "\(edit.rawValue) \(revision) \(index) \(id)"
    case .moved(let revision, let from, let to, let id): "moved \(revision) \(from) \(to) \(id)"
    case .items(let revision, let index, let id, let count): "items \(revision) \(index) \(id) \(count)"
    case .bye(let reason): "bye \(reason)"
    case .other(let text): text
    }
  }
}
