import SectionCore
import Systemd

/// A method call of the interface as the protocol lines it stands for (docs/DBUS.md maps
/// each member to its request), and what its return carries.
struct BusRequest {
  /// What a successful call returns.
  enum Answer {
    /// No values (Properties.Set of Mode).
    case nothing
    /// `(t revision)`.
    case revision
    /// Toggle's `(b open, t revision)`.
    case toggled
    /// List's `(t revision, a(ssbu) sections)`.
    case list
    /// Items' `(t revision, as items)` of the section `ref` names.
    case items(ref: String)
    /// History's `(t revision, a(tssuuss) changes)`.
    case history
    /// ChangedBy's `(s time, s via, u uid, u pid, s name)` of the change of `revision`.
    case changedBy(revision: UInt64)

    /// List, Items, History and ChangedBy read; every other call changes state (or is a
    /// no-op that could have).
    var isRead: Bool {
      switch self {
      case .list, .items, .history, .changedBy: true
      case .nothing, .revision, .toggled: false
      }
    }

    /// Whether the answer says who made changes: only to callers allowed to make them, as
    /// on the control socket (SECURITY.md); others get `-` and `UnknownID`.
    var showsWho: Bool {
      switch self {
      case .history, .changedBy: true
      default: false
      }
    }
  }

  let lines: [[UInt8]]
  let answer: Answer
  let changesState: Bool

  init(lines: [[UInt8]], answer: Answer, changesState: Bool) {
    self.lines = lines
    self.answer = answer
    self.changesState = changesState
  }

  /// The request of a call; throws SYNTAX for an argument that cannot stand in a request, and
  /// LIMIT for a Batch of more than `batchLines` lines.
  init(_ call: BusCall, batchLines: Int) throws(ProtocolError) {
    let member = call.member
    /// An argument no longer than a line may be (a longer one is not copied).
    func string(_ what: String) throws(ProtocolError) -> String {
      let value: String?
      do { value = try call.readString(atMost: LineFramer.maximumLineLength) } catch {
        throw ProtocolError(.syntax, "\(member): \(what) is missing")
      }
      guard let value else { throw ProtocolError.tooLong }
      return value
    }
    func number(_ what: String) throws(ProtocolError) -> String {
      do { return String(try call.readUInt32()) } catch {
        throw ProtocolError(.syntax, "\(member): \(what) is missing")
      }
    }
    /// A ref, an id, an index or a position: one word, as the protocol splits a line.
    func word(_ what: String) throws(ProtocolError) -> String {
      let value = try string(what)
      if value.isEmpty || value.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) {
        throw ProtocolError(
          .syntax, "\(member): \(what) \(BusRequest.quoted(value)) must be one word, without spaces")
      }
      return value
    }
    /// The ref of Open and Close, where the protocol's ALL would mean every section: on the
    /// bus that is OpenAll and CloseAll, and no id is "all".
    func ref() throws(ProtocolError) -> String {
      let ref = try word("ref")
      if ref.lowercased() == "all" {
        throw ProtocolError(
          .noSection, "no section \(BusRequest.quoted(ref)): call \(member)All for every section")
      }
      return ref
    }
    var answer = Answer.revision
    let line: String
    switch member {
    case "List":
      line = "LIST"
      answer = .list
    case "Items":
      let ref = try word("ref")
      line = "ITEMS \(ref)"
      answer = .items(ref: ref)
    case "Open": line = "OPEN \(try ref())"
    case "Close": line = "CLOSE \(try ref())"
    case "Toggle":
      line = "TOGGLE \(try word("ref"))"
      answer = .toggled
    case "OpenAll": line = "OPEN ALL"
    case "CloseAll": line = "CLOSE ALL"
    case "InsertSection": line = "INSERT \(try word("index")) \(try word("id")) \(try string("title"))"
    case "DeleteSection": line = "DELETE \(try word("ref"))"
    case "MoveSection": line = "MOVE \(try word("ref")) \(try number("index"))"
    case "RenameSection": line = "RENAME \(try word("ref")) \(try string("title"))"
    case "InsertItem": line = "ITEM INSERT \(try word("ref")) \(try word("position")) \(try string("text"))"
    case "DeleteItem": line = "ITEM DELETE \(try word("ref")) \(try number("position"))"
    case "MoveItem": line = "ITEM MOVE \(try word("ref")) \(try number("from")) \(try number("to"))"
    case "SetItem": line = "ITEM SET \(try word("ref")) \(try number("position")) \(try string("text"))"
    case "Reload": line = "RELOAD"
    case "History":
      line = "HISTORY \(try number("count"))"
      answer = .history
    case "ChangedBy":
      let revision: UInt64
      do { revision = try call.readUInt64() } catch {
        throw ProtocolError(.syntax, "\(member): revision is missing")
      }
      guard revision > 0 else {
        throw ProtocolError(.syntax, "\(member): revision 0 is the start, no change")
      }
      line = "HISTORY FROM \(revision - 1)"
      answer = .changedBy(revision: revision)
    case "Batch":
      // Bounded as a socket's BATCH is, before anything past the bound is copied.
      let read: [String]?
      do { read = try call.readStrings(atMost: batchLines, bytes: Batch.byteLimit) } catch {
        throw ProtocolError(.syntax, "Batch: requests are missing")
      }
      guard let requests = read else {
        throw ProtocolError(
          .limit,
          "Batch: at most \(batchLines) lines (sectiond --max-batch-lines) of \(Batch.byteLimit) bytes in all"
        )
      }
      // The call is the whole BATCH ... END: a line of its own that ended or began one would
      // apply what came before it, or after it, outside the batch.
      for (number, request) in requests.enumerated() {
        let verb = request.split(whereSeparator: { $0 == " " || $0 == "\t" }).first?.uppercased()
        if verb == "END" || verb == "BATCH" {
          throw ProtocolError(
            .syntax, "line \(number + 1): \(verb!) cannot stand inside Batch; it is the whole batch")
        }
      }
      try self.init(lines: ["BATCH"] + requests + ["END"], answer: .revision)
      return
    default:
      throw ProtocolError(.unknown, "unknown method \(member)")
    }
    try self.init(lines: [line], answer: answer)
  }

  /// How many bytes of a caller's argument an error quotes.
  static let quotedBytes = 40

  /// `value` in quotes for an error message, its first `quotedBytes` bytes and its length when
  /// it is longer. A bus argument can be as long as a message (32 MB on the system bus), and an
  /// error that quoted it whole would be as long, held in sd-bus's queue until the caller read it.
  static func quoted(_ value: String) -> String {
    let bytes = value.utf8
    guard bytes.count > quotedBytes else { return "\"\(value)\"" }
    return "\"\(String(decoding: bytes.prefix(quotedBytes), as: UTF8.self))...\" (\(bytes.count) bytes)"
  }

  /// `lines` as requests; each must fit on one protocol line.
  init(lines: [String], answer: Answer) throws(ProtocolError) {
    var bytes: [[UInt8]] = []
    for line in lines {
      if line.utf8.count > LineFramer.maximumLineLength { throw ProtocolError.tooLong }
      bytes.append(Array(line.utf8))
    }
    self.init(lines: bytes, answer: answer, changesState: !answer.isRead)
  }
}
