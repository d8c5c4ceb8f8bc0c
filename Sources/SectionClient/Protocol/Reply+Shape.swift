import SectionGrammar
import SectionShared

extension Reply {
  /// The reply, when its data lines and its `OK` are what the grammar's row says `verb`
  /// answers (`ReplyShape`): a line of a kind the reply does not hold, or a change's `OK`
  /// without its revision, is a daemon this library cannot read. An `ERR` has no data to hold
  /// to the shape; lines of a keyword the library does not know (`DataLine.other`) pass, so
  /// that a newer daemon may add some.
  func fitting(_ shape: ReplyShape, of verb: Verb) throws(ClientError) -> Reply {
    guard case .ok(let revision) = status else { return self }
    if shape.revision, revision == nil {
      let changes = verb.row.forms.allSatisfy(\.changesState)
      throw .malformedReply(
        changes
          ? "OK without the revision of the change" : "OK without the list's revision after \(verb.name)")
    }
    switch lines {
    case .none: break
    case .one(let line): try shape.data.check(line, after: verb)
    case .many(let lines): for line in lines { try shape.data.check(line, after: verb) }
    }
    return self
  }
}

extension ReplyData {
  /// Whether a reply of this shape holds `line`.
  func holds(_ line: DataLine) -> Bool {
    switch (line, self) {
    case (.other, _), (.section, .sections), (.section, .sectionsWithItems), (.section, .changedSection),
      (.item, .sectionsWithItems), (.item, .items), (.state, .state), (.mode, .mode), (.version, .version),
      (.help, .help), (.history, .history):
      true
    default: false
    }
  }

  fileprivate func check(_ line: DataLine, after verb: Verb) throws(ClientError) {
    guard !holds(line) else { return }
    throw .malformedReply("a \(line.keyword) line in the reply to \(verb.name)")
  }
}

extension DataLine {
  /// The keyword the line begins with.
  var keyword: String {
    switch self {
    case .section: "section"
    case .item: "item"
    case .state: "state"
    case .mode: "mode"
    case .version: "version"
    case .help: "help"
    case .history: "history"
    case .other(let line): String(line.prefix { $0 != " " })
    }
  }
}
