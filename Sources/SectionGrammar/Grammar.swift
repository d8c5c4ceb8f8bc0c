import SectionShared

/// One word (or, for a text, the rest of the line) that a request takes after its verb.
public enum Argument: Equatable, Sendable {
  /// A section: all digits is its index as LIST shows it, any other word its id.
  case section
  /// A section, or the word ALL: every section.
  case sectionOrAll
  /// This word, in any case: FRESH, FROM, NAME, or the action of an ITEM.
  case keyword(String)
  /// A mode's name: exclusive or multi.
  case mode
  /// A number of changes.
  case count
  /// A number: the index a section moves to.
  case index
  /// A number: the position of an item (`pos`), or where one moves from or to.
  case position(String)
  /// A section's index, or `end`: where a new section goes.
  case indexOrEnd
  /// An item's position, or `end`: where a new item goes.
  case positionOrEnd
  /// A new section's id.
  case id
  /// A title or an item's text: the rest of the line, spaces inside kept.
  case text(String)
  /// A revision of the list.
  case revision
  /// What the history calls the connection (`ClientName`).
  case clientName

  /// How the argument reads in a usage line: `<index|id>`, `FROM`, `exclusive|multi`.
  public var usage: String {
    switch self {
    case .section: "<index|id>"
    case .sectionOrAll: "<index|id|ALL>"
    case .keyword(let word): word
    case .mode: Mode.allCases.map(\.rawValue).sorted().joined(separator: "|")
    case .count: "n"
    case .index: "<index>"
    case .position(let name), .text(let name): "<\(name)>"
    case .indexOrEnd: "<index|end>"
    case .positionOrEnd: "<pos|end>"
    case .id: "<id>"
    case .revision: "<rev>"
    case .clientName: "<name>"
    }
  }

  /// What the daemon's refusal calls a missing or malformed argument.
  public var what: String {
    switch self {
    case .section, .sectionOrAll: "section"
    case .keyword(let word): word
    case .mode: "mode"
    case .count: "count"
    case .index, .indexOrEnd: "index"
    case .position, .positionOrEnd: "position"
    case .id: "id"
    case .text(let name): name
    case .revision: "revision"
    case .clientName: "name"
    }
  }

  /// A word the daemon accepts here, for tests and examples.
  public var example: String {
    switch self {
    case .section, .sectionOrAll, .index, .position: "0"
    case .keyword(let word): word
    case .mode: Mode.multi.rawValue
    case .count: "5"
    case .indexOrEnd, .positionOrEnd: "end"
    case .id: "new"
    case .text: "Some text"
    case .revision: "0"
    case .clientName: "kiosk"
    }
  }
}

/// What a reply holds before its status line, as docs/PROTOCOL.md's table states it.
public enum ReplyData: Equatable, Sendable {
  case none
  /// `version <daemon> <protocol>`.
  case version
  /// A `section` line per section.
  case sections
  /// A `section` line per section, each open one's `item` lines after it.
  case sectionsWithItems
  /// The `section` line of the section changed (none after OPEN ALL or CLOSE ALL).
  case changedSection
  /// An `item` line per item of one section.
  case items
  /// `mode <mode>`.
  case mode
  /// `state <rev> <mode> <open ids>`, or none when the changes since a revision follow as events.
  case state
  /// A `history` line per change.
  case history
  /// A `status <key> <value>` line per fact.
  case facts
  /// A `help` line per verb.
  case help
}

/// How a reply is made: its data lines, whether its `OK` carries the list's revision, and
/// what follows it on the connection.
public struct ReplyShape: Equatable, Sendable {
  /// What follows a reply on the connection.
  public enum After: Equatable, Sendable {
    /// Nothing: the next reply answers the next request.
    case nothing
    /// Event lines, one per change, until UNSUBSCRIBE.
    case events
    /// The daemon closes the connection.
    case close
  }

  /// Its data lines.
  public let data: ReplyData
  /// `OK <rev>` rather than `OK`.
  public let revision: Bool
  /// What follows it: sectionctl's `send` reads no further after a reply that closes.
  public let after: After

  init(_ data: ReplyData, revision: Bool = true, after: After = .nothing) {
    self.data = data
    self.revision = revision
    self.after = after
  }
}

/// One way of calling a verb: the arguments in order, and what the request is.
public struct Form: Equatable, Sendable {
  /// What the daemon checks of a request before it runs it: a value of plain fields, which
  /// the request path reads for every request without copying a row (`Request.facts`).
  public struct Facts: Equatable, Sendable {
    /// The least level that may make the request.
    public let level: AccessLevel
    /// Whether the request may stand between BATCH and END.
    public let inBatch: Bool
    /// Whether the reply shows the list's state (or what is kept depends on it, as RELOAD's),
    /// so that it waits while the changes of other clients are not yet saved.
    public let readsState: Bool

    /// Whether the request changes state: it needs more than `read`.
    public var changesState: Bool { level > .read }
  }

