import SectionGrammar
import SectionShared

/// One request of protocol 1 and how its reply reads as a value: the one definition of each
/// request, which the blocking `Client` and the async `AsyncClient` both send (`perform`).
///
/// Arguments are checked before anything is sent: a section reference is one word, and no
/// argument may hold a line break, which would make the rest of it a second request.
public struct Request<Value: Sendable>: Sendable {
  /// The lines sent, in order.
  public let lines: [String]
  /// How many replies they get: one per line, except for a BATCH (one for all).
  public let replyCount: Int
  /// Every request gets one reply (a BATCH one for all its lines): what it reads as a value.
  let read: @Sendable (Reply) throws(ClientError) -> Value
  /// Why the request cannot be sent, found when it was made.
  @usableFromInline let problem: ClientError?
  /// The reply is the value, ERR included (`asReply`): `read` sees it as it came.
  @usableFromInline let readsErrors: Bool

  init(
    lines: [String], replyCount: Int? = nil, problem: ClientError? = nil, readsErrors: Bool = false,
    read: @escaping @Sendable (Reply) throws(ClientError) -> Value
  ) {
    self.lines = lines
    self.replyCount = replyCount ?? lines.count
    self.problem = problem
    self.readsErrors = readsErrors
    self.read = read
  }

  /// The value the replies stand for; the daemon's error when one of them is ERR.
  public func value(from replies: [Reply]) throws(ClientError) -> Value {
    try value(from: replies[...])
  }

  /// `value(from:)` for this request's replies among those of several.
  @usableFromInline func value(from replies: ArraySlice<Reply>) throws(ClientError) -> Value {
    if !readsErrors { for reply in replies { _ = try reply.succeeded() } }
    guard let reply = replies.first else { throw .malformedReply("no reply") }
    return try read(reply)
  }

  /// `value(from:)` for the one reply of this request.
  @usableFromInline func value(from reply: Reply) throws(ClientError) -> Value {
    try read(readsErrors ? reply : reply.succeeded())
  }

  /// The same request, its value the whole reply as it came, `ERR` included (`succeeded()`
  /// turns that into the error): for what the value leaves out, such as the revision an `ITEMS`
  /// was read at, the sections an `OPEN` changed, or the oldest revision an `ERR GONE` names.
  /// Its lines are checked as the request's are.
  public var asReply: Request<Reply> {
    Request<Reply>(
      lines: lines, replyCount: replyCount, problem: problem, readsErrors: true, read: { $0 })
  }

  /// A request of one line that is checked for line breaks and read by `read`.
  static func line(_ text: String, _ read: @escaping @Sendable (Reply) throws(ClientError) -> Value)
    -> Request
  {
    let broken = text.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0 }
    return Request(
      lines: [text],
      problem: broken
        ? .invalidRequest("an argument holds a line break or NUL: \"\(VisibleText.escape(text))\"") : nil,
      read: read)
  }

  /// `text` as one word of a request: a section reference (an id, or an index in digits).
  static func word(_ text: String) -> ClientError? {
    let bad = text.isEmpty || text.utf8.contains { $0 <= 0x20 || $0 == 0x7F }
    return bad
      ? .invalidRequest("\"\(VisibleText.escape(text))\" is not a section id or index: one word, no spaces")
      : nil
  }
}

/// The revision a change reached: what every change request returns.
private func revision(_ reply: Reply) throws(ClientError) -> UInt64 {
  guard let revision = reply.revision else { throw .malformedReply("OK without the revision of the change") }
  return revision
}

extension Request where Value == Void {
  /// `PING`: the daemon answers.
  public static var ping: Request { .line(Verb.ping.name) { _ in } }
}

extension Request where Value == DaemonVersion {
  /// `VERSION`: the daemon's version and the protocol it speaks.
  public static var version: Request {
    .line(Verb.version.name) { reply throws(ClientError) in
      guard case .version(let daemon, let protocolVersion)? = reply.lines.first else {
        throw .malformedReply("OK without a version line after VERSION")
      }
      return DaemonVersion(daemon: daemon, protocolVersion: protocolVersion)
    }
  }
}

