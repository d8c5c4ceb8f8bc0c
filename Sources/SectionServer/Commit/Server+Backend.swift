import Posix
import SectionCore

/// How a commit backend's outcomes meet the group commit: each outcome ends the turn's group
/// in the same steps (`handOn`, `refuseHeld`, `releaseWaiting`), and a group committed
/// elsewhere is handed on as one committed here is.
extension Server {
  /// Hands the turn's group to the backend; its outcome may come at once.
  func commitTurn() {
    if let outcome = backend.commit(service.unsavedGroup, of: service) { finish(outcome) }
  }

  /// The one outcome of the group handed to the backend (`CommitBackend.commit`).
  package func finish(_ outcome: CommitOutcome) {
    switch outcome {
    case .committed(let revision):
      precondition(revision == service.model.revision, "the group committed is the turn's")
      // Committed elsewhere: the state file is this host's copy, written before anyone hears.
      if backend !== localCommit { localCommit.keepCopy(of: service) }
      handOn()
    case .retry:
      service.rollback()
      for connection in turn.heldConnections { connection.takeBackHeldGroup() }
      turn.waitingCalls.append(
        contentsOf: turn.heldCalls.map {
          BusFace.WaitingCall(call: $0.call, request: ($0.request, $0.access))
        })
      turn.heldCalls.removeAll(keepingCapacity: true)
      releaseWaiting()
    case .refused(let refusal):
      service.rollback()
      refuseHeld(refusal)
      releaseWaiting()
    }
  }

  /// A group committed elsewhere, applied here as this host's unsaved changes (with who made
  /// each, and `host`, the one it came through, for a change without its author), then kept in
  /// the state file and handed on as a local group is. Throws, changing nothing, when the
  /// changes do not follow this state.
  package func applyFromElsewhere(
    _ changes: [Change], authors: [UInt64: SavedAuthor], through host: [UInt8]
  ) throws(ProtocolError) {
    try service.applyRemote(changes, authors: authors, through: host)
    localCommit.keepCopy(of: service)
    handOn()
  }

  /// Changes may be made again after the backend's pause (it joined, caught up, or gave up for
  /// now): the requests that waited for it run now.
  package func resumeChanges() { releaseWaiting() }

  /// A whole state from elsewhere replaces this one (joining a shared list, a log trimmed past
  /// this host, another host's reload): saved whole, and every subscriber is sent `!reload
  /// <revision>` for a reload (rendered here: what came with the state never reaches a
  /// client), or else `!state`.
  package func adopt(_ state: SavedState, reloaded: Bool = false) {
    service.adopt(state)
    do {
      try localCommit.store?.saveWhole(service.encodeState(into:))
    } catch {
      Log.error(
        "state file not saved (\(error)); the list is kept elsewhere, and the next start reads it there")
    }
    if reloaded {
      broadcast(Array("!reload \(state.revision)\n".utf8))
    } else {
      for subscriber in subscribers where subscriber.subscription == .live {
        service.appendStateEvent(to: &subscriber.output)
        queueFlush(subscriber)
      }
    }
    status?.figuresChanged()
  }
}
