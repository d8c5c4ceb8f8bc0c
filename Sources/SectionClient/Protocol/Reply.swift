import SectionShared

/// A complete reply: its data lines and the status line that ends it.
public struct Reply: Equatable, Sendable {
  /// How a reply ended: `OK`, `OK <rev>` or `ERR <code> <message>`.
  public enum Status: Equatable, Sendable {
    case ok(revision: UInt64?)
    case error(code: String, message: String)

    /// `ERR BUSY`: the daemon serves as many clients as it may and closes the connection.
    var isBusy: Bool {
      if case .error("BUSY", _) = self { return true }
      return false
    }
  }

  /// The data lines, in order.
  public var data: [DataLine] {
    get { lines.array }
    set { lines = DataLines(newValue) }
  }
  public var status: Status
  private(set) var lines: DataLines

  public init(data: [DataLine] = [], status: Status) {
    self.init(lines: DataLines(data), status: status)
  }

  init(lines: DataLines, status: Status) {
    self.lines = lines
    self.status = status
  }

  /// The revision the daemon reported, if the reply succeeded with one.
  public var revision: UInt64? {
    if case .ok(let revision) = status { return revision }
    return nil
  }

  /// For `ERR GONE <oldest> ...` (HISTORY FROM a revision whose later changes are not all
  /// kept, or newer than the state's): the oldest revision the daemon keeps, or with none kept
  /// the one after the state's; nil for any other reply. Checked when the line was read: 1 to 2^63.
  public var oldestKept: UInt64? {
    guard case .error("GONE", let message) = status else { return nil }
    return ProtocolLine.oldestKept(inGone: message)
  }

  public var sections: [ListedSection] {
    data.compactMap { if case .section(let section) = $0 { section } else { nil } }
  }

  public var items: [ListedItem] {
    data.compactMap { if case .item(let item) = $0 { item } else { nil } }
  }

  /// The `history` lines of a HISTORY reply, oldest first.
  public var history: [HistoryEntry] {
    data.compactMap { if case .history(let entry) = $0 { entry } else { nil } }
  }

  /// The `state` line of a SUBSCRIBE reply.
  public var state: StateSnapshot? {
    data.lazy.compactMap { if case .state(let state) = $0 { state } else { nil } }.first
  }

  /// The `mode` line of a MODE reply.
  public var mode: Mode? {
    data.lazy.compactMap { if case .mode(let mode) = $0 { mode } else { nil } }.first
  }

  /// The `status KEY VALUE` lines of a STATUS reply.
  public var facts: [String: String] {
    var facts: [String: String] = [:]
    for case .other(let line) in data where line.hasPrefix("status ") {
      let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
      if fields.count == 3 { facts[String(fields[1])] = String(fields[2]) }
    }
    return facts
  }

  /// The reply itself when it succeeded; the daemon's error otherwise.
  public func succeeded() throws(ClientError) -> Reply {
    if case .error(let code, let message) = status { throw .daemon(code: code, message: message) }
    return self
  }
}

/// A reply's data lines. Most replies have none or one (a change's `section` line): those are
/// kept without an array, whose allocation and release were a tenth of the instructions
/// client-load spent on a TOGGLE. One value for each list of lines, so equality is the lines'.
enum DataLines: Equatable, Sendable {
  case none
  case one(DataLine)
  case many([DataLine])

  init(_ lines: [DataLine]) {
    switch lines.count {
    case 0: self = .none
    case 1: self = .one(lines[0])
    default: self = .many(lines)
    }
  }

  var array: [DataLine] {
    switch self {
    case .none: []
    case .one(let line): [line]
    case .many(let lines): lines
    }
  }

  /// The first line, without an array made for it.
  var first: DataLine? {
    switch self {
    case .none: nil
    case .one(let line): line
    case .many(let lines): lines.first
    }
  }

  mutating func append(_ line: DataLine) {
    switch self {
    case .none: self = .one(line)
    case .one(let first): self = .many([first, line])
    case .many(var lines):
      self = .none  // the array is then held once, and grows in place
      lines.append(line)
      self = .many(lines)
    }
  }
}
