/// Protocol 1 over a `SectionModel`: executes request lines and renders replies and events as bytes.
///
/// It does no I/O. The server hands it each line with the connection's access and an output
/// buffer, and is told what else to do (commit, subscribe, close). Changes stay "uncommitted"
/// until the server has saved them: `commit()` then releases their events, `rollback()` undoes them.
public final class SectionService {
  public static let daemonVersion = "0.1.0"
  public static let protocolVersion = 1

  /// Which socket a request came in on.
  public enum Access: Sendable {
    case control
    case readOnly
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
    /// Re-read the config, then call `reload(_:)` or `refuseReload(_:)` to reply.
    case reload
    /// Nothing was replied: the answer would show changes of other clients that are not saved
    /// yet (and may still fail to save). Hand the same line in again once they are saved.
    case deferred
  }

  public private(set) var model: SectionModel
  /// The model as last saved, while there are unsaved changes.
  private var saved: SectionModel?
  /// Events of unsaved changes, rendered once for all subscribers.
  public private(set) var pendingEvents: [UInt8] = []
  private var changes: [Change] = []
  private var rendered: RenderedSections
  private var stateEncoder: SavedState.Encoder
  private var listCache: [UInt8] = []
  private var viewCache: [UInt8] = []

  public init(model: SectionModel) {
    self.model = model
    rendered = RenderedSections(model.sections)
    stateEncoder = SavedState.Encoder(model.sections)
  }

  public var hasUnsavedChanges: Bool { saved != nil }

  /// Executes one request line. Returns nil for a blank line, which gets no reply.
  public func handle(_ line: ArraySlice<UInt8>, access: Access, reply: inout OutputQueue) -> Outcome? {
    switch RequestParser.parse(line) {
    case nil: return nil
    case .failure(let error)?:
      reply.append(contentsOf: error.line)
      return .replied
    case .success(let request)?:
      if request.changesState && access == .readOnly {
        var words = Words(line)
        let name = String(decoding: words.next() ?? [], as: UTF8.self).uppercased()
        reply.append(
          contentsOf: ProtocolError(.readOnly, "\(name) changes state; use the control socket").line)
        return .replied
      }
      if hasUnsavedChanges && request.readsState { return .deferred }
      do {
        return try execute(request, reply: &reply)
      } catch {
        // NOSECTION and MODE depend on the state as much as a LIST does.
        if hasUnsavedChanges { return .deferred }
        reply.append(contentsOf: error.line)
        return .replied
      }
    }
  }

