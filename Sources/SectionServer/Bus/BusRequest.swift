import SectionCore
import Systemd

/// A method call of the interface as the request it stands for (docs/DBUS.md maps each
/// member to its request), a `Request` value built from the call's arguments, never a line of
/// text; and what its return carries.
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
    /// Items' `(t revision, as items)` of the section it names.
    case items
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

  let request: Request
  /// Batch's requests, which `request` (`.end`) applies.
  let batch: Batch?
  let answer: Answer
  var changesState: Bool { !answer.isRead }

  /// The level the call needs: its request's (`Request.level`), or for Batch, its highest
  /// line's. Batch's lines are parsed for it, so it is asked only of callers without a direct
  /// right, before asking polkit.
  var level: AccessLevel { batch?.level ?? request.level }

  init(_ request: Request, batch: Batch? = nil, answer: Answer = .revision) {
    self.request = request
    self.batch = batch
    self.answer = answer
  }

  /// The request of a call; throws SYNTAX for an argument that cannot stand in the request
  /// (docs/DBUS.md: one word where the request has one), TOOLONG for one longer than a
  /// request line may be, and LIMIT for a Batch of more than `batchLines` lines.
  init(_ call: BusCall, batchLines: Int) throws(ProtocolError) {
    var arguments = Arguments(call: call)
    switch call.member {
    case "List": self.init(.list, answer: .list)
    case "Items": self.init(.items(try arguments.ref()), answer: .items)
    case "Open": self.init(.open(.section(try arguments.sectionNotAll())))
    case "Close": self.init(.close(.section(try arguments.sectionNotAll())))
    case "Toggle": self.init(.toggle(try arguments.ref()), answer: .toggled)
    case "OpenAll": self.init(.open(.all))
    case "CloseAll": self.init(.close(.all))
    case "InsertSection":
      let index = try arguments.position("index")
      let id = try arguments.word("id")
      self.init(.insert(index, id: id, title: try arguments.text("title")))
    case "DeleteSection": self.init(.delete(try arguments.ref()))
    case "MoveSection": self.init(.move(try arguments.ref(), to: try arguments.number("index")))
    case "RenameSection": self.init(.rename(try arguments.ref(), title: try arguments.text("title")))
    case "InsertItem":
      let ref = try arguments.ref()
      let position = try arguments.position("position")
      self.init(.itemInsert(ref, position, text: try arguments.text("text")))
    case "DeleteItem": self.init(.itemDelete(try arguments.ref(), try arguments.number("position")))
    case "MoveItem":
      let ref = try arguments.ref()
      let from = try arguments.number("from")
      self.init(.itemMove(ref, from: from, to: try arguments.number("to")))
    case "SetItem":
      let ref = try arguments.ref()
      let position = try arguments.number("position")
      self.init(.itemSet(ref, position, text: try arguments.text("text")))
    case "Reload": self.init(.reload)
    case "History": self.init(.history(last: try arguments.number("count")), answer: .history)
    case "ChangedBy":
      let revision: UInt64
      do { revision = try call.readUInt64() } catch {
        throw ProtocolError(.syntax, "ChangedBy: revision is missing")
      }
      guard revision > 0 else {
        throw ProtocolError(.syntax, "ChangedBy: revision 0 is the start, no change")
      }
      // The first change after the one before it.
      self.init(.historyFrom(revision - 1), answer: .changedBy(revision: revision))
    case "Batch": self.init(.end, batch: try BusRequest.batch(call, batchLines: batchLines))
    default:
      throw ProtocolError(.unknown, "unknown method \(call.member)")
    }
    try arguments.finish()
  }

  /// The request each member with arguments stands for, as a line begins (docs/DBUS.md).
  private static let verbs = [
    "Items": "ITEMS", "Open": "OPEN", "Close": "CLOSE", "Toggle": "TOGGLE", "InsertSection": "INSERT",
    "DeleteSection": "DELETE", "MoveSection": "MOVE", "RenameSection": "RENAME", "InsertItem": "ITEM INSERT",
    "DeleteItem": "ITEM DELETE", "MoveItem": "ITEM MOVE", "SetItem": "ITEM SET", "History": "HISTORY",
  ]

  /// Properties.Set of Mode: `MODE <mode>`, as the protocol reads its word.
  init(mode: String) throws(ProtocolError) {
    let word = Array(mode.utf8)
    switch Request.mode(word.isEmpty ? nil : word[...]) {
    case .success(let request): self.init(request, answer: .nothing)
    case .failure(let error): throw error
    }
  }

  /// Batch's requests: request lines by the interface, each parsed as a socket's BATCH parses
  /// its lines when it ends. Bounded as a socket's BATCH is, before anything past the bound is
  /// copied.
  private static func batch(_ call: BusCall, batchLines: Int) throws(ProtocolError) -> Batch {
    let read: [String]?
    do { read = try call.readStrings(atMost: batchLines, bytes: Batch.byteLimit) } catch {
      throw ProtocolError(.syntax, "Batch: requests are missing")
    }
    guard let requests = read else {
      throw ProtocolError(
        .limit,
        "Batch: at most \(batchLines) lines (sectiond --max-batch-lines) of \(Batch.byteLimit) bytes in all")
    }
    var batch = Batch()
    for (number, request) in requests.enumerated() {
      // The call is the whole batch (docs/DBUS.md): a request of it is a change, never its
      // beginning or its end.
      let verb = request.split(whereSeparator: { $0 == " " || $0 == "\t" }).first?.uppercased()
      if verb == "END" || verb == "BATCH" {
        throw ProtocolError(
          .syntax, "line \(number + 1): \(verb!) cannot stand inside Batch; it is the whole batch")
      }
      if request.utf8.count > LineFramer.maximumLineLength { throw ProtocolError.tooLong }
      batch.add(Array(request.utf8)[...], limit: batchLines)
    }
    return batch
  }

  /// A call's arguments, read in order as the values of a request.
  private struct Arguments {
    let call: BusCall
    var member: String { call.member }
    /// How long the request's line would be: a call says no more than a socket's request can,
    /// so what a caller makes a socket client can make, name and read back too (TOOLONG).
    private var lineBytes: Int
    /// The first argument with a character no request may hold: refused once the length is
    /// known to fit, as the line would be.
    private var characterProblem: ProtocolError?

    init(call: BusCall) {
      self.call = call
      lineBytes = BusRequest.verbs[call.member]?.utf8.count ?? 0
    }

    /// Throws what the arguments read make wrong as a request: too long, or a character
    /// no request may hold.
    func finish() throws(ProtocolError) {
      if lineBytes > LineFramer.maximumLineLength { throw ProtocolError.tooLong }
      if let characterProblem { throw characterProblem }
    }

    /// An argument no longer than a request line may be (a longer one is not copied), with
    /// no control characters, as a request's text has none.
    mutating func bytes(_ what: String) throws(ProtocolError) -> [UInt8] {
      let value: String?
      do { value = try call.readString(atMost: LineFramer.maximumLineLength) } catch {
        throw ProtocolError(.syntax, "\(member): \(what) is missing")
      }
      guard let value else { throw ProtocolError.tooLong }
      let bytes = Array(value.utf8)
      lineBytes += 1 + bytes.count
      if characterProblem == nil { characterProblem = Request.characterProblem(bytes[...]) }
      return bytes
    }

    /// A ref, an id, an index or a position: one word, as ids and numbers are.
    mutating func word(_ what: String) throws(ProtocolError) -> ArraySlice<UInt8> {
      let value = try bytes(what)
      if value.isEmpty || value.contains(where: { $0 == 0x20 || $0 == 0x09 }) {
        throw ProtocolError(
          .syntax,
          "\(member): \(what) \(BusRequest.quoted(String(decoding: value, as: UTF8.self))) must be one word, without spaces"
        )
      }
      return value[...]
    }

    /// A section: an index (all digits) or an id.
    mutating func ref() throws(ProtocolError) -> SectionRef {
      SectionRef(word: try word("ref"))
    }

    /// The ref of Open and Close, where the protocol's ALL would mean every section: on the
    /// bus that is OpenAll and CloseAll, and no id is "all".
    mutating func sectionNotAll() throws(ProtocolError) -> SectionRef {
      let ref = try word("ref")
      if SectionRef.isAll(ref) {
        throw ProtocolError(
          .noSection,
          "no section \(BusRequest.quoted(String(decoding: ref, as: UTF8.self))): call \(member)All for every section"
        )
      }
      return SectionRef(word: ref)
    }

    /// An index or a position, or `end` (after the last).
    mutating func position(_ what: String) throws(ProtocolError) -> Position {
      let word = try word(what)
      guard let position = Position(word: word) else {
        throw ProtocolError(
          .syntax,
          "\(member): \(what) \(BusRequest.quoted(String(decoding: word, as: UTF8.self))) is not a number or end"
        )
      }
      return position
    }

    mutating func number(_ what: String) throws(ProtocolError) -> Int {
      let value: UInt32
      do { value = try call.readUInt32() } catch {
        throw ProtocolError(.syntax, "\(member): \(what) is missing")
      }
      lineBytes += 1 + String(value).utf8.count
      return Int(value)
    }

    /// A title or a text: what the protocol takes to the end of its line, without the spaces
    /// and tabs around it, which a request cannot carry.
    mutating func text(_ what: String) throws(ProtocolError) -> ArraySlice<UInt8> {
      guard let text = Request.text(try bytes(what)[...]) else {
        throw ProtocolError(.syntax, "\(member): \(what) is empty")
      }
      return text
    }
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
}