extension Request where Value == Listing {
  /// `LIST`: every section, in order, with the revision it shows.
  public static var list: Request {
    .line(Verb.list.name) { reply in
      Listing(sections: reply.sections, items: [], revision: reply.revision ?? 0)
    }
  }

  /// `VIEW`: what an accordion shows, the sections and the items of the open ones.
  public static var view: Request {
    .line(Verb.view.name) { reply in
      Listing(sections: reply.sections, items: reply.items, revision: reply.revision ?? 0)
    }
  }
}

extension Request where Value == [ListedItem] {
  /// `ITEMS <ref>`: every item of one section, open or not.
  public static func items(_ section: String) -> Request {
    checked(section, .line("\(Verb.items.name) \(section)") { reply in reply.items })
  }
}

extension Request where Value == Bool {
  /// `TOGGLE <ref>`: whether the section is open now.
  public static func toggle(_ section: String) -> Request {
    checked(
      section,
      .line("\(Verb.toggle.name) \(section)") { reply throws(ClientError) in
        guard case .section(let listed)? = reply.lines.first else {
          throw .malformedReply("OK without the section TOGGLE changed")
        }
        return listed.isOpen
      })
  }
}

extension Request where Value == Mode {
  /// `MODE`: the mode now.
  public static var mode: Request {
    .line(Verb.mode.name) { reply throws(ClientError) in
      guard let mode = reply.mode else { throw .malformedReply("OK without a mode line after MODE") }
      return mode
    }
  }
}

extension Request where Value == [String: String] {
  /// `STATUS`: the daemon's facts (pid, uid, systemd, uptime, config, state, clients, subscribers).
  public static var status: Request { .line(Verb.status.name) { reply in reply.facts } }
}

extension Request where Value == [HistoryEntry] {
  /// `HISTORY [n]`: the last `count` changes the daemon keeps (0 or more; without a count, the
  /// daemon's default of 20).
  public static func history(last count: Int? = nil) -> Request {
    counted(
      ["history(last:)": count], .line(words(.history, count.map(String.init))) { reply in reply.history })
  }

  /// `HISTORY FROM <rev>`: the changes after `revision`; `ERR GONE <oldest>` when the daemon no
  /// longer keeps them all.
  public static func history(after revision: UInt64) -> Request {
    .line(words(.history, "FROM", "\(revision)")) { reply in reply.history }
  }
}

