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
  /// The verb whose row says what its reply holds (`ReplyShape`), which every reply is held to
  /// before it is read (`Reply.check`).
  @usableFromInline let verb: Verb
  @usableFromInline let shape: ReplyShape

  init(
    _ verb: Verb, form: Int = 0, lines: [String], replyCount: Int? = nil, problem: ClientError? = nil,
    readsErrors: Bool = false, read: @escaping @Sendable (Reply) throws(ClientError) -> Value
  ) {
    self.verb = verb
    shape = verb.row.forms[form].reply
    self.lines = lines
    self.replyCount = replyCount ?? lines.count
    self.problem = problem
    self.readsErrors = readsErrors
    self.read = read
  }

  /// `request` with another problem, or read another way.
  init<Other>(
    _ request: Request<Other>, problem: ClientError?, readsErrors: Bool,
    read: @escaping @Sendable (Reply) throws(ClientError) -> Value
  ) {
    verb = request.verb
    shape = request.shape
    lines = request.lines
    replyCount = request.replyCount
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
    try reply.check(shape, of: verb)
    return try read(reply)
  }

  /// `value(from:)` for the one reply of this request.
  @usableFromInline func value(from reply: Reply) throws(ClientError) -> Value {
    try reply.check(shape, of: verb)
    return try read(readsErrors ? reply : reply.succeeded())
  }

  /// The same request, its value the whole reply as it came, `ERR` included (`succeeded()`
  /// turns that into the error): for what the value leaves out, such as the revision an `ITEMS`
  /// was read at, the sections an `OPEN` changed, or the oldest revision an `ERR GONE` names.
  /// Its lines are checked as the request's are.
  public var asReply: Request<Reply> {
    Request<Reply>(self, problem: problem, readsErrors: true) { $0 }
  }

  /// A request of one line, form `form` of `verb` with `values` for its arguments (its
  /// keywords are the row's), checked for line breaks and read by `read`.
  static func line(
    _ verb: Verb, form: Int = 0, _ values: String...,
    read: @escaping @Sendable (Reply) throws(ClientError) -> Value
  ) -> Request {
    line(verb, form: form, values: values, read: read)
  }

  static func line(
    _ verb: Verb, form: Int, values: [String], read: @escaping @Sendable (Reply) throws(ClientError) -> Value
  ) -> Request {
    let text = verb.row.forms[form].line(of: verb, values)
    let broken = text.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0 }
    return Request(
      verb, form: form, lines: [text],
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
  public static var ping: Request { .line(.ping) { _ in } }
}

