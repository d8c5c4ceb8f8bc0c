/// Protocol 1 over a `SectionModel`: executes request lines and renders replies and events as bytes.
///
/// It does no I/O. The server hands it each line with the connection's access and an output
/// buffer, and is told what else to do (commit, subscribe, close). Changes stay "uncommitted"
/// until the server has saved them: `commit()` then releases their events, `rollback()` undoes them.
public final class SectionService {
  public static let daemonVersion = Release.daemonVersion
  public static let protocolVersion = Release.protocolVersion

  /// What a client may do (its `AccessLevel`), and whether it came in on the read-only socket,
  /// whose refusals keep their own code (`ERR READONLY`, which names the socket to use instead
  /// of a level to ask for). A socket connection's is decided once, when it is accepted; a bus
  /// call's from its caller.
  public struct Access: Equatable, Sendable {
    public let level: AccessLevel
    public let readOnlySocket: Bool

    /// A connection of the control socket (or a face like it) at `level`.
    public init(level: AccessLevel) {
      self.level = level
      readOnlySocket = false
    }

    private init(readOnlySocket: Void) {
      level = .read
      self.readOnlySocket = true
    }

    /// The control socket's access when no rule lowers it: every request.
    public static let control = Access(level: .edit)
    /// The read-only socket's, whoever connects.
    public static let readOnly = Access(readOnlySocket: ())

    /// Whether the client may see who made each change and the daemon's own facts (history's
    /// uid and pid, STATUS's paths): what the read-only socket never showed (SECURITY.md).
    public var seesWho: Bool { level > .read }

    /// The refusal of `request`, which needs more than this access has; `line` is its line
    /// in a batch.
    func refusal(of request: Request, line: Int? = nil) -> ProtocolError {
      readOnlySocket
        ? ProtocolError(.readOnly, "\(request.verb.name) changes state; use the control socket")
        : .denied(request.verb.name, needs: request.level, has: level, line: line)
    }
  }

  /// What the server must do after a request, beyond sending the reply.
  public enum Outcome: Equatable, Sendable {
    case replied
    /// State changed: save it before sending this reply; further requests wait for that.
    case changed
    case subscribe
    case unsubscribe
    /// Close once the reply is sent.
    case quit
    /// Re-read the config, then call `reload(_:by:reply:)`, or `refuseReload(_:)` when the
    /// config does not load or the reload throws.
    case reload
    /// Nothing was replied: the answer would show changes of other clients that are not saved
    /// yet (and may still fail to save). Hand the same line in again once they are saved.
    case deferred
    /// A long answer from the history was begun (`HISTORY`, or the replay of `SUBSCRIBE
    /// FROM`, which subscribes once it is done): `takeStream()` hands over the rest, which
    /// `continueStream` makes part by part as the client reads.
    case streaming
  }

  public internal(set) var model: SectionModel
  /// How to get back to the model as last saved, while there are unsaved changes.
  var saved: Saved?
  /// The unsaved changes, oldest first, to undo them with `saved`'s checkpoint.
  var unsaved: [Change] = []
  /// Events of unsaved changes, rendered once for all subscribers.
  public private(set) var pendingEvents: [UInt8] = []
  /// Journal lines of the unsaved changes (see `Journal`), for the server to append.
  public internal(set) var journal: [UInt8] = []
  /// Whether the unsaved changes must be saved as a whole state file (a reload: the journal
  /// records edits, not configs).
  public private(set) var needsSnapshot = false
  /// Whether changes may be made now, and whether the unsaved ones are sealed: the commit
  /// backend's (`ChangeGate`), handed to the service once the backend is chosen.
  public var gate = ChangeGate()
  /// Whether `handle` keeps each request it parses (`lastRequest`): set when the commit backend
  /// may answer a group with a retry, whose requests then run again.
  public var keepsRequests = false
  /// The last request `handle` parsed, while `keepsRequests`: the server keeps it with the
  /// group it joins.
  public private(set) var lastRequest: KeptRequest?
  /// The host this daemon serves as where the list is shared with other hosts: the history
  /// shows every change's author as `<name>@<host>` on every host. Nil for a list of this host
  /// alone, where names are as they were.
  public var host: [UInt8]?
  /// The author of the last group another host committed (`applyRemote`): the next is
  /// most often by the same, and one object keeps the history's author table small.
  var lastRemoteAuthor: Author?
  /// While a group is sealed: the state as last committed, made at the first read that comes
  /// meanwhile (`readCommitted`), dropped with the group.
  var committedView: SectionService?
  public let limits: EditLimits
  /// What STATUS reports beside the revision, as (key, value) pairs of single-line text: the
  /// server's facts (process, paths, clients), which this I/O-free type cannot know itself.
  /// Asked with the access of the client that asks: a read-level client is told less
  /// (SECURITY.md, "What a read-only client learns from STATUS").
  public var statusFields: (Access) -> [(String, String)] = { _ in [] }
  /// The last request refused as above its client's level (`ERR DENIED`), with who sent it,
  /// until the face takes it (`takeDenial`) to log it once its reply stands: a reply that
  /// waits for a save is made again. The read-only socket's refusals, which every local user
  /// may provoke and which name no level, are not kept.
  public private(set) var denial: (author: Author, refusal: ProtocolError)?

