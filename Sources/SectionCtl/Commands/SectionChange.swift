import SectionClient

/// What `open`, `close` and `toggle` share: their references read, and the changes sent.
enum SectionChange {
  /// The help of `open` and `close`, in the words of each: what was `done` to the sections,
  /// and what `--all` does.
  static func details(done: String, all: String) -> String {
    """
    Arguments:
      REF     a section's index or id; several are \(done) in the order given
    Options:
      --all   \(all)
    Each REF is a request of its own, not all or nothing: one the daemon refuses (no such
    section) is reported and the others still happen; 'sectionctl batch' is all or nothing.
    Prints the sections named, as they are after the last change. With --json: {\"revision\", \"sections\": [...]}.
    """
  }

  /// `action`'s sections, or every one (`--all`, for open and close: `CommandOption.scope`).
  static func parse(_ action: SectionAction, _ arguments: [String], all: Bool) throws(CommandLineError)
    -> Command
  {
    let name = action.rawValue
    if all {
      guard arguments.isEmpty else {
        throw .usage("\(name) --all takes no sections, got '\(arguments[0])'")
      }
      return .changeAll(action)
    }
    guard !arguments.isEmpty else {
      let all = action == .toggle ? "" : ", or --all"
      throw .usage("\(name) needs at least one section (an index or an id)\(all)")
    }
    var refs: [String] = []
    for argument in arguments { refs.append(try ArgumentParser.reference(argument)) }
    return .change(action, refs: refs)
  }
}

extension Runner {
  /// Runs `.change` and `.changeAll`.
  func runChange() throws(ClientError) -> ExitStatus {
    switch invocation.command {
    case .change(let action, let refs): return try change(refs.map { .change(action, $0) })
    case .changeAll(let action):
      try changeAll(action)
      return .success
    default: preconditionFailure("open, close and toggle run .change and .changeAll")
    }
  }

  /// `open --all`, `close --all`: OPEN ALL or CLOSE ALL between two LISTs, in one round trip,
  /// and the rows of the sections whose state it changed, as `open REF` prints them.
  private func changeAll(_ action: SectionAction) throws(ClientError) {
    // The parser takes --all for open and close alone.
    let all: Request<UInt64> = action == .open ? .openAll : .closeAll
    let list = Request<Listing>.list.asReply
    let replies = try connect().replies(to: [list, all.asReply, list])
    let before = try replies[0].succeeded().sections
    _ = try replies[1].succeeded()
    let after = try replies[2].succeeded()
    let changed = after.sections.filter { section in
      before.first { $0.id == section.id }?.isOpen != section.isOpen
    }
    show(
      text: TextRenderer.changed(changed, style: style),
      json: JSONRenderer.sections(changed, revision: after.revision))
  }

  /// Sends every change at once, then LIST, in one round trip; each change the daemon refuses is
  /// reported, the rest still happen. The sections shown are read from that LIST, as they are
  /// after the last change: in exclusive mode a later OPEN closes a section an earlier one opened.
  private func change(_ requests: [Request<UInt64>]) throws(ClientError) -> ExitStatus {
    let outcomes = try connect().perform(each: requests.map(\.asReply) + [Request<Listing>.list.asReply])
    var changed: [Int] = []
    var succeeded = false
    var status = ExitStatus.success
    for outcome in outcomes.dropLast() {
      do {
        changed += try outcome.get().succeeded().sections.map(\.index)
        succeeded = true
      } catch {
        output.report(.client(invocation.readonly ? error.onReadonlySocket : error))
        status = error.exitStatus
      }
    }
    if succeeded {
      let list = try outcomes[outcomes.count - 1].get().succeeded()
      let final = changed.compactMap { index in list.sections.first { $0.index == index } }
      show(
        text: TextRenderer.changed(final, style: style),
        json: JSONRenderer.sections(final, revision: list.revision))
    }
    return status
  }
}