extension Request where Value == DaemonVersion {
  /// `VERSION`: the daemon's version and the protocol it speaks.
  public static var version: Request {
    .line(.version) { reply throws(ClientError) in
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
    .line(.list) { reply in
      Listing(sections: reply.sections, items: [], revision: reply.revision ?? 0)
    }
  }

  /// `VIEW`: what an accordion shows, the sections and the items of the open ones.
  public static var view: Request {
    .line(.view) { reply in
      Listing(sections: reply.sections, items: reply.items, revision: reply.revision ?? 0)
    }
  }
}

extension Request where Value == [ListedItem] {
  /// `ITEMS <ref>`: every item of one section, open or not.
  public static func items(_ section: String) -> Request {
    checked(section, .line(.items, section) { reply in reply.items })
  }
}

extension Request where Value == Bool {
  /// `TOGGLE <ref>`: whether the section is open now.
  public static func toggle(_ section: String) -> Request {
    checked(
      section,
      .line(.toggle, section) { reply throws(ClientError) in
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
    .line(.mode) { reply throws(ClientError) in
      guard let mode = reply.mode else { throw .malformedReply("OK without a mode line after MODE") }
      return mode
    }
  }
}

extension Request where Value == [String: String] {
  /// `STATUS`: the daemon's facts (pid, uid, systemd, uptime, config, state, clients, subscribers).
  public static var status: Request { .line(.status) { reply in reply.facts } }
}

extension Request where Value == [HistoryEntry] {
  /// `HISTORY [n]`: the last `count` changes the daemon keeps (0 or more; without a count, the
  /// daemon's default of 20).
  public static func history(last count: Int? = nil) -> Request {
    counted(
      ["history(last:)": count],
      count.map { .line(.history, form: 1, "\($0)") { $0.history } } ?? .line(.history) { $0.history })
  }

  /// `HISTORY FROM <rev>`: the changes after `revision`; `ERR GONE <oldest>` when the daemon no
  /// longer keeps them all.
  public static func history(after revision: UInt64) -> Request {
    .line(.history, form: 2, "\(revision)") { $0.history }
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
  public static var openAll: Request { .line(.open, "ALL", read: revision) }
  /// `CLOSE ALL`.
  public static var closeAll: Request { .line(.close, "ALL", read: revision) }
  /// `MODE <mode>`: switching to exclusive keeps the most recently opened section.
  public static func setMode(_ mode: Mode) -> Request { .line(.mode, form: 1, mode.rawValue, read: revision) }
  /// `RELOAD`, or `RELOAD FRESH`, which drops the sections clients added.
  public static func reload(fresh: Bool = false) -> Request {
    .line(.reload, form: fresh ? 1 : 0, read: revision)
  }
  /// `INSERT <index|end> <id> <title>`: a new closed section with no items, at `index` (nil: at the end).
  public static func insert(id: String, title: String, at index: Int? = nil) -> Request {
    counted(
      ["insert(at:)": index],
      checked(id, .line(.insert, index.map(String.init) ?? "end", id, title, read: revision)))
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
      change(.item, form: 0, section, position.map(String.init) ?? "end", text))
  }
  /// `ITEM DELETE <ref> <pos>`.
  public static func deleteItem(at position: Int, in section: String) -> Request {
    counted(["deleteItem(at:)": position], change(.item, form: 1, section, "\(position)"))
  }
  /// `ITEM MOVE <ref> <from> <to>`.
  public static func moveItem(from: Int, to: Int, in section: String) -> Request {
    counted(
      ["moveItem(from:)": from, "moveItem(to:)": to], change(.item, form: 2, section, "\(from)", "\(to)"))
  }
  /// `ITEM SET <ref> <pos> <text>`: replaces an item's text.
  public static func setItem(at position: Int, to text: String, in section: String) -> Request {
    counted(["setItem(at:)": position], change(.item, form: 3, section, "\(position)", text))
  }

  /// `BATCH`, the changes, `END`: applied as one change, all or none; the revision reached.
  /// The daemon's error names the line that failed (`line 2: ...`), and nothing was changed.
  public static func batch(_ changes: [Request<UInt64>]) -> Request {
    let problem = changes.lazy.compactMap(\.problem).first
    return Request(
      .batch, lines: [Verb.batch.name] + changes.flatMap(\.lines) + [Verb.end.name], replyCount: 1,
      problem: problem, read: revision)
  }

  /// Form `form` of `verb` on `section` (its first value), then `values`; the revision reached.
  /// ITEM's forms are, in its row's order, INSERT, DELETE, MOVE and SET.
  private static func change(_ verb: Verb, form: Int = 0, _ section: String, _ values: String...) -> Request {
    checked(section, .line(verb, form: form, values: [section] + values, read: revision))
  }
}

/// `request`, unless `section` is not one word.
private func checked<Value>(_ section: String, _ request: Request<Value>) -> Request<Value> {
  guard let problem = Request<Value>.word(section), request.problem == nil else { return request }
  return Request(request, problem: problem, readsErrors: request.readsErrors, read: request.read)
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
    request,
    problem: .invalidArgument(
      argument: argument, value: "\(value!)", rule: "a count or position is 0 or more"),
    readsErrors: request.readsErrors, read: request.read)
}