  /// The refusal `denial` holds, which it no longer does.
  public func takeDenial() -> (author: Author, refusal: ProtocolError)? {
    defer { denial = nil }
    return denial
  }
  /// The RELOAD being done is RELOAD FRESH: `reload(_:by:reply:)` drops clients' edits.
  private var reloadDropsEdits = false
  var rendered: RenderedSections
  private var listCache: [UInt8] = []
  private var viewCache: [UInt8] = []
  /// `snapshot`, rendered once per state for every SUBSCRIBE and `!state`.
  private var snapshotCache: [UInt8] = []

  /// The last saved changes with who made them (`HISTORY`, `SUBSCRIBE FROM`).
  public internal(set) var history: History
  /// The author of the changes being recorded into the unsaved group: a change of another
  /// session's author begins a new run in the group's history and a new `by` line in its
  /// journal. Its identity only, not a reference (a retain and a release per run, callgrind):
  /// the group's authors keep it alive, and when they are dropped, so is the run
  /// (`pendingHistory`'s author and `authorJournaled` are reset with them).
  private var recordingAuthor: UInt = 0
  /// The wall-clock time in milliseconds since the epoch, for the history.
  public var clock: () -> UInt64 = { 0 }
  /// The name of process `pid` (its `comm`), for an author that gave none; nil when unknown.
  public var processName: (Int32) -> String? = { _ in nil }
  /// The unsaved changes for the history: who made each, and where its event is in
  /// `pendingEvents`.
  var pendingHistory = History.Group()
  /// Whether the journal's last `by` line of the unsaved group names `recordingAuthor`.
  var authorJournaled = false
  var historyClock = HistoryClock()
  /// The stream the last request began (`.streaming`), until the server takes it.
  var startedStream: HistoryStream?

  public init(model: SectionModel, limits: EditLimits = EditLimits(), history: History = History(capacity: 0))
  {
    self.model = model
    self.limits = limits
    self.history = history
    rendered = RenderedSections(model.sections)
  }

  /// The model as last saved: a checkpoint, and the changes since undone one by one; or, once a
  /// reload replaced the sections, a copy (reloads are rare, and their cost is the list's anyway).
  enum Saved {
    case checkpoint(SectionModel.Checkpoint)
    case copy(SectionModel)
  }

  public var hasUnsavedChanges: Bool { saved != nil }

  /// The revision of the state as last saved: the model's, before the unsaved changes. What a
  /// refusal of them may say the reads are served from, since the refusal undoes them.
  public var savedRevision: UInt64 {
    switch saved {
    case nil: model.revision
    case .checkpoint(let checkpoint): checkpoint.revision
    case .copy(let model): model.revision
    }
  }

  /// Executes one request line of a socket: parsed into its `Request`, which goes where a
  /// request of every face goes (`execute`); a refusal becomes its `ERR` line. Returns nil for
  /// a blank line, and for the lines of a batch before its END, which get no reply. `batch` is
  /// the connection's open BATCH, if any.
  public func handle(
    _ line: ArraySlice<UInt8>, session: inout Session, batch: inout Batch?, reply: inout OutputQueue
  ) -> Outcome? {
    if batch != nil, !RequestParser.isEnd(line) {
      batch!.add(line, limit: limits.batchLines)
      return nil
    }
    // PING, every client's keep-alive and barrier, is answered before a `Request` is built:
    // building, copying and destroying that enum cost a PING two thirds of its instructions.
    if RequestParser.isPing(line) {
      reply.append("OK\n")
      return .replied
    }
    switch RequestParser.parse(line) {
    case nil: return nil
    case .failure(let error)?:
      reply.append(contentsOf: error.line)
      return .replied
    case .success(let request)?:
      if keepsRequests { keep(request, batch: batch) }
      return run(request, session: &session, batch: &batch, reply: &reply)
    }
  }

