import SectionShared
/// The sections to serve and the starting mode, as read from the config file.
public struct Config: Equatable, Sendable {
  public var mode: Mode
  public var sections: [Section]

  public init(mode: Mode, sections: [Section]) {
    self.mode = mode
    self.sections = sections
  }

  /// The largest config file the daemon reads.
  public static let readLimit = 4 << 20

  /// Bytes of text of its sections (`Section.textBytes`).
  public var textBytes: Int { sections.reduce(0) { $0 + $1.textBytes } }

  /// Refuses a config whose sections hold more text than `limits` lets the list hold.
  public func check(_ limits: EditLimits, source: String) throws(ConfigError) {
    guard textBytes > limits.textBytes else { return }
    throw ConfigError(
      "\(source): the sections hold \(textBytes) bytes of ids, titles and items; at most \(limits.textBytes) (sectiond --max-text-bytes)"
    )
  }

  /// What a newcomer sees with no config file at all.
  public static let demo = Config(
    mode: .multi,
    sections: [
      Section(id: "first", title: "First", items: [1, 2, 3, 4, 5, 6, 1, 2, 3, 4].map(String.init)),
      Section(id: "second", title: "Second", items: (1...8).map(String.init)),
      Section(id: "third", title: "Third", items: (1...6).map(String.init)),
    ])
}

/// A config (or another file the daemon reads, such as the access rules) that breaks a rule:
/// the message names the file, the place and the rule.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
  public let description: String
  package init(_ description: String) { self.description = description }
}

extension Config {
  /// Parses and validates a config document. `source` (usually the file's path) starts every message.
  public static func parse(_ bytes: some Collection<UInt8>, source: String) throws(ConfigError) -> Config {
    let document: JSON
    do {
      document = try JSON.parse(bytes)
    } catch {
      throw ConfigError("\(source): not valid JSON: \(error)")
    }
    guard case .object(let members) = document else {
      throw ConfigError(
        "\(source): the top level must be an object with \"sections\", found \(document.kind)")
    }
    try rejectUnknownKeys(members, known: ["mode", "sections"], at: "\(source): top level")

    var mode = Mode.multi
    if let value = document["mode"] {
      guard case .string(let name) = value, let parsed = Mode(rawValue: name.lowercased()) else {
        throw ConfigError(
          "\(source): \"mode\" must be \"multi\" or \"exclusive\", found \(value.serialized())")
      }
      mode = parsed
    }
    guard case .array(let entries) = document["sections"] ?? .null else {
      throw ConfigError("\(source): \"sections\" must be an array of sections")
    }
    var sections: [Section] = []
    var seen: [String: Int] = [:]
    for (index, entry) in entries.enumerated() {
      let section = try parseSection(entry, at: "\(source): section \(index)")
      let place = "\(source): section \(index) (\"\(section.title)\")"
      if let first = seen[section.id] {
        throw ConfigError(
          "\(place): id \"\(section.id)\" is already used by section \(first); ids must be unique")
      }
      seen[section.id] = index
      sections.append(section)
    }
    let open = sections.indices.filter { sections[$0].initiallyOpen }
    if mode == .exclusive, open.count > 1 {
      let (first, second) = (open[0], open[1])
      throw ConfigError(
        "\(source): section \(second) (\"\(sections[second].title)\"): exclusive mode opens at most one section, but section \(first) (\"\(sections[first].title)\") has \"open\": true too"
      )
    }
    return Config(mode: mode, sections: sections)
  }

  private static func parseSection(_ entry: JSON, at place: String) throws(ConfigError) -> Section {
    guard case .object(let members) = entry else {
      throw ConfigError("\(place): must be an object with \"title\" and \"items\", found \(entry.kind)")
    }
    try rejectUnknownKeys(members, known: ["id", "title", "items", "open"], at: place)
    guard case .string(let title) = entry["title"] ?? .null else {
      throw ConfigError("\(place): \"title\" is missing or not a string")
    }
    try checkText(title, what: "title", at: place)
    let named = "\(place) (\"\(title)\")"

    let id: String
    switch entry["id"] {
    case nil: id = Section.derivedID(fromTitle: title)
    case .string(let given)?: id = given
    case let other?: throw ConfigError("\(named): \"id\" must be a string, found \(other.kind)")
    }
    try checkID(id, derived: entry["id"] == nil, at: named)

    guard case .array(let values) = entry["items"] ?? .array([]) else {
      throw ConfigError("\(named): \"items\" must be an array of strings")
    }
    var items: [String] = []
    for (position, value) in values.enumerated() {
      guard case .string(let item) = value else {
        throw ConfigError("\(named): item \(position) must be a string, found \(value.kind)")
      }
      try checkText(item, what: "item \(position)", at: named)
      items.append(item)
    }
    var open = false
    switch entry["open"] {
    case nil: break
    case .bool(let value)?: open = value
    case let other?: throw ConfigError("\(named): \"open\" must be true or false, found \(other.kind)")
    }
    return Section(id: id, title: title, items: items, initiallyOpen: open)
  }

  private static func checkID(_ id: String, derived: Bool, at place: String) throws(ConfigError) {
    if let problem = Section.idProblem(id) {
      throw ConfigError("\(place): \(derived ? "the id derived from the title" : "id") \(problem)")
    }
  }

  private static func checkText(_ text: String, what: String, at place: String) throws(ConfigError) {
    if let problem = Section.textProblem(text) { throw ConfigError("\(place): \(what) \(problem)") }
  }

  private static func rejectUnknownKeys(
    _ members: [(String, JSON)], known: [String], at place: String
  ) throws(ConfigError) {
    var seen = Set<String>()
    for (key, _) in members {
      guard known.contains(key) else {
        throw ConfigError("\(place): unknown key \"\(key)\" (known: \(known.joined(separator: ", ")))")
      }
      guard seen.insert(key).inserted else { throw ConfigError("\(place): key \"\(key)\" appears twice") }
    }
  }
}