extension Request where Value == UInt64 {
  /// `OPEN <ref>`; the revision reached.
  public static func open(_ section: String) -> Request { change(.open, section) }
  /// `CLOSE <ref>`.
  public static func close(_ section: String) -> Request { change(.close, section) }
  /// `OPEN <ref>`, `CLOSE <ref>` or `TOGGLE <ref>`, as `action` says; the revision reached
  /// (the reply's section line says whether it is open now: `asReply`).
  public static func change(_ action: SectionAction, _ section: String) -> Request {
    change(action.grammarVerb, section)
  }
  /// `OPEN ALL` (multi mode only).
  public static var openAll: Request { .line(words(.open, "ALL"), revision) }
  /// `CLOSE ALL`.
  public static var closeAll: Request { .line(words(.close, "ALL"), revision) }
  /// `MODE <mode>`: switching to exclusive keeps the most recently opened section.
  public static func setMode(_ mode: Mode) -> Request { .line(words(.mode, mode.rawValue), revision) }
  /// `RELOAD`, or `RELOAD FRESH`, which drops the sections clients added.
  public static func reload(fresh: Bool = false) -> Request {
    .line(words(.reload, fresh ? "FRESH" : nil), revision)
  }
  /// `INSERT <index|end> <id> <title>`: a new closed section with no items, at `index` (nil: at the end).
  public static func insert(id: String, title: String, at index: Int? = nil) -> Request {
    counted(
      ["insert(at:)": index],
      checked(id, .line(words(.insert, index.map(String.init) ?? "end", id, title), revision)))
  }
  /// `DELETE <ref>`.
  public static func delete(_ section: String) -> Request { change(.delete, section) }
  /// `MOVE <ref> <index>`.
  public static func move(_ section: String, to index: Int) -> Request {
    counted(["move(to:)": index], change(.move, section, "\(index)"))
  }
  /// `RENAME <ref> <title>`: the id stays.
  public static func rename(_ section: String, to title: String) -> Request {
    change(.rename, section, title)
  }
  /// `ITEM INSERT <ref> <pos|end> <text>`: a new item at `position` (nil: at the end).
  public static func insertItem(_ text: String, in section: String, at position: Int? = nil) -> Request {
    counted(
      ["insertItem(at:)": position],
      change(.item, "INSERT", section, "\(position.map(String.init) ?? "end") \(text)"))
  }
  /// `ITEM DELETE <ref> <pos>`.
  public static func deleteItem(at position: Int, in section: String) -> Request {
    counted(["deleteItem(at:)": position], change(.item, "DELETE", section, "\(position)"))
  }
  /// `ITEM MOVE <ref> <from> <to>`.
  public static func moveItem(from: Int, to: Int, in section: String) -> Request {
    counted(["moveItem(from:)": from, "moveItem(to:)": to], change(.item, "MOVE", section, "\(from) \(to)"))
  }
  /// `ITEM SET <ref> <pos> <text>`: replaces an item's text.
  public static func setItem(at position: Int, to text: String, in section: String) -> Request {
    counted(["setItem(at:)": position], change(.item, "SET", section, "\(position) \(text)"))
  }

  /// `BATCH`, the changes, `END`: applied as one change, all or none; the revision reached.
  /// The daemon's error names the line that failed (`line 2: ...`), and nothing was changed.
  public static func batch(_ changes: [Request<UInt64>]) -> Request {
    let problem = changes.lazy.compactMap(\.problem).first
    return Request(
      lines: [Verb.batch.name] + changes.flatMap(\.lines) + [Verb.end.name], replyCount: 1, problem: problem,
      read: revision)
  }

  private static func change(_ verb: Verb, _ section: String, _ rest: String? = nil) -> Request {
    checked(section, .line(words(verb, section, rest), revision))
  }

  /// ITEM's `action` on `section`.
  private static func change(_ verb: Verb, _ action: String, _ section: String, _ rest: String) -> Request {
    checked(section, .line(words(verb, action, section, rest), revision))
  }
}

/// A request line: the verb's name (`Verb.name`, as the grammar spells it) and the words
/// given, nil ones left out.
private func words(_ verb: Verb, _ words: String?...) -> String {
  ([verb.name] + words.compactMap { $0 }).joined(separator: " ")
}

/// `request`, unless `section` is not one word.
private func checked<Value>(_ section: String, _ request: Request<Value>) -> Request<Value> {
  guard let problem = Request<Value>.word(section), request.problem == nil else { return request }
  return Request(
    lines: request.lines, replyCount: request.replyCount, problem: problem, readsErrors: request.readsErrors,
    read: request.read)
}

/// `request`, unless one of `numbers` (each a call's argument and its value) is below 0: the
/// daemon reads counts and positions as digits alone, so a negative one would only come back as
/// a SYNTAX error about the request line; the library names the argument instead.
private func counted<Value>(_ numbers: KeyValuePairs<String, Int?>, _ request: Request<Value>) -> Request<
  Value
> {
  guard request.problem == nil, let (argument, value) = numbers.first(where: { ($0.value ?? 0) < 0 }) else {
    return request
  }
  return Request(
    lines: request.lines, replyCount: request.replyCount,
    problem: .invalidArgument(
      argument: argument, value: "\(value!)", rule: "a count or position is 0 or more"),
    readsErrors: request.readsErrors, read: request.read)
}