  /// Executes `request`, a refusal becoming its `ERR` line: `handle`'s, and a kept request's
  /// when it runs again.
  @inline(__always)
  func run(_ request: Request, session: inout Session, batch: inout Batch?, reply: inout OutputQueue)
    -> Outcome?
  {
    do throws(ProtocolError) {
      return try execute(request, session: &session, batch: &batch, reply: &reply)
    } catch {
      reply.append(contentsOf: error.line)
      return .replied
    }
  }

  /// Keeps the request `handle` is about to run as `lastRequest` (an END, the batch it ends),
  /// out of line: without a backend that retries the request path pays one look at a flag.
  @inline(never)
  private func keep(_ request: Request, batch: Batch?) {
    if case .end = request, let batch {
      lastRequest = .batch(batch)
    } else {
      lastRequest = .request(request)
    }
  }

  /// Executes one request of any face, as a value: the socket's parsed line, or what a bus
  /// call stands for (`BATCH`'s lines come as `batch`, ended by `.end`). What it shows is
  /// rendered into `reply`, ending with its `OK` status; a refusal is thrown, a value. Returns
  /// nil after `.batch` (the lines follow); `.deferred` when the answer would show changes
  /// of others not saved yet: hand the same request in again after the save.
  /// Inlined into `handle`: a socket's request pays no call between them (callgrind).
  @inline(__always)
  public func execute(
    _ request: Request, session: inout Session, batch: inout Batch?, reply: inout OutputQueue
  ) throws(ProtocolError) -> Outcome? {
    let facts = request.facts  // read once: the grammar's table, not a switch
    if facts.level > session.access.level { throw refusal(of: request, by: session) }
    if hasUnsavedChanges && facts.readsState {
      // A sealed group may wait seconds for its commit elsewhere: reads are answered from the
      // state as last committed meanwhile, never from the group's.
      guard gate.sealed, !facts.changesState else { return .deferred }
      return try readCommitted(request, session: &session, reply: &reply)
    }
    do throws(ProtocolError) {
      switch request {
      case .batch:
        batch = Batch()
        return nil
      case .end:
        guard let lines = batch else { throw ProtocolError(.syntax, "END without BATCH") }
        let outcome = try apply(lines, session: session, reply: &reply)
        if outcome != .deferred { batch = nil }
        return outcome
      default:
        return try execute(request, session: &session, reply: &reply)
      }
    } catch {
      // NOSECTION and MODE depend on the state as much as a LIST does (a batch that
      // waits stays open, to be tried again whole).
      if hasUnsavedChanges { return .deferred }
      batch = nil
      throw error
    }
  }

  /// The refusal of `request` (line `line` of a batch), above what `session` may; out of line,
  /// so that the requests allowed pay nothing for it.
  @inline(never)
  func refusal(of request: Request, by session: Session, line: Int? = nil) -> ProtocolError {
    let refusal = session.access.refusal(of: request, line: line)
    if refusal.code == .denied { denial = (session.author, refusal) }
    return refusal
  }

