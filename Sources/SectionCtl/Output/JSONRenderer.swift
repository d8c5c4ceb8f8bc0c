import SectionClient

/// sectionctl's `--json` output: stable field names in a fixed order, snake_case, so scripts can use jq.
enum JSONRenderer {
  static func sections(_ sections: [ListedSection], revision: UInt64?) -> JSON {
    .object([("revision", number(revision)), ("sections", .array(sections.map { section($0) }))])
  }

  static func view(_ sections: [ListedSection], items: [ListedItem], revision: UInt64?) -> JSON {
    let itemsBySection = Dictionary(grouping: items, by: \.sectionIndex)
    let entries = sections.map { listed in
      let texts = listed.isOpen ? (itemsBySection[listed.index] ?? []).map { JSON.string($0.text) } : []
      return section(listed, extra: [("items", .array(texts))])
    }
    return .object([("revision", number(revision)), ("sections", .array(entries))])
  }

  static func items(_ items: [ListedItem], revision: UInt64?) -> JSON {
    let entries = items.map { item in
      JSON.object([
        ("section", integer(item.sectionIndex)), ("position", integer(item.position)),
        ("text", .string(item.text)),
      ])
    }
    return .object([("revision", number(revision)), ("items", .array(entries))])
  }

  static func mode(_ mode: Mode, revision: UInt64?) -> JSON {
    .object([("revision", number(revision)), ("mode", .string(mode.rawValue))])
  }

  static func revision(_ revision: UInt64?) -> JSON {
    .object([("revision", number(revision))])
  }

  /// `sectionctl reload --json`: the revision and the ids the reload dropped and added.
  /// `fleet_host`: the host the reload was sent to, when it is a fleet's (the list was
  /// replaced on every host); null otherwise.
  static func reload(dropped: [ListedSection], added: [ListedSection], revision: UInt64?, fleetHost: String?)
    -> JSON
  {
    .object([
      ("revision", number(revision)), ("dropped", .array(dropped.map { .string($0.id) })),
      ("added", .array(added.map { .string($0.id) })), ("fleet_host", fleetHost.map(JSON.string) ?? .null),
    ])
  }

  static func ping(socket: String, milliseconds: Double) -> JSON {
    .object([("socket", .string(socket)), ("milliseconds", .number(milliseconds))])
  }

  static func status(_ status: DaemonStatus) -> JSON {
    .object([
      ("daemon_version", .string(status.daemonVersion)),
      ("protocol", .string(status.protocolVersion)),
      ("socket", .string(status.socket)),
      ("revision", number(status.revision)),
      ("mode", .string(status.mode.rawValue)),
      ("sections", integer(status.sections.count)),
      ("open", integer(status.openSections.count)),
      ("open_ids", .array(status.openSections.map { .string($0.id) })),
      ("items", integer(status.itemCount)),
      ("visible_items", integer(status.visibleItemCount)),
      ("daemon", .string(status.kind.rawValue)),
      ("pid", fact(status.facts["pid"], number: true)),
      ("uid", fact(status.facts["uid"], number: true)),
      ("systemd", status.facts["systemd"].map { .bool($0 == "yes") } ?? .null),
      ("uptime_seconds", fact(status.facts["uptime"], number: true)),
      ("config", fact(status.facts["config"], number: false)),
      ("state", fact(status.facts["state"], number: false)),
      ("clients", fact(status.facts["clients"], number: true)),
      ("subscribers", fact(status.facts["subscribers"], number: true)),
      ("list", fact(status.facts["list"], number: false)),
      // What this connection may do (read, operate, edit): null on the read-only socket,
      // which does not say, and from a daemon older than the levels.
      ("access", fact(status.facts["access"], number: false)),
      ("fleet", fleet(status.facts)),
    ])
  }

  /// A fleet's host (`sectiond --etcd`): which host, through which member, how far behind, for
  /// how long etcd has not answered, and the revision applied; then every other `fleet-*` fact
  /// STATUS sent, by its name without `fleet-` and with `_` for `-` (`state`, `config`), so
  /// that a fact a newer daemon adds shows without a newer sectionctl. Null outside a fleet.
  private static func fleet(_ facts: [String: String]) -> JSON {
    guard facts["fleet-host"] != nil else { return .null }
    let named = [
      "fleet-host", "fleet-member", "fleet-behind", "fleet-stale-since", "fleet-error", "fleet-revision",
    ]
    let others = facts.keys.filter { $0.hasPrefix("fleet-") && !named.contains($0) }.sorted().map {
      (String($0.dropFirst("fleet-".count).map { $0 == "-" ? "_" : $0 }), fact(facts[$0], number: false))
    }
    return .object(
      [
        ("host", fact(facts["fleet-host"], number: false)),
        ("member", fact(facts["fleet-member"], number: false)),
        ("behind", fact(facts["fleet-behind"], number: true)),
        ("stale_seconds", fact(facts["fleet-stale-since"], number: true)),
        ("error", fact(facts["fleet-error"], number: false)),
        ("revision", fact(facts["fleet-revision"], number: true)),
      ] + others)
  }

