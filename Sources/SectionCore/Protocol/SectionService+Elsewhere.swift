import SectionShared

/// Groups from elsewhere: where the list is shared with other hosts (a commit backend that is
/// not the state file), a host applies the groups the others committed as changes of its own
/// (the same events, journal lines and history records, so that every host's subscribers and
/// history agree), and adopts the shared whole state when it joins or fell too far behind.
/// Both happen between commits, never beside unsaved changes.
extension SectionService {
  /// Applies the changes of a group another host committed, with who made each (`authors`, by
  /// revision, as the journal's `by` lines have them). They become this host's unsaved group,
  /// which the server saves and hands on as any other (`commit`). Throws, changing nothing,
  /// when they do not apply here: the host's state is not the one the group followed. A change
  /// without an author (written by a host that did not journal them, or whose `by` line does not
  /// read) is shown as made through `host`, the host the entry names, not as this one's.
  public func applyRemote(_ changes: [Change], authors: [UInt64: SavedAuthor], through host: [UInt8]? = nil)
    throws(ProtocolError)
  {
    precondition(saved == nil, "a remote group is applied between commits")
    guard let first = changes.first, first.revision == model.revision + 1 else {
      throw ProtocolError(
        .internal, "the group at revision \(changes.first?.revision ?? 0) does not follow \(model.revision)")
    }
    saved = .checkpoint(model.checkpoint)
    let ownClock = clock
    defer { clock = ownClock }
    var position = 0
    do throws(ProtocolError) {
      while position < changes.count {
        let who = authors[changes[position].revision]
        var end = position + 1
        while end < changes.count && authors[changes[end].revision] == who { end += 1 }
        let (time, author) = remoteAuthor(who, through: host)
        clock = { time }
        let start = unsaved.count
        for change in changes[position..<end] { try model.replay(change, into: &unsaved) }
        try recordChanges(from: start, author: author)
        position = end
      }
    } catch {
      rollback()
      throw error
    }
  }

  /// The author a `by` line names, as every host shows it (its name as written, the host
  /// included), and when the change was made; unknown when the group came without one.
  private func remoteAuthor(_ saved: SavedAuthor?, through host: [UInt8]?) -> (UInt64, Author) {
    guard let saved else {
      let author = Author(via: .socket, uid: nil, pid: nil)
      if let host { author.stamp(host: host) }
      return (clock(), author)
    }
    if let last = lastRemoteAuthor, last.isRendered(as: saved.who) { return (saved.time, last) }
    let author = Author(saved)
    lastRemoteAuthor = author
    return (saved.time, author)
  }

  /// Replaces the list, its open sections, revision and history with the shared `state`: the
  /// host joins, or the shared log was compacted past what this host applied, or another host
  /// reloaded the list. Subscribers must then be sent `!state`.
  public func adopt(_ state: SavedState) {
    precondition(saved == nil, "a shared state is adopted between commits")
    model = state.restored
    history = History(capacity: history.capacity, lines: state.history, revision: state.revision)
    forgetRendered()
    rebuildRendered()
  }

  /// Answers a read while a group is sealed, from the state as last committed: a view made
  /// once per sealed group, at its first read (a copy of the list, the group undone). A
  /// subscriber gets that state's snapshot, and the group's events once it is committed.
  func readCommitted(_ request: Request, session: inout Session, reply: inout OutputQueue)
    throws(ProtocolError)
    -> Outcome
  {
    if committedView == nil {
      var committed = model
      switch saved {
      case .checkpoint(let checkpoint)?: committed.restore(checkpoint, undoing: unsaved)
      case .copy(let copy)?: committed = copy
      case nil: break
      }
      let view = SectionService(model: committed, limits: limits, history: history)
      view.statusFields = statusFields
      view.clock = clock
      view.processName = processName
      committedView = view
    }
    let view = committedView!
    let outcome = try view.execute(request, session: &session, reply: &reply)
    if outcome == .streaming { startedStream = view.takeStream() }
    return outcome
  }
}