  func execute(_ request: Request, session: inout Session, reply: inout OutputQueue)
    throws(ProtocolError) -> Outcome
  {
    let access = session.access
    switch request {
    case .ping:
      reply.append("OK\n")
    case .version:
      reply.append(utf8: "version \(SectionService.daemonVersion) \(SectionService.protocolVersion)\nOK\n")
    case .list:
      if listCache.isEmpty { renderList(into: &listCache, withItems: false) }
      reply.append(shared: listCache[...])
    case .view:
      if viewCache.isEmpty { renderList(into: &viewCache, withItems: true) }
      reply.append(shared: viewCache[...])
    case .items(let ref):
      let index = try resolve(ref)
      reply.append(shared: rendered.items(index, of: model.sections[index].items))
      appendStatus(to: &reply.tail)
    // The section is resolved once, and the closure captures its index, not the request (a
    // copy of the enum through its value witnesses; callgrind: ~250 instructions a TOGGLE).
    case .open(.section(let ref)):
      let index = try resolve(ref)
      return try change(showing: index, author: session.author, reply: &reply) {
        $0.open(index, changes: &$1)
      }
    case .close(.section(let ref)):
      let index = try resolve(ref)
      return try change(showing: index, author: session.author, reply: &reply) {
        $0.close(index, changes: &$1)
      }
    case .toggle(let ref):
      let index = try resolve(ref)
      return try change(showing: index, author: session.author, reply: &reply) {
        $0.toggle(index, changes: &$1)
      }
    case .mode(nil):
      appendModeReply(to: &reply.tail)
    case .mode(.some):
      return try change(author: session.author, reply: &reply, showingMode: true) {
        [limits] (model, changes) throws(ProtocolError) in
        try model.perform(request, limits: limits, changes: &changes)
      }
    case .open(.all), .close(.all), .insert, .delete, .move, .rename, .itemInsert, .itemDelete, .itemMove,
      .itemSet:
      return try change(author: session.author, reply: &reply) {
        [limits] (model, changes) throws(ProtocolError) in
        try model.perform(request, limits: limits, changes: &changes)
      }
    case .subscribe:
      reply.append("state ")
      reply.append(shared: snapshot)
      appendStatus(to: &reply.tail)
      return .subscribe
    case .subscribeFrom(let revision):
      guard history.position(after: revision, current: model.revision) != nil else {
        return try execute(.subscribe, session: &session, reply: &reply)
      }
      reply.append("OK ")
      reply.appendDecimal(revision)
      reply.append("\n")
      return start(HistoryStream(next: revision + 1, kind: .replay), reply: &reply)
    case .history, .historyFrom:
      return startLines(from: try listed(by: request), access: access, reply: &reply)
    case .clientName(let name):
      session.author = session.author.named(Array(name))
      reply.append("OK\n")
    case .unsubscribe:
      reply.append("OK\n")
      return .unsubscribe
    case .help:
      reply.append(contentsOf: RenderedSections.help)
    case .quit:
      reply.append("OK\n")
      return .quit
    case .reload:
      return gate.sealed ? .deferred : .reload
    case .reloadFresh:
      if gate.sealed { return .deferred }
      reloadDropsEdits = true
      return .reload
    case .status:
      // The client's own level; the read-only socket's is always read, and its STATUS stays
      // the three facts SECURITY.md lists.
      if !access.readOnlySocket { reply.append(utf8: "status access \(access.level.rawValue)\n") }
      for (key, value) in statusFields(access) { reply.append(utf8: "status \(key) \(value)\n") }
      appendStatus(to: &reply.tail)
    case .batch, .end:
      preconditionFailure("handled with the connection's batch")
    }
    return .replied
  }

  /// The index `ref` names now. Through an inout access: calling a method of `model`, a struct
  /// stored in this class, copies it first (a retain and a release of each of its arrays and
  /// sets), which cost a TOGGLE a tenth of its CPU.
  func resolve(_ ref: SectionRef) throws(ProtocolError) -> Int {
    func resolve(in model: inout SectionModel) throws(ProtocolError) -> Int { try model.resolve(ref) }
    return try resolve(in: &model)
  }

  /// Applies a change to the model, renders its events and reply; `.changed` when anything moved.
  /// A change that moves nothing while others wait for the save is `.deferred`: its reply
  /// would show their unsaved state.
  /// A change that fails has changed nothing (edits check before they change, batches are
  /// undone by `apply`).
  ///
  /// What one request may do is bounded (`EditLimits.requestChanges`, `renderedLimit`): past
  /// a bound it is `ERR LIMIT` and undone. What one loop turn does is bounded too: a change
  /// waits for the next turn (`.deferred`) once the changes of this turn waiting for their
  /// save reach `EditLimits.requestChanges` or render `Batch.byteLimit`, so a turn makes at
  /// most about two requests' worth, however many clients send at once.
  ///
  /// `body` appends the request's changes to the list it is given, which holds the turn's
  /// unsaved changes before them.
  func change(
    showing index: Int? = nil, author: Author, reply: inout OutputQueue, showingMode: Bool = false,
    _ body: (inout SectionModel, inout [Change]) throws(ProtocolError) -> Void
  ) throws(ProtocolError) -> Outcome {
    if let refusal = gate.refusal { throw refusal }
    let othersUnsaved = saved != nil
    if turnIsFull || gate.sealed { return .deferred }
    guard model.hasRoomForAChange else {
      if othersUnsaved { return .deferred }
      reply.append(contentsOf: ProtocolError.revisionsExhausted.line)
      return .replied
    }
    let before = model.checkpoint
    if !othersUnsaved { saved = .checkpoint(before) }
    // The body appends to `unsaved` itself: a list of this request's changes of its own was
    // emptied, filled and copied over for every request (callgrind: ~200 instructions a TOGGLE).
    let start = unsaved.count
    var renderedStepped = false
    do {
      try body(&model, &unsaved)
      try limits.checkRequest(unsaved.count - start, revision: model.revision)
      renderedStepped = unsaved.count > start
      try recordChanges(from: start, author: author)
    } catch {
      if unsaved.count > start { model.restore(before, undoing: unsaved[start...]) }
      if renderedStepped { rebuildRendered() }
      unsaved.removeSubrange(start...)
      if !othersUnsaved { saved = nil }
      throw error
    }
    let changed = unsaved.count > start
    if !changed {
      if othersUnsaved { return .deferred }
      saved = nil
    }
    reply.tail.appendText { text in
      if let index { rendered.appendSectionLine(index, open: model.isOpen(index), to: &text) }
      if showingMode { appendModeLine(to: &text) }
      appendStatus(to: &text)
    }
    return changed ? .changed : .replied
  }

