import SectionClient

/// `sectionctl export`: the list as clients shaped it, as a config file `sectiond --config`
/// accepts, read at one revision.
struct Exporter {
  let client: Client

  /// The config text: the mode, then one section per line, so that it reads and diffs well.
  func config() throws(ClientError) -> String {
    let (mode, sections, items) = try snapshot()
    let entries = sections.map { section in
      JSON.object([
        ("id", .string(section.id)), ("title", .string(section.title)), ("open", .bool(section.isOpen)),
        ("items", .array(items[section.index, default: []].map { .string($0) })),
      ]).serialized()
    }
    let list = entries.isEmpty ? "[]" : "[\n    " + entries.joined(separator: ",\n    ") + "\n  ]"
    return "{\n  \"mode\": \(JSON.string(mode.rawValue).serialized()),\n  \"sections\": \(list)\n}\n"
  }

  /// MODE and LIST, then every section's ITEMS with LIST again, in two round trips; read again
  /// when another client changed something in between, so that everything is of one revision.
  private func snapshot() throws(ClientError) -> (Mode, [ListedSection], [Int: [String]]) {
    for _ in 0..<20 {
      let first = try client.replies(to: [Request<Mode>.mode.asReply, Request<Listing>.list.asReply])
      let mode = try Request<Mode>.mode.value(from: [first[0]])
      let list = try first[1].succeeded()
      let second = try client.replies(
        to: list.sections.map { Request<[ListedItem]>.items(String($0.index)).asReply } + [
          Request<Mode>.mode.asReply
        ])
      let revisions = [first[0].revision, list.revision] + second.map { try? $0.succeeded().revision }
      guard revisions.allSatisfy({ $0 != nil && $0 == list.revision }) else { continue }
      var items: [Int: [String]] = [:]
      for reply in second.dropLast() {
        for item in try reply.succeeded().items { items[item.sectionIndex, default: []].append(item.text) }
      }
      return (mode, list.sections, items)
    }
    throw .daemon(code: "BUSY", message: "the list kept changing while it was read; try again")
  }
}

extension CommandSpec {
  /// `sectionctl export`.
  static let `export` = CommandSpec(
    usage: ["export > sections.json"],
    summary: "print the list as it is now as a config file sectiond --config accepts",
    details: """
      Prints {"mode", "sections": [{"id", "title", "open", "items"}]}: the list as clients shaped
      it, with the mode and the open sections as they are now, which 'sectiond --config' accepts.
      To make it the config: write it over the config file and reload ('sectionctl reload');
      sections clients edited keep their edits, now the same as the config's (see sectionctl(1)).
      """,
    example: "sectionctl export > sections.json && sectiond --check-config --config sections.json",
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .export)
      return .export
    },
    run: { (runner) throws(CommandLineError) in
      try runner.lifting { () throws(ClientError) in
        // JSON text: C1, bidi and invisible characters as \\u escapes, as every JSON output.
        runner.output.print(VisibleText.escape(json: try Exporter(client: runner.connect()).config()))
        return .success
      }
    })
}