  private func execute(_ request: Request, reply: inout OutputQueue) throws(ProtocolError) -> Outcome {
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
      reply.append(shared: rendered.items(try resolve(ref)))
      appendStatus(to: &reply.tail)
    case .open(.all):
      guard model.mode == .multi else {
        throw ProtocolError(
          .mode, "OPEN ALL needs multi mode; in exclusive mode one section is open at a time")
      }
      return change(reply: &reply) { $0.openAll(changes: &$1) }
    case .close(.all):
      return change(reply: &reply) { $0.closeAll(changes: &$1) }
    case .open(.section(let ref)):
      let index = try resolve(ref)
      return change(showing: index, reply: &reply) { $0.open(index, changes: &$1) }
    case .close(.section(let ref)):
      let index = try resolve(ref)
      return change(showing: index, reply: &reply) { $0.close(index, changes: &$1) }
    case .toggle(let ref):
      let index = try resolve(ref)
      return change(showing: index, reply: &reply) { $0.toggle(index, changes: &$1) }
    case .mode(nil):
      appendModeReply(to: &reply.tail)
    case .mode(let mode?):
      return change(reply: &reply, showingMode: true) { $0.setMode(mode, changes: &$1) }
    case .subscribe:
      reply.append("state ")
      appendSnapshot(to: &reply.tail)
      appendStatus(to: &reply.tail)
      return .subscribe
    case .unsubscribe:
      reply.append("OK\n")
      return .unsubscribe
    case .help:
      reply.append(contentsOf: RenderedSections.help)
    case .quit:
      reply.append("OK\n")
      return .quit
    case .reload:
      return .reload
    }
    return .replied
  }

  /// Applies a change to the model, renders its events and reply; `.changed` when anything moved.
  /// A change that moves nothing while others wait for the save is `.deferred`: its reply
  /// would show their unsaved state.
  private func change(
    showing index: Int? = nil, reply: inout OutputQueue, showingMode: Bool = false,
    _ body: (inout SectionModel, inout [Change]) -> Void
  ) -> Outcome {
    let othersUnsaved = saved != nil
    guard model.hasRoomForAChange else {
      if othersUnsaved { return .deferred }
      reply.append(contentsOf: ProtocolError.revisionsExhausted.line)
      return .replied
    }
    if !othersUnsaved { saved = model }
    changes.removeAll(keepingCapacity: true)
    body(&model, &changes)
    if changes.isEmpty {
      if othersUnsaved { return .deferred }
      saved = nil
    }
    if let index { rendered.appendSectionLine(index, open: model.isOpen(index), to: &reply.tail) }
    if showingMode { appendModeLine(to: &reply.tail) }
    appendStatus(to: &reply.tail)
    guard !changes.isEmpty else { return .replied }
    recordChanges()
    return .changed
  }

  private func recordChanges() {
    listCache.removeAll(keepingCapacity: true)
    viewCache.removeAll(keepingCapacity: true)
    for change in changes { appendEvent(change, to: &pendingEvents) }
  }

  /// The unsaved changes are now in the state file: hand their events over for broadcast.
  public func commit() -> [UInt8] {
    saved = nil
    defer { pendingEvents.removeAll(keepingCapacity: true) }
    return pendingEvents
  }

  /// The unsaved changes could not be saved: forget them and their events.
  public func rollback() {
    guard let saved else { return }
    model = saved
    self.saved = nil
    pendingEvents.removeAll(keepingCapacity: true)
    listCache.removeAll(keepingCapacity: true)
    viewCache.removeAll(keepingCapacity: true)
    rebuildRendered()
  }

  /// Replaces the sections with a freshly loaded config and replies `OK <rev>`.
  public func reload(_ config: Config, reply: inout OutputQueue) -> Outcome {
    let outcome = change(reply: &reply) { $0.reload(config, changes: &$1) }
    rebuildRendered()
    return outcome
  }

  /// The sections differ from those the previous process served (see `HandoverState`): one
  /// change, so that subscribers carried across the restart get `!reload` as a reload sends.
  public func announceReload() -> Outcome {
    var discarded = OutputQueue()
    return change(reply: &discarded) { $0.markReloaded(changes: &$1) }
  }

  /// `!restart`: the daemon restarted after a crash; a request sent before this line that has
  /// no reply yet was lost, and the `!state` that follows is the state now.
  public func appendRestartEvents(to output: inout OutputQueue) {
    output.append("!restart\n")
    appendStateEvent(to: &output)
  }

  /// Replies to RELOAD when the config could not be loaded.
  public func refuseReload(_ reason: String, reply: inout OutputQueue) {
    reply.append(contentsOf: ProtocolError(.config, reason).line)
  }

  /// Renders the state file of the current model into `buffer`, for the server to save.
  public func encodeState(into buffer: inout [UInt8]) {
    stateEncoder.encode(model, into: &buffer)
  }

  /// `<rev> <mode> <open ids>` plus LF: the body of both the SUBSCRIBE reply and `!state`.
  public func appendSnapshot(to buffer: inout [UInt8]) {
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
    appendSnapshot(to: &output.tail)
  }

  /// `!bye <reason>`: the server is about to close the connection (`shutdown`).
  public static func appendGoodbyeEvent(reason: String, to output: inout OutputQueue) {
    output.append(utf8: "!bye \(reason)\n")
  }

  // MARK: Rendering

  /// The sections changed (reload, or a rollback of one): render their fixed parts again.
  private func rebuildRendered() {
    rendered = RenderedSections(model.sections)
    stateEncoder = SavedState.Encoder(model.sections)
  }

  private func resolve(_ ref: SectionRef) throws(ProtocolError) -> Int {
    let count = model.sections.count
    switch ref {
    case .index(let index) where index < count: return index
    case .id(let id): if let index = model.index(ofID: id) { return index }
    default: break
    }
    let name: String
    switch ref {
    case .index(let index): name = index == Int.max ? "(too large)" : String(index)
    case .id(let id): name = String(decoding: id, as: UTF8.self)
    }
    throw ProtocolError(.noSection, "no section \"\(name)\": there are \(count) (0-\(count - 1))")
  }

  private func renderList(into buffer: inout [UInt8], withItems: Bool) {
    for index in model.sections.indices {
      let open = model.isOpen(index)
      rendered.appendSectionLine(index, open: open, to: &buffer)
      if withItems && open { rendered.appendItems(index, to: &buffer) }
    }
    appendStatus(to: &buffer)
  }

  private func appendStatus(to buffer: inout [UInt8]) {
    buffer.append("OK ")
    buffer.appendDecimal(model.revision)
    buffer.append("\n")
  }

  private func appendModeReply(to buffer: inout [UInt8]) {
    appendModeLine(to: &buffer)
    appendStatus(to: &buffer)
  }

  private func appendModeLine(to buffer: inout [UInt8]) {
    buffer.append("mode ")
    buffer.append(model.mode.word)
    buffer.append("\n")
  }

  private func appendEvent(_ change: Change, to buffer: inout [UInt8]) {
    switch change {
    case .opened(let revision, let index):
      rendered.appendEvent(opened: true, revision: revision, index: index, to: &buffer)
    case .closed(let revision, let index):
      rendered.appendEvent(opened: false, revision: revision, index: index, to: &buffer)
    case .mode(let revision, let mode):
      buffer.append("!mode ")
      buffer.appendDecimal(revision)
      buffer.append(" ")
      buffer.append(mode.word)
      buffer.append("\n")
    case .reloaded(let revision):
      buffer.append("!reload ")
      buffer.appendDecimal(revision)
      buffer.append("\n")
    }
  }
}