  /// The arguments after the verb, in order.
  public let arguments: [Argument]
  /// What the daemon checks before it runs the request.
  public let facts: Facts
  /// How the daemon answers it.
  public let reply: ReplyShape

  init(
    _ arguments: [Argument] = [], level: AccessLevel = .read, inBatch: Bool = false, readsState: Bool = false,
    reply: ReplyShape
  ) {
    self.arguments = arguments
    facts = Facts(level: level, inBatch: inBatch, readsState: readsState)
    self.reply = reply
  }

  /// The least level that may make the request (`Facts.level`).
  public var level: AccessLevel { facts.level }
  /// Whether the request may stand between BATCH and END (`Facts.inBatch`).
  public var inBatch: Bool { facts.inBatch }
  /// Whether the reply shows the list's state (`Facts.readsState`).
  public var readsState: Bool { facts.readsState }

  /// Whether the request changes state: it needs more than `read`.
  public var changesState: Bool { level > .read }

  /// The request as a line: the verb's name, then each argument, its keyword as the row spells
  /// it and the others `values` in order (a text last, spaces kept): how a client writes it.
  public func line(of verb: Verb, _ values: [String]) -> String {
    var values = values[...]
    let words = arguments.map { argument in
      if case .keyword(let word) = argument { return word }
      precondition(!values.isEmpty, "\(verb.name) takes more values than given")
      return values.removeFirst()
    }
    precondition(values.isEmpty, "\(verb.name) takes fewer values than given")
    return ([verb.name] + words).joined(separator: " ")
  }

  /// The request as a line, each argument its `example`: one the daemon accepts.
  public func example(of verb: Verb) -> String {
    ([verb.name] + arguments.map(\.example)).joined(separator: " ")
  }
}

/// One verb's row of the grammar: its forms and what it does.
public struct Row: Sendable {
  /// The verb the row is of.
  public let verb: Verb
  /// The ways of calling it; a verb with one form has one.
  public let forms: [Form]
  /// What it does, as HELP says it.
  public let summary: String

  init(_ verb: Verb, _ forms: [Form], _ summary: String) {
    self.verb = verb
    self.forms = forms
    self.summary = summary
  }

  /// The syntax, as HELP and the daemon's refusals give it: each form, an optional one (after
  /// a form of no arguments) in brackets, `MODE [exclusive|multi]`, `HISTORY [n] | HISTORY FROM <rev>`.
  public var usage: String {
    let name = verb.name
    let spelled = forms.map { $0.arguments.map(\.usage).joined(separator: " ") }
    guard spelled.count > 1, spelled[0].isEmpty else {
      return spelled.map { $0.isEmpty ? name : "\(name) \($0)" }.joined(separator: " | ")
    }
    return (["\(name) [\(spelled[1])]"] + spelled.dropFirst(2).map { "\(name) \($0)" }).joined(
      separator: " | ")
  }

  /// HELP's line for the verb, without its LF.
  public var helpLine: String { "help \(usage) - \(summary)" }

  /// What the argument at `position` (0 the first after the verb) can be, whichever form is
  /// meant, for a shell that offers words: nil where the forms disagree or nothing can be
  /// offered (a title, a number). A keyword is offered where it chooses among several forms.
  public func offers(at position: Int) -> Offer? {
    let here = forms.compactMap { position < $0.arguments.count ? $0.arguments[position] : nil }
    guard let first = here.first else { return nil }
    switch first {
    case .section, .sectionOrAll:
      guard here.allSatisfy({ $0 == first }) else { return nil }
      return .section(also: first == .sectionOrAll ? ["ALL"] : [])
    case .mode:
      return .words(Mode.allCases.map(\.rawValue).sorted())
    case .keyword:
      guard forms.count > 1, here.count == forms.count else { return nil }
      return .words(here.compactMap { if case .keyword(let word) = $0 { word } else { nil } })
    default:
      return nil
    }
  }

  /// What a shell may offer for an argument.
  public enum Offer: Equatable, Sendable {
    /// A section's id or index, or one of `also` (`ALL`).
    case section(also: [String])
    /// One of these words.
    case words([String])
  }
}

extension Verb {
  /// The verb's row of the grammar.
  public var row: Row { Grammar.rows[index] }

  /// The verb's place among `allCases`, which is its row's in `Grammar.rows`.
  @inlinable public var index: Int {
    switch self {
    case .ping: 0
    case .version: 1
    case .list: 2
    case .items: 3
    case .view: 4
    case .open: 5
    case .close: 6
    case .toggle: 7
    case .mode: 8
    case .subscribe: 9
    case .unsubscribe: 10
    case .help: 11
    case .quit: 12
    case .reload: 13
    case .status: 14
    case .history: 15
    case .client: 16
    case .insert: 17
    case .delete: 18
    case .move: 19
    case .rename: 20
    case .item: 21
    case .batch: 22
    case .end: 23
    }
  }

  /// The syntax (`Row.usage`).
  public var usage: String { row.usage }
}