  /// Whether this turn's unsaved changes already hold about a request's worth: then further
  /// changes wait for the next turn (see `change`).
  var turnIsFull: Bool {
    saved != nil
      && (unsaved.count >= limits.requestChanges || journal.count + pendingEvents.count >= Batch.byteLimit)
  }

  /// The most bytes of events and journal one request may render. Each event and journal
  /// line of an edit repeats the section's id, so 10,000 one-byte ITEM INSERTs into a
  /// section with a 4,000-byte id rendered 80 MB in one turn from a 200 KB batch; and
  /// OPEN ALL on sections with long ids renders their ids once per OPEN ALL.
  public static let renderedLimit = 16 << 20

  /// Renders the events and journal lines of `unsaved[start...]`, keeping the rendered pieces in step
  /// one change at a time (a batch's events name indices as they were at each step). Past
  /// `renderedLimit`, takes back what it rendered and throws: the caller undoes the changes
  /// and renders the pieces again.
  func recordChanges(from start: Int, author: Author) throws(ProtocolError) {
    guard unsaved.count > start else { return }
    // A run of another author's changes: the history notes it once, at its first change.
    if UInt(bitPattern: ObjectIdentifier(author)) != recordingAuthor {
      recordingAuthor = UInt(bitPattern: ObjectIdentifier(author))
      if let host { author.stamp(host: host) }
      pendingHistory.authorChanged()
      authorJournaled = false
    }
    let (eventsStart, journalStart) = (pendingEvents.count, journal.count)
    let recordsStart = pendingHistory.count
    let keepsHistory = history.capacity > 0
    // A shared list's groups carry who made each change whatever this host keeps: the other
    // hosts' histories name them from it.
    let journalsAuthors = keepsHistory || host != nil
    if journalsAuthors && recordsStart == 0 { pendingHistory.time = clock() }
    for change in unsaved[start...] {
      rendered.apply(change)
      let eventStart = pendingEvents.count
      pendingEvents.appendText { text in
        change.appendEvent(to: &text, ids: rendered)
      }
      if case .reloaded = change {
        needsSnapshot = true
      } else {
        if journalsAuthors && !authorJournaled { journalAuthor(author) }
        Journal.append(change, to: &journal)
      }
      if keepsHistory {
        if pendingHistory.awaitsAuthor { pendingHistory.begin(author) }
        pendingHistory.add(revision: change.revision, events: eventStart..<pendingEvents.count)
      }
      if pendingEvents.count - eventsStart + journal.count - journalStart > SectionService.renderedLimit {
        pendingEvents.removeSubrange(eventsStart...)
        journal.removeSubrange(journalStart...)
        pendingHistory.removeChanges(from: recordsStart)
        authorJournaled = false
        throw ProtocolError(
          .limit,
          "changes: their events and journal would take more than \(SectionService.renderedLimit) bytes (each repeats the section's id); nothing was applied; send fewer lines, or use shorter ids"
        )
      }
    }
    forgetRendered()
  }

  /// The unsaved changes as the one value a save takes (see `SavedGroup`): sharing the
  /// service's buffers until `commit()` or `rollback()` starts the next group.
  public var unsavedGroup: SavedGroup {
    SavedGroup(
      changes: unsaved, records: pendingHistory, events: pendingEvents, journal: journal,
      needsSnapshot: needsSnapshot, revision: model.revision)
  }

