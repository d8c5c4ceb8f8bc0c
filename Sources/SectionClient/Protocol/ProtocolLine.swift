import Glibc
import SectionCore

/// One line the daemon sent, classified by its first character as protocol 1 defines:
/// `!` an event, `OK`/`ERR` a status line, a lower-case keyword a data line.
public enum ProtocolLine: Equatable, Sendable {
  case data(DataLine)
  case status(Reply.Status)
  case event(Event)

  /// True for a line that ends a reply. Raw `send` relies on this alone, so it works for any reply.
  public static func isStatus(_ line: String) -> Bool {
    line == "OK" || line.hasPrefix("OK ") || line.hasPrefix("ERR ")
  }

  public static func parse(_ line: String) throws(ClientError) -> ProtocolLine {
    if isStatus(line) { return .status(try status(line)) }
    if line.hasPrefix("!") { return .event(try event(String(line.dropFirst()), line: line)) }
    guard let first = line.unicodeScalars.first, ("a"..."z").contains(first) else {
      throw .malformedReply(line)
    }
    return .data(try data(line))
  }

  private static func status(_ line: String) throws(ClientError) -> Reply.Status {
    let fields = fields(line, count: 3)
    if fields[0] == "OK" {
      guard fields.count > 1 else { return .ok(revision: nil) }
      guard fields.count == 2 else { throw .malformedReply(line) }
      return .ok(revision: try number(fields[1], line: line))
    }
    guard fields.count > 1, !fields[1].isEmpty else { throw .malformedReply(line) }
    return .error(code: fields[1], message: fields.count > 2 ? fields[2] : "")
  }

  private static func event(_ text: String, line: String) throws(ClientError) -> Event {
    let fields = fields(text, count: 5)
    if let edit = SectionEdit(rawValue: fields[0]) {
      guard fields.count == 4 else { throw .malformedReply(line) }
      return .edited(
        edit, revision: try number(fields[1], line: line), index: try number(fields[2], line: line),
        id: try word(fields[3], line: line))
    }
    switch (fields[0], fields.count) {
    case ("moved", 5):
      return .moved(
        revision: try number(fields[1], line: line), from: try number(fields[2], line: line),
        to: try number(fields[3], line: line), id: try word(fields[4], line: line))
    case ("items", 5):
      return .items(
        revision: try number(fields[1], line: line), index: try number(fields[2], line: line),
        id: try word(fields[3], line: line), count: try number(fields[4], line: line))
    case ("opened", 4), ("closed", 4):
      let revision: UInt64 = try number(fields[1], line: line)
      let index: Int = try number(fields[2], line: line)
      let id = try word(fields[3], line: line)
      return fields[0] == "opened"
        ? .opened(revision: revision, index: index, id: id)
        : .closed(revision: revision, index: index, id: id)
    case ("mode", 3):
      return .mode(revision: try number(fields[1], line: line), mode: try mode(fields[2], line: line))
    case ("state", 4):
      return .state(try snapshot(fields, line: line))
    case ("reload", 2):
      return .reload(revision: try number(fields[1], line: line))
    case ("bye", _):
      return .bye(reason: fields.dropFirst().joined(separator: " "))
    case ("opened", _), ("closed", _), ("mode", _), ("state", _), ("reload", _), ("moved", _), ("items", _):
      throw .malformedReply(line)
    default:
      return .other(text)
    }
  }

  private static func data(_ line: String) throws(ClientError) -> DataLine {
    let keyword = line.prefix { $0 != " " }
    switch keyword {
    case "section":
      let fields = fields(line, count: 6)
      guard fields.count == 6, fields[3] == "open" || fields[3] == "closed", !fields[5].isEmpty else {
        throw .malformedReply(line)
      }
      return .section(
        ListedSection(
          index: try number(fields[1], line: line), id: try word(fields[2], line: line),
          isOpen: fields[3] == "open", itemCount: try number(fields[4], line: line), title: fields[5]))
    case "item":
      let fields = fields(line, count: 4)
      guard fields.count == 4 else { throw .malformedReply(line) }
      return .item(
        ListedItem(
          sectionIndex: try number(fields[1], line: line), position: try number(fields[2], line: line),
          text: fields[3]))
    case "state":
      let fields = fields(line, count: 4)
      guard fields.count == 4 else { throw .malformedReply(line) }
      return .state(try snapshot(fields, line: line))
    case "mode":
      let fields = fields(line, count: 2)
      guard fields.count == 2 else { throw .malformedReply(line) }
      return .mode(try mode(fields[1], line: line))
    case "version":
      let fields = fields(line, count: 3)
      guard fields.count == 3, !fields[1].isEmpty, !fields[2].isEmpty else { throw .malformedReply(line) }
      return .version(daemon: fields[1], protocolVersion: fields[2])
    case "help":
      return .help(String(line.dropFirst(keyword.count).drop { $0 == " " }))
    case "history":
      let fields = fields(line, count: 8)
      guard fields.count == 8 else { throw .malformedReply(line) }
      return .history(
        HistoryEntry(
          revision: try number(fields[1], line: line), time: try word(fields[2], line: line),
          via: try word(fields[3], line: line), uid: UInt32(fields[4]), pid: Int32(fields[5]),
          name: fields[6] == "-" ? nil : try word(fields[6], line: line),
          event: try event(fields[7], line: line)))
    default:
      return .other(line)
    }
  }

  /// `state`-shaped fields: keyword, revision, mode, comma-separated open ids or `-`.
  private static func snapshot(_ fields: [String], line: String) throws(ClientError) -> StateSnapshot {
    let ids =
      fields[3] == "-"
      ? [] : split(fields[3], on: ",")
    guard !ids.contains(where: \.isEmpty) else { throw .malformedReply(line) }
    return StateSnapshot(
      revision: try number(fields[1], line: line), mode: try mode(fields[2], line: line), openIDs: ids)
  }

  /// Splits on single spaces into at most `count` fields; the last keeps its spaces (titles, item text).
  private static func fields(_ text: String, count: Int) -> [String] {
    split(text, on: " ", maxSplits: count - 1)
  }

  /// Splits on a byte, as the daemon writes the fields: by UTF-8 rather than by Character, which
  /// would run Unicode's grapheme rules over a `state` line of tens of megabytes (seconds).
  private static func split(_ text: String, on separator: Unicode.Scalar, maxSplits: Int = .max) -> [String] {
    var text = text
    return text.withUTF8 { bytes in
      guard let base = bytes.baseAddress else { return [""] }
      var fields: [String] = []
      var start = 0
      while fields.count < maxSplits,
        let found = memchr(base + start, Int32(separator.value), bytes.count - start)
      {
        let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        fields.append(String(decoding: bytes[start..<end], as: UTF8.self))
        start = end + 1
      }
      fields.append(String(decoding: bytes[start...], as: UTF8.self))
      return fields
    }
  }

  private static func number<N: FixedWidthInteger>(_ text: String, line: String) throws(ClientError) -> N {
    guard let value = N(text), value >= 0 else { throw .malformedReply(line) }
    return value
  }

  private static func word(_ text: String, line: String) throws(ClientError) -> String {
    guard !text.isEmpty else { throw .malformedReply(line) }
    return text
  }

  private static func mode(_ text: String, line: String) throws(ClientError) -> Mode {
    guard let mode = Mode(rawValue: text) else { throw .malformedReply(line) }
    return mode
  }
}
