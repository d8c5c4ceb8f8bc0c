// libFuzzer target: the request path, from bytes on a socket to replies and events.
//
// The input is what one client sends. It goes through `LineFramer` and `SectionService` the way
// the server drives them (partial lines carried over between reads, end of input, commit or
// rollback after every change, RELOAD answered with a config or a refusal), three times: as one
// read, as two reads split at a position taken from the first two bytes, and as reads of
// (first byte + 1) bytes each (at most about 64 reads). All three must give the same output,
// on both sockets. Runtime edits and batches go the same way; what is committed must replay
// from the journal onto the last whole state to the same state.
// Invariants are checked with `check` (Check.swift), so a broken one is a crash libFuzzer reports.
//
// Built outside SwiftPM by Tests/Build/fuzz.sh, together with Sources/SectionCore as one module;
// FuzzEntry.swift calls it.

func fuzzRequests(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let input = Array(UnsafeBufferPointer(start: data, count: size))
  guard let first = input.first else { return 0 }
  // Where to split: the first two bytes as a position, so any byte boundary can be reached.
  let split = (Int(first) | Int(input.count > 1 ? input[1] : 0) << 8) % (input.count + 1)
  // Reads of (first byte + 1) bytes, but at most about 64 of them: a partial line is copied on
  // every read, as the server does, which would make long inputs fed a byte at a time slow.
  let chunk = max(Int(first) + 1, input.count / 64)
  let chunked = stride(from: 0, to: input.count, by: chunk).map {
    input[$0..<min($0 + chunk, input.count)]
  }
  for access in [SectionService.Access.control, .readOnly] {
    let whole = Client.output(access: access, seed: first, reads: [input[...]])
    let halves = Client.output(access: access, seed: first, reads: [input[..<split], input[split...]])
    check(whole == halves, "one read and two reads split at \(split) answer differently")
    let pieces = Client.output(access: access, seed: first, reads: chunked)
    check(whole == pieces, "one read and reads of \(chunk) bytes answer differently")
  }
  return 0
}

/// One connection as the server handles it, with the save of every change decided by `seed`.
struct Client {
  let access: SectionService.Access
  let seed: UInt8
  let service = SectionService(model: SectionModel(config: .demo))
  var framer = LineFramer()
  var pending: [UInt8] = []
  /// Everything the client would receive: replies, and events once subscribed.
  var output: [UInt8] = []
  var subscribed = false
  var quitting = false
  var saves = 0
  var reloads = 0
  /// The connection's open BATCH, as the server keeps it.
  var batch: Batch?
  /// The connection's session, as the server keeps it.
  var session: Session
  /// The last whole state saved, and the journal written since, as the server's store keeps them.
  var snapshot = SavedState(Client.demo)
  var journal: [UInt8] = []

  init(access: SectionService.Access, seed: UInt8) {
    self.access = access
    self.seed = seed
    session = Session(access: access, author: Author(via: .socket, uid: nil, pid: nil))
  }

  static func output(access: SectionService.Access, seed: UInt8, reads: [ArraySlice<UInt8>]) -> [UInt8] {
    var client = Client(access: access, seed: seed)
    return client.run(reads)
  }

  /// Feeds the reads in order, then the end of input; returns the output.
  mutating func run(_ reads: [ArraySlice<UInt8>]) -> [UInt8] {
    for read in reads where !quitting {
      handle(pending + read, endOfInput: false)
    }
    if !quitting { handle(pending[...], endOfInput: true) }
    check(!service.hasUnsavedChanges, "a change was left unsaved")
    if saves > 0 { checkRestart() }
    return output
  }

  private mutating func handle(_ bytes: ArraySlice<UInt8>, endOfInput: Bool) {
    var input = bytes
    while !quitting, let frame = framer.next(&input, endOfInput: endOfInput) {
      switch frame {
      case .tooLong:
        if batch != nil {
          batch!.addTooLong()
        } else {
          output.append(contentsOf: ProtocolError.tooLong.line)
        }
      case .line(let line):
        check(line.count <= LineFramer.maximumLineLength, "a line over the limit got through")
        check(!line.contains(0x0A), "a line holds an LF")
        request(line)
      }
    }
    pending = Array(input)
    check(
      quitting || pending.count <= LineFramer.maximumLineLength + 1,
      "a partial line of \(pending.count) bytes kept")
    check(
      !endOfInput || quitting || pending.isEmpty,
      "\(pending.count) bytes left at end of input, discarding: \(framer.discarding)")
  }