  /// The unsaved changes are now in the state file: the history keeps them, `fanOut` hands
  /// them on (to the subscribers, the journald entries, the D-Bus signals), and the next change
  /// starts a new group. The group shares the service's buffers, which are emptied for the next
  /// group once `fanOut` has returned and the group is gone: a group kept past that (the
  /// `commit()` that returns it) would cost a new buffer of each kind every turn.
  public func commit(_ fanOut: (SavedGroup) -> Void) {
    do {
      let group = unsavedGroup
      saved = nil
      committedView = nil
      history.append(group.records, events: group.events)
      fanOut(group)
    }
    forgetUnsaved()
  }

  /// `commit(_:)`, returning the group saved: for a start's save and for tests, which keep it.
  @discardableResult
  public func commit() -> SavedGroup {
    var saved: SavedGroup?
    commit { saved = $0 }
    return saved!
  }

  /// Empties the buffers of the unsaved changes. Their storage is kept for the next turn
  /// when small; after a large turn (a BATCH of 100,000 changes renders megabytes of
  /// events and journal) it is given back, so what one request took does not stay taken.
  private func forgetUnsaved() {
    func empty<T>(_ buffer: inout [T], keepingUpTo bytes: Int) {
      buffer.removeAll(keepingCapacity: buffer.capacity * MemoryLayout<T>.stride <= bytes)
    }
    empty(&unsaved, keepingUpTo: SectionService.keptCapacity)
    empty(&journal, keepingUpTo: SectionService.keptCapacity)
    empty(&pendingEvents, keepingUpTo: SectionService.keptCapacity)
    pendingHistory.removeAll(keepingUpTo: SectionService.keptCapacity)
    authorJournaled = false
    needsSnapshot = false
  }

  /// The most storage the buffers of unsaved changes keep between turns (each): a turn of a
  /// thousand changes fits.
  static let keptCapacity = 64 << 10

  /// The unsaved changes could not be saved: forget them and their events.
  public func rollback() {
    switch saved {
    case nil: return
    case .checkpoint(let checkpoint)?: model.restore(checkpoint, undoing: unsaved)
    case .copy(let copy)?: model = copy
    }
    saved = nil
    committedView = nil
    forgetUnsaved()
    forgetRendered()
    rebuildRendered()
  }

  /// Replaces the sections with a freshly loaded config and replies `OK <rev>`. Reached with
  /// no unsaved changes of others (RELOAD reads the state, so it waits for them; SIGHUP comes
  /// between loop turns, after the save). Throws, changing and replying nothing, when the
  /// revision is at its limit: the caller logs the refusal and replies with it.
  public func reload(_ config: Config, by author: Author, reply: inout OutputQueue) throws(ProtocolError)
    -> Outcome
  {
    let dropsEdits = reloadDropsEdits
    reloadDropsEdits = false
    if let refusal = gate.refusal { throw refusal }
    guard model.hasRoomForAChange else { throw .revisionsExhausted }
    // Undoing a reload needs the sections it replaced: the model as last saved, whole.
    var lastSaved = model
    switch saved {
    case nil: break
    case .checkpoint(let checkpoint)?: lastSaved.restore(checkpoint, undoing: unsaved)
    case .copy(let copy)?: lastSaved = copy
    }
    let start = unsaved.count
    let before = model
    model.reload(config, dropsEdits: dropsEdits, changes: &unsaved)
    // The config's sections and the clients' edits together may pass the text bound that each
    // kept alone: the state file could then grow past what a start reads back in time.
    if model.textBytes > limits.textBytes && model.textBytes > before.textBytes {
      let total = model.textBytes
      model = before
      unsaved.removeSubrange(start...)
      throw ProtocolError(
        .limit,
        "text: the config with the clients' edits would hold \(total) bytes of ids, titles and items; at most \(limits.textBytes) (sectiond --max-text-bytes); still serving the previous config"
      )
    }
    appendStatus(to: &reply.tail)
    guard unsaved.count > start else { return .replied }
    saved = .copy(lastSaved)
    rebuildRendered()
    // One change: far below the bound on what a request renders.
    try recordChanges(from: start, author: author)
    return .changed
  }

