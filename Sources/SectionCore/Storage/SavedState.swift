import SectionShared
/// What the state file holds: enough to restart exactly where the daemon stopped.
///
/// ```json
/// {"format":2,"revision":7,"mode":"multi","sections":{"first":3,"news":null},
///  "list":[{"id":"first","title":"First","items":["a"],"origin":"config"},
///          {"id":"news","title":"News","items":[],"origin":"client"}],
///  "deleted":["second"],"edited":["first"]}
/// ```
/// Each known section maps to the revision at which it was opened, or null when closed.
/// `list` is the list as clients shaped it, `deleted` the config sections they deleted and
/// `edited` those they changed (see `SectionModel.merged`). Format 1 files, written before runtime edits, have neither:
/// their list is the config's.
public struct SavedState: Equatable, Sendable {
  public static let format: Int64 = 2

  public var revision: UInt64
  public var mode: Mode
  /// Open sections with the revision they opened at; closed sections with nil.
  public var sections: [String: UInt64?]
  /// The sections themselves; nil in a format 1 file.
  public var list: [Section]?
  public var deleted: Set<String>
  public var edited: Set<String>
  /// The history's lines, oldest first, without `history` and LF (see `History`); an older
  /// file has none.
  public var history: [[UInt8]] = []

  public init(
    revision: UInt64, mode: Mode, sections: [String: UInt64?], list: [Section]? = nil,
    deleted: Set<String> = [], edited: Set<String> = []
  ) {
    self.revision = revision
    self.mode = mode
    self.sections = sections
    self.list = list
    self.deleted = deleted
    self.edited = edited
  }

  public init(_ model: SectionModel) {
    revision = model.revision
    mode = model.mode
    sections = Dictionary(uniqueKeysWithValues: zip(model.sections.map(\.id), model.openedAt))
    // As the file holds them: whether a section starts open is the config's business.
    list = model.sections.map { Section(id: $0.id, title: $0.title, items: $0.items, origin: $0.origin) }
    deleted = model.deletedConfigIDs
    edited = model.editedConfigIDs
  }

  /// The file's bytes.
  public static func encode(_ model: SectionModel) -> [UInt8] {
    var bytes: [UInt8] = []
    encode(model, into: &bytes)
    return bytes
  }

  /// Renders the file into `buffer`, replacing its contents. Sections are written in list order
  /// so diffs of the file stay readable. It is written whole only when the journal is
  /// compacted (see `Journal`).
  public static func encode(_ model: SectionModel, into buffer: inout [UInt8]) {
    buffer.removeAll(keepingCapacity: true)
    buffer.append("{\"format\":")
    buffer.appendDecimal(UInt64(SavedState.format))
    buffer.append(",\"revision\":")
    buffer.appendDecimal(model.revision)
    buffer.append(",\"mode\":\"")
    buffer.append(model.mode.word)
    buffer.append("\",\"sections\":{")
    for (index, (section, opened)) in zip(model.sections, model.openedAt).enumerated() {
      if index > 0 { buffer.append(",") }
      JSON.appendString(section.id, to: &buffer)
      buffer.append(":")
      if let opened { buffer.appendDecimal(opened) } else { buffer.append("null") }
    }
    buffer.append("},\n\"list\":[")
    for (index, section) in model.sections.enumerated() {
      buffer.append(index > 0 ? ",\n{\"id\":" : "\n{\"id\":")
      JSON.appendString(section.id, to: &buffer)
      buffer.append(",\"title\":")
      JSON.appendString(section.title, to: &buffer)
      buffer.append(",\"items\":[")
      for (position, item) in section.items.enumerated() {
        if position > 0 { buffer.append(",") }
        JSON.appendString(item, to: &buffer)
      }
      buffer.append("],\"origin\":\"")
      buffer.append(utf8: section.origin.rawValue)
      buffer.append("\"}")
    }
    buffer.append("],\n\"deleted\":")
    appendIDs(model.deletedConfigIDs, to: &buffer)
    buffer.append(",\"edited\":")
    appendIDs(model.editedConfigIDs, to: &buffer)
    buffer.append("}\n")
  }

  /// Adds `"history":[...]` to the file `encode` rendered into `buffer`: the lines of the
  /// history (`lines`, each ended by LF), as JSON strings. An older sectiond reads the file and
  /// ignores them. Taken as one buffer, not split: splitting a thousand lines and making a
  /// String of each cost a compaction 2 million instructions (callgrind).
  public static func appendHistory(lines: [UInt8], to buffer: inout [UInt8]) {
    guard !lines.isEmpty, buffer.last == 0x0A else { return }
    buffer.removeLast(2)
    buffer.append(",\n\"history\":[")
    lines.withUnsafeBufferPointer { bytes in
      var start = 0
      for end in bytes.indices where bytes[end] == 0x0A {
        if start > 0 { buffer.append(",\n") }
        JSON.appendString(utf8: UnsafeBufferPointer(rebasing: bytes[start..<end]), to: &buffer)
        start = end + 1
      }
    }
    buffer.append("]}\n")
  }

  private static func appendIDs(_ ids: Set<String>, to buffer: inout [UInt8]) {
    buffer.append("[")
    for (index, id) in ids.sorted().enumerated() {
      if index > 0 { buffer.append(",") }
      JSON.appendString(id, to: &buffer)
    }
    buffer.append("]")
  }

