// libFuzzer target: reading the state file, `SavedState.decode`.
//
// Any input must either be refused (so a damaged file is set aside) or give a state the model
// can start from; what the model then saves must read back as the same model. The same bytes
// are also read as a journal (`Journal.decode`) and replayed onto the demo list as far as its
// groups are intact and apply: a state that reads back the same.
// Built outside SwiftPM by Tests/Build/fuzz.sh, together with Sources/SectionCore as one module;
// FuzzEntry.swift calls it.

func fuzzState(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  fuzzJournal(Array(bytes))
  fuzzFleetEntry(Array(bytes))
  guard let state = try? SavedState.decode(bytes) else { return 0 }
  for opened in state.sections.values {
    if let opened { check(opened <= state.revision, "a section opened after the revision") }
  }
  for config in [Config.demo, Config(mode: .exclusive, sections: Config.demo.sections)] {
    let model = SectionModel(config: config, saved: state)
    check(model.revision == state.revision && model.mode == state.mode, "the saved revision or mode is lost")
    if model.mode == .exclusive { check(model.openIndices.count <= 1, "exclusive with two open") }
    let written = SavedState.encode(model)
    guard let read = try? SavedState.decode(written) else { fatalError("a written state does not decode") }
    check(read == SavedState(model), "the written state reads back differently")
    check(SectionModel(config: config, saved: read) == model, "a restart gives another model")
    // The service starts from it and serves a change.
    let service = SectionService(model: model)
    var reply = OutputQueue()
    var batch: Batch?
    var session = Session(access: .control, author: Author(via: .socket, uid: nil, pid: nil))
    if service.handle(Array("TOGGLE first".utf8)[...], session: &session, batch: &batch, reply: &reply)
      == .changed
    {
      _ = service.commit()
    }
  }
  return 0
}

/// A journal replays as far as it is intact, to a state that survives a round trip.
private func fuzzJournal(_ bytes: [UInt8]) {
  let start = SavedState(SectionModel(config: .demo))
  let state = start.replaying(Journal.decode(bytes).groups).state
  check(state.revision >= start.revision, "replay went back in revision")
  guard let read = try? SavedState.decode(SavedState.encode(SectionModel(config: .demo, saved: state))) else {
    fatalError("a replayed state does not encode and decode")
  }
  check(read.list?.count == state.list?.count, "a replayed state loses sections")
}

/// What a fleet's host reads from etcd (`FleetEntry`), which anyone who can write the prefix
/// writes: refused, or applied to the demo list as another host's group (or adopted whole),
/// leaving a service that commits and serves a change.
private func fuzzFleetEntry(_ bytes: [UInt8]) {
  guard let entry = try? FleetEntry.decode(bytes) else { return }
  let service = SectionService(model: SectionModel(config: .demo), history: History(capacity: 10))
  let before = service.model.revision
  switch entry.body {
  case .changes(let changes, let authors):
    guard (try? service.applyRemote(changes, authors: authors)) != nil else {
      check(
        !service.hasUnsavedChanges && service.model.revision == before, "a refused group changed the list")
      return
    }
    check(service.model.revision == changes.last?.revision, "an applied group ends elsewhere")
    _ = service.commit()
  case .state(let state, _):
    service.adopt(state)
  }
  var reply = OutputQueue()
  var batch: Batch?
  var session = Session(access: .control, author: Author(via: .socket, uid: nil, pid: nil))
  _ = service.handle(Array("LIST".utf8)[...], session: &session, batch: &batch, reply: &reply)
  if service.handle(Array("TOGGLE 0".utf8)[...], session: &session, batch: &batch, reply: &reply) == .changed
  {
    _ = service.commit()
  }
}
