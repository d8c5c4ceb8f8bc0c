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