  private mutating func request(_ line: ArraySlice<UInt8>) {
    let before = service.model
    let start = output.count
    var reply = OutputQueue()
    let inBatch = batch != nil
    guard var outcome = service.handle(line, session: &session, batch: &batch, reply: &reply) else {
      check(reply.isEmpty, "a blank line, BATCH or a line of a batch was answered")
      check(service.model == before, "a line without a reply changed the model")
      let blank = line.allSatisfy { $0 == 0x20 || $0 == 0x09 }
      check(blank || inBatch || batch != nil, "a request got no reply")
      return
    }
    if outcome == .reload {
      check(reply.isEmpty, "RELOAD answered before the config was read")
      reloads += 1
      switch reloads % 3 {
      case 0:
        reply.append(contentsOf: service.refuseReload(ConfigError("fuzz.json: not valid JSON")).line)
        outcome = .replied
      default:
        do throws(ProtocolError) {
          outcome = try service.reload(
            reloads % 3 == 1 ? Client.other : .demo, by: session.author.reloading(), reply: &reply)
        } catch {
          reply.append(contentsOf: service.refuseReload(error).line)
          outcome = .replied
        }
      }
    }
    if outcome == .streaming {
      // A long answer: the rest in small parts, as a client reading slowly gets it, so that
      // every part's end is fuzzed too; whole, it must read as it would have in one piece.
      guard var stream = service.takeStream() else { fatalError("streaming without a stream") }
      while service.continueStream(&stream, to: &reply, limit: reply.count + 256) == .more {}
      check(service.takeStream() == nil, "a stream left behind")
      outcome = stream.isReplay ? .subscribe : .replied
    }
    output.append(contentsOf: reply.unsentBytes)
    let replied = output[start...]
    check(replied.last == 0x0A, "a reply does not end in LF")
    let body = replied.dropLast()
    let status = body[(body.lastIndex(of: 0x0A).map { $0 + 1 } ?? body.startIndex)...]
    check(
      status.starts(with: Array("OK".utf8)) || status.starts(with: Array("ERR ".utf8)),
      "a reply does not end in an OK or ERR line")
    switch outcome {
    case .changed:
      check(access == .control, "a change on the read-only socket")
      save(before: before, replyStart: start)
    case .replied, .quit, .subscribe, .unsubscribe:
      check(service.model == before, "\(outcome) changed the model")
      check(!service.hasUnsavedChanges, "\(outcome) left unsaved changes")
      if outcome == .quit { quitting = true }
      if outcome == .subscribe { subscribed = true }
      if outcome == .unsubscribe { subscribed = false }
    case .reload:
      fatalError("reload outcome after the reload")
    case .deferred:
      fatalError("deferred with no change waiting for a save")
    case .streaming:
      fatalError("streaming after the stream was drained")
    }
    checkModel()
  }

  /// The server's save: commit (events go out) or, when the state file cannot be written, roll back.
  private mutating func save(before: SectionModel, replyStart: Int) {
    check(service.hasUnsavedChanges, "changed without unsaved changes")
    check(service.model.revision > before.revision, "changed without a new revision")
    saves += 1
    if (Int(seed) &+ saves) % 4 == 0 {
      service.rollback()
      check(service.model == before, "rollback did not restore the model")
      check(service.pendingEvents.isEmpty, "rollback kept events")
      output.removeSubrange(replyStart...)
      output.append(contentsOf: ProtocolError(.internal, "state not saved: fuzz").line)
      return
    }
    if service.needsSnapshot {
      journal = []
    } else {
      let start = journal.count
      journal += service.journal
      Journal.appendCommit(revision: service.model.revision, to: &journal, groupStart: start)
    }
    let events = service.commit().events
    if journal.isEmpty { snapshot = SavedState(service.model) }
    check(!events.isEmpty, "a change without events")
    check(!service.hasUnsavedChanges && service.pendingEvents.isEmpty, "commit kept changes")
    // Events carry consecutive revisions, from the one after `before` to the current one.
    var expected = before.revision + 1
    for event in events.split(separator: 0x0A) {
      check(event.first == UInt8(ascii: "!"), "an event line without '!'")
      let words = event.split(separator: 0x20)
      check(words.count >= 2, "an event without a revision")
      let revision = UInt64(String(decoding: words[1], as: UTF8.self))
      check(revision == expected, "event revision \(String(describing: revision)), expected \(expected)")
      expected += 1
    }
    check(expected == service.model.revision + 1, "events do not reach the current revision")
    if subscribed { output.append(contentsOf: events) }
  }

  /// What is committed survives a restart: the state file reads back as the same model, and
  /// so does the last whole state with the journal replayed.
  private func checkRestart() {
    let saved = SavedState.encode(service.model)
    guard let decoded = try? SavedState.decode(saved) else { fatalError("state file does not decode") }
    check(decoded == SavedState(service.model), "state file decodes to another state")
    let served = Config(mode: .multi, sections: Array(service.model.sections))
    let restarted = SectionModel(config: served, saved: decoded)
    // Whether a section starts open is the config's business, not the state file's.
    func content(_ model: SectionModel) -> [[String]] {
      model.sections.map { [$0.id, $0.title, $0.origin.rawValue] + $0.items }
    }
    check(
      content(restarted) == content(service.model) && restarted.openedAt == service.model.openedAt
        && restarted.revision == service.model.revision && restarted.mode == service.model.mode,
      "restart gives another model")
    let contents = Journal.decode(journal)
    check(contents.stop == nil, "the journal does not read whole: \(String(describing: contents.stop))")
    let replayed = snapshot.replaying(contents.groups)
    check(replayed.stop == nil, "the journal does not replay: \(replayed.stop ?? "")")
    check(replayed.state == SavedState(service.model), "the journal replays to another state")
  }

  private func checkModel() {
    let model = service.model
    check(model.openedAt.count == model.sections.count, "openedAt and sections differ in length")
    check(model.itemCount == model.sections.reduce(0) { $0 + $1.items.count }, "itemCount is off")
    check(Set(model.sections.map(\.id)).count == model.sections.count, "two sections share an id")
    check(model.sectionIDs == Set(model.sections.map(\.id)), "sectionIDs is not the ids of the sections")
    if model.mode == .exclusive { check(model.openIndices.count <= 1, "exclusive with two open") }
    for opened in model.openedAt { if let opened { check(opened <= model.revision, "opened in the future") } }
    if access == .readOnly { check(model == Client.demo, "read-only socket changed state") }
  }

  static let demo = SectionModel(config: .demo)

  /// A second config for RELOAD: sections kept, reordered, dropped and new, two open from the start.
  static let other = Config(
    mode: .multi,
    sections: [
      Section(id: "second", title: "Second", items: ["a", "b"], initiallyOpen: true),
      Section(id: "fourth", title: "Fourth", items: [], initiallyOpen: true),
      Section(id: "first", title: "First", items: ["x"]),
    ])
}
