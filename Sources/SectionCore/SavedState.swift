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
    Encoder(model.sections).encode(model, into: &bytes)
    return bytes
  }

  /// Renders state files for one list of sections. It runs once per group of changes, on the
  /// path of every acknowledged change, so each section's `"id":` is rendered once, up front:
  /// rendering the file piece by piece from Strings measured 35,000 instructions for 50
  /// sections, a tenth of the daemon's instructions under a stream of TOGGLEs.
  public struct Encoder: Sendable {
    /// `"id":` of the first section, then `,"id":` of each next one, back to back.
    private let keys: [UInt8]
    private let keyEnds: [Int]

    public init(_ sections: [Section]) {
      var keys: [UInt8] = []
      var keyEnds: [Int] = []
      for (index, section) in sections.enumerated() {
        // Ids are letters, digits, '-', '_' and '.' (Config checks): nothing needs escaping.
        keys.append(utf8: "\(index == 0 ? "" : ",")\"\(section.id)\":")
        keyEnds.append(keys.count)
      }
      self.keys = keys
      self.keyEnds = keyEnds
    }

    /// Renders `model`, whose sections must be those the encoder was made for, into `buffer`
    /// (replacing its contents).
    public func encode(_ model: SectionModel, into buffer: inout [UInt8]) {
      precondition(model.sections.count == keyEnds.count, "state encoder made for other sections")
      buffer.removeAll(keepingCapacity: true)
      buffer.append("{\"format\":")
      buffer.appendDecimal(UInt64(SavedState.format))
      buffer.append(",\"revision\":")
      buffer.appendDecimal(model.revision)
      buffer.append(",\"mode\":\"")
      buffer.append(model.mode.word)
      buffer.append("\",\"sections\":{")
      keys.withUnsafeBufferPointer { keys in
        var start = 0
        for (index, end) in keyEnds.enumerated() {
          buffer.append(contentsOf: UnsafeBufferPointer(rebasing: keys[start..<end]))
          if let opened = model.openedAt[index] {
            buffer.appendDecimal(opened)
          } else {
            buffer.append("null")
          }
          start = end
        }
      }
      buffer.append("}}\n")
    }
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
    return SavedState(revision: UInt64(revision), mode: mode, sections: sections)
  }
}