/// The grammar of protocol 1: one row per verb, in HELP's order, public so that every side
/// that speaks the protocol (the daemon, SectionClient, sectionctl's help and completions)
/// reads the one table rather than keeping a list of its own: the daemon reads a request's
/// words by its verb's forms. A new verb is a row here, a case of `Verb`, and in the daemon its
/// `Request` case, made of the arguments read, and its executor.
public enum Grammar {
  /// How many changes `HISTORY` without a count lists.
  public static let historyDefault = 20

  /// The most forms a verb has (ITEM's four).
  public static let maximumForms = 4

  /// Every verb's row, in the order of `Verb.allCases`.
  public static let rows: [Row] = [
    Row(.ping, [Form(reply: ReplyShape(.none, revision: false))], "check that the daemon answers"),
    Row(
      .version, [Form(reply: ReplyShape(.version, revision: false))], "daemon version and protocol version"),
    Row(
      .list, [Form(readsState: true, reply: ReplyShape(.sections))],
      "every section: index, id, open or closed, item count, title"),
    Row(
      .items, [Form([.section], readsState: true, reply: ReplyShape(.items))],
      "every item of one section, open or not"),
    Row(
      .view, [Form(readsState: true, reply: ReplyShape(.sectionsWithItems))],
      "what an accordion shows: sections, and the items of open ones"),
    Row(
      .open, [Form([.sectionOrAll], level: .operate, inBatch: true, reply: ReplyShape(.changedSection))],
      "open a section (in exclusive mode, closing the open one), or all (multi mode only)"),
    Row(
      .close, [Form([.sectionOrAll], level: .operate, inBatch: true, reply: ReplyShape(.changedSection))],
      "close a section, or all"),
    Row(
      .toggle, [Form([.section], level: .operate, inBatch: true, reply: ReplyShape(.changedSection))],
      "open a closed section or close an open one"),
    Row(
      .mode,
      [
        Form(readsState: true, reply: ReplyShape(.mode)),
        Form([.mode], level: .edit, inBatch: true, reply: ReplyShape(.mode)),
      ], "show the mode, or switch it (to exclusive keeps the most recently opened section)"),
    Row(
      .subscribe,
      [
        Form(readsState: true, reply: ReplyShape(.state, after: .events)),
        Form([.keyword("FROM"), .revision], readsState: true, reply: ReplyShape(.state, after: .events)),
      ],
      "current state, then one event line per change; FROM <rev>: the changes after rev, when all are kept, instead of the state"
    ),
    Row(.unsubscribe, [Form(reply: ReplyShape(.none, revision: false))], "stop receiving events"),
    Row(.help, [Form(reply: ReplyShape(.help, revision: false))], "this list"),
    Row(.quit, [Form(reply: ReplyShape(.none, revision: false, after: .close))], "close the connection"),
    Row(
      .reload,
      [
        Form(level: .edit, readsState: true, reply: ReplyShape(.none)),
        Form([.keyword("FRESH")], level: .edit, readsState: true, reply: ReplyShape(.none)),
      ], "re-read the config file, keeping clients' edits; FRESH drops them (control socket only)"),
    Row(
      .status, [Form(readsState: true, reply: ReplyShape(.facts))],
      "the daemon's process, paths, uptime, clients and subscribers"),
    Row(
      .history,
      [
        Form(readsState: true, reply: ReplyShape(.history)),
        Form([.count], readsState: true, reply: ReplyShape(.history)),
        Form([.keyword("FROM"), .revision], readsState: true, reply: ReplyShape(.history)),
      ], "who changed what, when: the last n changes (default 20), or those after rev"),
    Row(
      .client, [Form([.keyword("NAME"), .clientName], reply: ReplyShape(.none, revision: false))],
      "name this connection in the history (A-Z a-z 0-9 . _ : @ -, at most 64)"),
    Row(
      .insert, [edit([.indexOrEnd, .id, .text("title")])],
      "insert a new closed section with no items (control socket only)"),
    Row(.delete, [edit([.section])], "delete a section (control socket only)"),
    Row(.move, [edit([.section, .index])], "move a section to an index (control socket only)"),
    Row(
      .rename, [edit([.section, .text("title")])],
      "give a section a new title; the id stays (control socket only)"),
    Row(
      .item,
      [
        edit([.keyword("INSERT"), .section, .positionOrEnd, .text("text")]),
        edit([.keyword("DELETE"), .section, .position("pos")]),
        edit([.keyword("MOVE"), .section, .position("from"), .position("to")]),
        edit([.keyword("SET"), .section, .position("pos"), .text("text")]),
      ], "insert, delete, move or replace one item of a section (control socket only)"),
    Row(
      .batch, [Form(level: .operate, reply: ReplyShape(.none))],
      "collect the lines up to END and apply them as one change: all or none"),
    Row(.end, [Form(level: .operate, reply: ReplyShape(.none))], "end a BATCH"),
  ]

  /// A form of a runtime edit: it changes the list itself, and may stand in a batch.
  private static func edit(_ arguments: [Argument]) -> Form {
    Form(arguments, level: .edit, inBatch: true, reply: ReplyShape(.none))
  }
}