  /// One STATUS fact: null when the daemon did not give it, or gave `-` (none).
  private static func fact(_ value: String?, number: Bool) -> JSON {
    guard let value, value != "-" else { return .null }
    guard number else { return .string(value) }
    return Int64(value).map { .integer($0) } ?? .null
  }

  /// `watch --json`: one object per event, told apart by `event`.
  static func event(_ event: Event) -> JSON {
    switch event {
    case .opened(let revision, let index, let id), .closed(let revision, let index, let id):
      let name = if case .opened = event { "opened" } else { "closed" }
      return .object([
        ("event", .string(name)), ("revision", number(revision)), ("index", integer(index)),
        ("id", .string(id)),
      ])
    case .mode(let revision, let mode):
      return .object([
        ("event", .string("mode")), ("revision", number(revision)), ("mode", .string(mode.rawValue)),
      ])
    case .state(let snapshot):
      return .object([
        ("event", .string("state")), ("revision", number(snapshot.revision)),
        ("mode", .string(snapshot.mode.rawValue)),
        ("open", .array(snapshot.openIDs.map { .string($0) })),
      ])
    case .reload(let revision):
      return .object([("event", .string("reload")), ("revision", number(revision))])
    case .edited(let edit, let revision, let index, let id):
      return .object([
        ("event", .string(edit.rawValue)), ("revision", number(revision)), ("index", integer(index)),
        ("id", .string(id)),
      ])
    case .moved(let revision, let from, let to, let id):
      return .object([
        ("event", .string("moved")), ("revision", number(revision)), ("from", integer(from)),
        ("to", integer(to)), ("id", .string(id)),
      ])
    case .items(let revision, let index, let id, let count):
      return .object([
        ("event", .string("items")), ("revision", number(revision)), ("index", integer(index)),
        ("id", .string(id)), ("count", integer(count)),
      ])
    case .bye(let reason):
      return .object([("event", .string("bye")), ("reason", .string(reason))])
    case .other(let text):
      return .object([("event", .string("other")), ("line", .string(text))])
    }
  }

  private static func section(_ section: ListedSection, extra: [(String, JSON)] = []) -> JSON {
    .object(
      [
        ("index", integer(section.index)), ("id", .string(section.id)), ("title", .string(section.title)),
        ("open", .bool(section.isOpen)), ("item_count", integer(section.itemCount)),
      ] + extra)
  }

  /// `sectionctl lists --json`: {"lists": [{"name", "scope", "socket", "sections", "open",
  /// "revision", "clients", "error"}]}; name null for the unnamed list, the counts null for a
  /// list that could not be asked (error says why), clients null when only the read-only
  /// socket answered.
  static func lists(_ rows: [Lists.Row]) -> JSON {
    let entries = rows.map { row -> JSON in
      let status = try? row.status.get()
      var error: JSON = .null
      if case .failure(let failure) = row.status { error = .string(failure.diagnostic) }
      return .object([
        ("name", row.found.name.map { .string($0.rawValue) } ?? .null),
        ("scope", .string(row.found.kind.rawValue)),
        ("socket", .string(status?.socket ?? row.found.control)),
        ("sections", status.map { integer($0.sections.count) } ?? .null),
        ("open", status.map { integer($0.openSections.count) } ?? .null),
        ("revision", number(status?.revision)),
        ("clients", fact(status?.facts["clients"], number: true)),
        ("error", error),
      ])
    }
    return .object([("lists", .array(entries))])
  }

  private static func integer(_ value: Int) -> JSON { .integer(Int64(value)) }

  /// Revisions are unsigned 64-bit; JSON readers hold integers as signed, so clamp rather than wrap.
  private static func number(_ value: UInt64?) -> JSON {
    guard let value else { return .null }
    return .integer(Int64(clamping: value))
  }
}