  /// The format of a state file written by a newer sectiond than this one (nil for any other
  /// file): such a file is not damaged, and must be neither read nor set aside, lest a downgrade
  /// lose the state. Every version writes `{"format":N` first, so only that is read: asked of
  /// a file `decode` refused, which may be large and anything but JSON.
  public static func newerFormat(in bytes: some Collection<UInt8>) -> Int64? {
    let prefix = Array(bytes.prefix(40).filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 })
    let head = Array("{\"format\":".utf8)
    guard prefix.starts(with: head) else { return nil }
    let digits = prefix.dropFirst(head.count).prefix { (0x30...0x39).contains($0) }
    guard let format = Int64(String(decoding: digits, as: UTF8.self)), format > SavedState.format else {
      return nil
    }
    return format
  }

  /// The largest state file a list within `limits` can make, so that the limits can be
  /// checked against what a start reads back. Titles and items cost at most two bytes a byte
  /// of text (JSON escapes `"` and `\\`; control characters are refused), ids are written
  /// twice unescaped (the "sections" map and the list); each item adds its quotes and comma,
  /// each section its keys and its opened-at revision; the ids of config sections in
  /// "deleted" and "edited" are at most the config's, which is read up to 4 MiB. 45.7 MB
  /// with the default limits.
  public static func maximumSize(for limits: EditLimits) -> Int {
    let perSection = #"{"id":"","title":"","items":[],"origin":"client"},\n"":9223372036854775807,"#.utf8
      .count
    // Every item holds a byte of text at least, every section two (its id and title).
    let text = limits.textBytes
    let (items, sections) = (min(limits.items, text), min(limits.sections, text / 2))
    let (each, overflow) = [2 * text, 3 * items, perSection * sections, 2 * Config.readLimit, 256]
      .reduce((0, false)) { sum, part in
        let (total, over) = sum.0.addingReportingOverflow(part)
        return (total, sum.1 || over)
      }
    return overflow ? .max : each
  }

  /// Reads a state file's bytes; anything unexpected is an error, so a damaged file is set aside
  /// rather than half-trusted.
  public static func decode(_ bytes: some Collection<UInt8>) throws(ConfigError) -> SavedState {
    let document: JSON
    do {
      document = try JSON.parse(bytes)
    } catch {
      throw ConfigError("not valid JSON: \(error)")
    }
    guard case .integer(let format) = document["format"] ?? .null, format == 1 || format == SavedState.format
    else {
      throw ConfigError("unknown format; expected \"format\": 1 or \(SavedState.format)")
    }
    guard case .integer(let revision) = document["revision"] ?? .null, revision >= 0 else {
      throw ConfigError("\"revision\" must be a whole number from 0 to \(SectionModel.maxRevision)")
    }
    guard case .string(let modeName) = document["mode"] ?? .null, let mode = Mode(rawValue: modeName) else {
      throw ConfigError("\"mode\" is missing or unknown")
    }
    guard case .object(let members) = document["sections"] ?? .null else {
      throw ConfigError("\"sections\" is missing")
    }
    var sections: [String: UInt64?] = [:]
    for (id, value) in members {
      switch value {
      case .null: sections[id] = .some(nil)
      case .integer(let opened) where opened >= 0 && opened <= revision: sections[id] = UInt64(opened)
      default: throw ConfigError("section \"\(id)\" has an invalid value \(value.serialized())")
      }
    }
    var state = SavedState(revision: UInt64(revision), mode: mode, sections: sections)
    if format > 1 {
      state.list = try decodeList(document["list"])
      state.deleted = try decodeIDs(document["deleted"], "deleted")
      state.edited = try decodeIDs(document["edited"], "edited")
      if case .array(let lines)? = document["history"] {
        // Each is a line HISTORY sends as it is: one line of a request's characters.
        for (index, line) in lines.enumerated() {
          guard case .string(let text) = line, Request.characterProblem(Array(text.utf8)[...]) == nil else {
            throw ConfigError("\"history\" line \(index + 1) is not one line of text")
          }
          state.history.append(Array(text.utf8))
        }
      }
    }
    return state
  }

  private static func decodeList(_ value: JSON?) throws(ConfigError) -> [Section] {
    guard case .array(let entries) = value ?? .null else { throw ConfigError("\"list\" is missing") }
    var list: [Section] = []
    var seen = Set<String>()
    for (index, entry) in entries.enumerated() {
      guard case .string(let id) = entry["id"] ?? .null, Section.idProblem(id) == nil,
        seen.insert(id).inserted,
        case .string(let title) = entry["title"] ?? .null,
        Section.textProblem(title, allowingBidi: true) == nil,
        case .array(let values) = entry["items"] ?? .null,
        case .string(let originName) = entry["origin"] ?? .null,
        let origin = Section.Origin(rawValue: originName)
      else { throw ConfigError("\"list\" entry \(index) is damaged") }
      var items: [String] = []
      for value in values {
        guard case .string(let item) = value, Section.textProblem(item, allowingBidi: true) == nil else {
          throw ConfigError("\"list\" entry \(index) has a damaged item")
        }
        items.append(item)
      }
      list.append(Section(id: id, title: title, items: items, origin: origin))
    }
    return list
  }

  private static func decodeIDs(_ value: JSON?, _ name: String) throws(ConfigError) -> Set<String> {
    guard case .array(let entries) = value ?? .null else { throw ConfigError("\"\(name)\" is missing") }
    var ids = Set<String>()
    for entry in entries {
      guard case .string(let id) = entry else { throw ConfigError("\"\(name)\" holds a non-string") }
      ids.insert(id)
    }
    return ids
  }
}
