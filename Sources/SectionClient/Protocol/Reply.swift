import SectionCore

/// A complete reply: its data lines and the status line that ends it.
public struct Reply: Equatable, Sendable {
  /// How a reply ended: `OK`, `OK <rev>` or `ERR <code> <message>`.
  public enum Status: Equatable, Sendable {
    case ok(revision: UInt64?)
    case error(code: String, message: String)
  }

  public var data: [DataLine] = []
  public var status: Status

  public init(data: [DataLine] = [], status: Status) {
    self.data = data
    self.status = status
  }

  /// The revision the daemon reported, if the reply succeeded with one.
  public var revision: UInt64? {
    if case .ok(let revision) = status { return revision }
    return nil
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
