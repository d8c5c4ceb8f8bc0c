// libFuzzer target: the config loader, `Config.parse`, and the JSON parser under it.
//
// Any input must either be refused with a message that names the file, or give a config that
// keeps every rule the loader promises and that the model and the service can serve.
// Built outside SwiftPM by Tests/Build/fuzz.sh, together with Sources/SectionCore as one module;
// FuzzEntry.swift calls it.

func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  if let document = try? JSON.parse(bytes) {
    // The serialization is JSON again, and the same document.
    let text = document.serialized()
    guard let again = try? JSON.parse(Array(text.utf8)) else { fatalError("serialized JSON does not parse") }
    check(again == document, "JSON changes through serialization")
  }
  let config: Config
  do {
    config = try Config.parse(bytes, source: "fuzz.json")
  } catch {
    check(error.description.hasPrefix("fuzz.json: "), "a config error does not name the file")
    return 0
  }
  // An empty list is a config: clients may empty the list at runtime, so may the config.
  check(Set(config.sections.map(\.id)).count == config.sections.count, "duplicate ids")
  for section in config.sections {
    let id = Array(section.id.utf8)
    check(!id.isEmpty && id.lowercased() != "all", "empty or reserved id")
    check(!id.allSatisfy { (0x30...0x39).contains($0) }, "all-digit id")
    check(
      id.allSatisfy { $0.isLetterOrDigit || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }, "id with a separator")
    for text in [section.title] + section.items {
      check(!text.isEmpty && !text.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "bad title or item")
    }
  }
  if config.mode == .exclusive {
    check(config.sections.filter(\.initiallyOpen).count <= 1, "exclusive with two open")
  }
  // Served: LIST shows every section, ITEMS every item, and RELOAD from the demo config takes it.
  let service = SectionService(model: SectionModel(config: config))
  var reply = OutputQueue()
  var batch: Batch?
  var session = Session(access: .control, author: Author(via: .socket, uid: nil, pid: nil))
  check(
    service.handle(Array("LIST".utf8)[...], session: &session, batch: &batch, reply: &reply) == .replied,
    "LIST")
  check(reply.unsentBytes.split(separator: 0x0A).count == config.sections.count + 1, "LIST lines")
  for section in config.sections {
    reply = OutputQueue()
    let line = Array("ITEMS \(section.id)".utf8)[...]
    check(
      service.handle(line, session: &session, batch: &batch, reply: &reply) == .replied, "ITEMS \(section.id)"
    )
    check(reply.unsentBytes.split(separator: 0x0A).count == section.items.count + 1, "ITEMS lines")
  }
  let demo = SectionService(model: SectionModel(config: .demo))
  reply = OutputQueue()
  if (try? demo.reload(config, by: session.author, reply: &reply)) == .changed { _ = demo.commit() }
  check(Array(demo.model.sections) == config.sections, "RELOAD did not take the config")
  return 0
}

extension UInt8 {
  fileprivate var isLetterOrDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
  }
}

extension [UInt8] {
  fileprivate func lowercased() -> String { String(decoding: self, as: UTF8.self).lowercased() }
}
