/// What the state file holds: enough to restart exactly where the daemon stopped.
///
/// ```json
/// {"format":1,"revision":7,"mode":"multi","sections":{"first":3,"second":null}}
/// ```
/// Each known section maps to the revision at which it was opened, or null when closed.
public struct SavedState: Equatable, Sendable {
  public static let format: Int64 = 1

  public var revision: UInt64
  public var mode: Mode
  /// Open sections with the revision they opened at; closed sections with nil.
  public var sections: [String: UInt64?]

  public init(revision: UInt64, mode: Mode, sections: [String: UInt64?]) {
    self.revision = revision
    self.mode = mode
    self.sections = sections
  }

  public init(_ model: SectionModel) {
    revision = model.revision
    mode = model.mode
    sections = Dictionary(uniqueKeysWithValues: zip(model.sections.map(\.id), model.openedAt))
  }

  /// The file's bytes. Sections are written in list order so diffs of the file stay readable.
  public static func encode(_ model: SectionModel) -> [UInt8] {
    var bytes: [UInt8] = []
    encode(model, into: &bytes)
    return bytes
  }

  /// Renders the state file into `buffer` (replacing its contents), straight to bytes:
  /// this runs once per group of changes, on the path of every acknowledged change.
  public static func encode(_ model: SectionModel, into buffer: inout [UInt8]) {
    buffer.removeAll(keepingCapacity: true)
    buffer.append("{\"format\":")
    buffer.appendDecimal(UInt64(format))
    buffer.append(",\"revision\":")
    buffer.appendDecimal(model.revision)
    buffer.append(",\"mode\":\"")
    buffer.append(contentsOf: model.mode.bytes)
    buffer.append("\",\"sections\":{")
    for index in model.sections.indices {
      if index > 0 { buffer.append(",") }
      JSON.appendString(model.sections[index].id, to: &buffer)
      buffer.append(":")
      if let opened = model.openedAt[index] { buffer.appendDecimal(opened) } else { buffer.append("null") }
    }
    buffer.append("}}\n")
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
    guard case .integer(let format) = document["format"] ?? .null, format == SavedState.format else {
      throw ConfigError("unknown format; expected \"format\": \(SavedState.format)")
    }
    guard case .integer(let revision) = document["revision"] ?? .null, revision >= 0 else {
      throw ConfigError("\"revision\" is missing or negative")
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
    return SavedState(revision: UInt64(revision), mode: mode, sections: sections)
  }
}