  /// The sections differ from those the previous process served (see `HandoverState`): one
  /// change, so that subscribers carried across the restart get `!reload` as a reload sends.
  public func announceReload(by author: Author) -> Outcome {
    var discarded = OutputQueue()
    return (try? change(author: author, reply: &discarded) { $0.markReloaded(changes: &$1) }) ?? .replied
  }

  /// `!restart`: the daemon restarted after a crash; a request sent before this line that has
  /// no reply yet was lost, and the `!state` that follows is the state now.
  public func appendRestartEvents(to output: inout OutputQueue) {
    output.append("!restart\n")
    appendStateEvent(to: &output)
  }

  /// The refusal of a RELOAD that was not done: `ERR CONFIG` with why the config did not load,
  /// or the error `reload(_:by:reply:)` threw.
  public func refuseReload(_ error: any Error) -> ProtocolError {
    reloadDropsEdits = false
    return error as? ProtocolError ?? ProtocolError(.config, "\(error)")
  }

  /// Renders the whole state file of the current model into `buffer`, for the server to save.
  /// With it the history: the newest changes kept and unsaved, at most the history's capacity.
  public func encodeState(into buffer: inout [UInt8]) {
    SavedState.encode(model, into: &buffer)
    guard history.capacity > 0 else { return }
    var all = history
    keepUnsaved(in: &all)
    var lines: [UInt8] = []
    appendLines(of: all, from: 0, blankingWho: false, to: &lines)
    SavedState.appendHistory(lines: lines, to: &buffer)
  }

  /// `<rev> <mode> <open ids>` plus LF: the body of both the SUBSCRIBE reply and `!state`.
  /// Rendered once per state and shared, like a LIST: with 2,000 open sections of long ids it
  /// is 8 MB, and copying it for each subscriber that does not read took 8 MB per connection.
  private var snapshot: ArraySlice<UInt8> {
    if snapshotCache.isEmpty { appendSnapshot(to: &snapshotCache) }
    return snapshotCache[...]
  }

  private func appendSnapshot(to buffer: inout [UInt8]) {
    buffer.appendDecimal(model.revision)
    buffer.append(" ")
    buffer.append(model.mode.word)
    buffer.append(" ")
    var first = true
    for index in model.openIndices {
      if !first { buffer.append(",") }
      buffer.append(utf8: model.sections[index].id)
      first = false
    }
    if first { buffer.append("-") }
    buffer.append("\n")
  }

  /// The `!state` event that replaces events a slow subscriber missed.
  public func appendStateEvent(to output: inout OutputQueue) {
    output.append("!state ")
    output.append(shared: snapshot)
  }

  /// `!bye <reason>`: the server is about to close the connection (`shutdown`).
  public static func appendGoodbyeEvent(reason: String, to output: inout OutputQueue) {
    output.append(utf8: "!bye \(reason)\n")
  }

  // MARK: Rendering

  /// The state changed: the replies rendered from it are stale. Emptied, never edited in
  /// place: connections may still hold their storage (`OutputQueue.append(shared:)`), which
  /// they then keep to themselves.
  func forgetRendered() {
    // Most changes follow changes, which left them empty already (callgrind: 47 -> ~10 a TOGGLE).
    if !listCache.isEmpty { listCache.removeAll(keepingCapacity: true) }
    if !viewCache.isEmpty { viewCache.removeAll(keepingCapacity: true) }
    if !snapshotCache.isEmpty { snapshotCache.removeAll(keepingCapacity: true) }
  }

  /// The sections changed (reload, or a rollback of one): render their fixed parts again.
  func rebuildRendered() {
    rendered = RenderedSections(model.sections)
  }

  private func renderList(into buffer: inout [UInt8], withItems: Bool) {
    rendered.appendList(model.sections, openedAt: model.openedAt, withItems: withItems, to: &buffer)
    appendStatus(to: &buffer)
  }

  func appendStatus(to buffer: inout [UInt8]) {
    buffer.appendText { appendStatus(to: &$0) }
  }

  private func appendStatus(to buffer: inout TextWriter) {
    buffer.append("OK ")
    buffer.appendDecimal(model.revision)
    buffer.append("\n")
  }

  private func appendModeReply(to buffer: inout [UInt8]) {
    buffer.appendText { text in
      appendModeLine(to: &text)
      appendStatus(to: &text)
    }
  }

  private func appendModeLine(to buffer: inout TextWriter) {
    buffer.append("mode ")
    buffer.append(model.mode.word)
    buffer.append("\n")
  }
}
