import SectionGrammar
import SectionShared

extension Reply {
  /// Whether the reply's data lines and its `OK` are what the grammar's row says `verb`
  /// answers (`ReplyShape`): a line of a kind the reply does not hold, or a change's `OK`
  /// without its revision, is a daemon this library cannot read. An `ERR` has no data to hold
  /// to the shape; lines of a keyword the library does not know (`DataLine.other`) pass, so
  /// that a newer daemon may add some.
  @inline(__always)
  func check(_ shape: ReplyShape, of verb: Verb) throws(ClientError) {
    guard case .ok(let revision) = status else { return }
    if shape.revision, revision == nil { throw Reply.withoutRevision(after: verb) }
    switch lines {
    case .none: return
    case .one(let line): try shape.data.check(line.kind, after: verb)
    case .many(let lines): for line in lines { try shape.data.check(line.kind, after: verb) }
    }
  }
}

extension Reply {
  /// The refusal of a plain `OK` where `verb`'s reply carries the list's revision.
  fileprivate static func withoutRevision(after verb: Verb) -> ClientError {
    let changes = verb.row.forms.allSatisfy(\.changesState)
    return .malformedReply(
      changes ? "OK without the revision of the change" : "OK without the list's revision after \(verb.name)")
  }
}

extension ReplyData {
  /// Whether a reply of this shape holds a line of `kind`.
  func holds(_ kind: DataLine.Kind) -> Bool {
    switch (kind, self) {
    case (.other, _), (.section, .sections), (.section, .sectionsWithItems), (.section, .changedSection),
      (.item, .sectionsWithItems), (.item, .items), (.state, .state), (.mode, .mode), (.version, .version),
      (.help, .help), (.history, .history):
      true
    default: false
    }
  }

  fileprivate func check(_ kind: DataLine.Kind, after verb: Verb) throws(ClientError) {
    guard !holds(kind) else { return }
    throw .malformedReply("a \(kind) line in the reply to \(verb.name)")
  }
}

extension DataLine {
  /// What a data line is, without what it holds: its keyword.
  enum Kind: String {
    case section, item, state, mode, version, help, history, other
  }

  var kind: Kind {
    switch self {
    case .section: .section
    case .item: .item
    case .state: .state
    case .mode: .mode
    case .version: .version
    case .help: .help
    case .history: .history
    case .other: .other
    }
  }
}
