/// The history (`HISTORY`, the journal's `by` lines, the state file's lines, `--log-changes`):
/// who made each change and when, kept by `History` once the change is saved.
extension SectionService {
  /// `HISTORY`: the `history` lines of the changes from `position` (the oldest is 0), then
  /// `OK <rev>`, as a stream when they do not fit in one part.
  func startLines(from position: Int, access: Access, reply: inout OutputQueue) -> Outcome {
    guard position < history.count, let oldest = history.oldestRevision, let newest = history.newestRevision
    else {
      appendStatus(to: &reply.tail)
      return .replied
    }
    let kind = HistoryStream.Kind.lines(
      through: newest, revision: model.revision, blankingWho: !access.seesWho)
    return start(HistoryStream(next: oldest + UInt64(position), kind: kind), reply: &reply)
  }

  /// The position of the first change `HISTORY` (`.history`, `.historyFrom`) lists; GONE when
  /// the changes after its revision are not all kept.
  func listed(by request: Request) throws(ProtocolError) -> Int {
    switch request {
    case .historyFrom(let revision):
      guard let position = history.position(after: revision, current: model.revision) else {
        throw goneError(revision)
      }
      return position
    case .history(let last): return history.count - min(last, history.count)
    default: preconditionFailure("\(request.verb.name) lists no history")
    }
  }

  /// The changes from `position` to the newest as values, as `HISTORY`'s lines show them to
  /// `access`.
  func records(from position: Int, access: Access) -> [HistoryRecord] {
    (position..<history.count).map {
      history.record($0, blankingWho: !access.seesWho, processName: processName)
    }
  }

  /// Sends the first part of `stream`: `.streaming` when more is left, else what the request's
  /// answer is once whole.
  func start(_ stream: HistoryStream, reply: inout OutputQueue) -> Outcome {
    var stream = stream
    switch continueStream(&stream, to: &reply) {
    case .more:
      startedStream = stream
      return .streaming
    case .done, .gone:
      return stream.isReplay ? .subscribe : .replied
    }
  }

  /// The stream the request just handled began (`.streaming`): the server keeps it with the
  /// connection and asks for its parts.
  public func takeStream() -> HistoryStream? {
    defer { startedStream = nil }
    return startedStream
  }

  /// Appends the next part of `stream` to `reply`, until `reply` holds `limit` bytes (and at
  /// most one line more): the `history` lines and, after the last, `OK <rev>`; or the events of
  /// a replay up to the newest change kept. A change that went from the history meanwhile ends
  /// `HISTORY`'s reply with `ERR GONE`, and a replay with `.gone` (its subscriber is owed the
  /// state).
  public func continueStream(
    _ stream: inout HistoryStream, to reply: inout OutputQueue, limit: Int = HistoryStream.partBytes
  ) -> HistoryStream.Progress {
    switch stream.kind {
    case .lines(let through, let revision, let blankingWho):
      while stream.next <= through {
        if reply.count >= limit { return .more }
        guard let position = history.position(of: stream.next) else {
          reply.append(contentsOf: wentWhileSending(stream.next).line)
          return .gone
        }
        reply.append("history ")
        history.appendLine(
          position, blankingWho: blankingWho, clock: &historyClock, processName: processName, to: &reply.tail)
        stream.next += 1
      }
      reply.append("OK ")
      reply.appendDecimal(revision)
      reply.append("\n")
      return .done
    case .replay:
      while true {
        guard let newest = history.newestRevision else { return stream.next > model.revision ? .done : .gone }
        if stream.next > newest { return .done }
        if reply.count >= limit { return .more }
        guard let position = history.position(of: stream.next) else { return .gone }
        reply.append(contentsOf: history.event(position))
        stream.next += 1
      }
    }
  }

  /// `HISTORY FROM revision` cannot be answered: which of its two reasons it is, with the numbers.
  func goneError(_ revision: UInt64) -> ProtocolError {
    let oldest = history.oldestKept(current: model.revision)
    let reason =
      revision > model.revision
      ? "revision \(revision) is newer than the state's (\(model.revision))"
      : "revision \(revision) is older than \(oldest - 1), the one before it: the changes after \(revision) are not all kept"
    return ProtocolError(
      .gone, "\(oldest) is the oldest revision kept, and \(reason); SUBSCRIBE gets the state")
  }

  /// A `HISTORY` reply being sent lost its next change to newer ones before the client read it.
  private func wentWhileSending(_ revision: UInt64) -> ProtocolError {
    let oldest = history.oldestKept(current: model.revision)
    return ProtocolError(
      .gone,
      "\(oldest) is the oldest revision kept: revision \(revision) went from the history while this reply waited for the client to read it; HISTORY FROM \(oldest - 1) lists the changes kept now"
    )
  }

  /// The journal's `by <time> <via> <uid> <pid> <name>` line: the changes after it in the group
  /// are `author`'s, made at the group's time. One line for a client's run of changes, not one a
  /// change: at 16 in flight a line with each change made the journal ten times longer and the
  /// history cost a TOGGLE half its CPU (perf).
  @inline(__always)
  func journalAuthor(_ author: Author) {
    journal.appendText { line in
      line.append("by ")
      historyClock.append(milliseconds: pendingHistory.time, to: &line)
      line.append(" ")
      line.append(contentsOf: author.who(processName))
      line.append("\n")
    }
    authorJournaled = true
  }

  /// `history` with the unsaved changes kept too.
  func keepUnsaved(in history: inout History) {
    history.append(pendingHistory, events: pendingEvents)
  }

  func appendLines(of history: History, from position: Int, blankingWho: Bool, to buffer: inout [UInt8]) {
    for position in position..<history.count {
      history.appendLine(
        position, blankingWho: blankingWho, clock: &historyClock, processName: processName, to: &buffer)
    }
  }

  /// The start moved the revision on from the saved one (`savedRevision`), opening what the
  /// config opens: that is a reload by `author` (the daemon) in the history, so that it stays
  /// unbroken.
  public func recordStart(after savedRevision: UInt64, by author: Author) {
    guard history.capacity > 0, model.revision == savedRevision + 1 else { return }
    var event: [UInt8] = []
    event.appendText { text in
      text.append("!reload ")
      text.appendDecimal(model.revision)
      text.append("\n")
    }
    history.append(revision: model.revision, time: clock(), author: author, event: event)
  }
}
