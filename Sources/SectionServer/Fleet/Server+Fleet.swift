import Posix
import SectionCore

/// How the fleet's outcomes (`Fleet`) meet the group commit: a commit through etcd ends as a
/// save does, in the same steps (`save`, `refuseHeld`, `releaseWaiting`), and a group another
/// host committed first is taken back and run again.
extension Server {
  /// The turn's group goes to etcd instead of straight to the state file; it is saved here
  /// once etcd committed it (`fleetCommitted`).
  func commit(to fleet: any FleetAgent) {
    if let refusal = fleet.commit(service.unsavedGroup) { fleetRefused(refusal) }
  }

  /// etcd committed the group: it is saved and handed on like any other.
  package func fleetCommitted() { save() }

  /// Another host's group, applied as unsaved changes of this one: saved and handed on alike.
  package func fleetApplied() { save() }

  /// Another host committed first (or the fence proved the group never will be): the group is
  /// undone, the requests held for it go back in front of their connections' input, the bus
  /// calls are handled again, and what waited is released to run on the newer state.
  package func fleetRetry() {
    service.rollback()
    for connection in turn.heldConnections { connection.takeBackHeldGroup() }
    turn.waitingCalls.append(contentsOf: turn.heldCalls.map(\.call))
    turn.heldCalls.removeAll(keepingCapacity: true)
    releaseWaiting()
  }

  /// The group cannot be committed (etcd unreachable in time, too large): every request held
  /// for it is answered with `refusal`, as a failed save's are.
  package func fleetRefused(_ refusal: ProtocolError) {
    Log.warning("changes refused: \(refusal.message)")
    service.rollback()
    refuseHeld(refusal)
    releaseWaiting()
  }

  /// A catch-up ended: requests that waited for it run now.
  package func fleetCaughtUp() { releaseWaiting() }

  /// The most bytes of a state the fleet's snapshot may name: what a start reads of a state
  /// file, so that the pointer read from etcd is held to the file's bound before anything is
  /// read or allocated by it.
  package static var fleetStateLimit: Int { StateStore.readLimit }

  /// The fleet's whole state replaces this host's (joining, a log trimmed past it, another
  /// host's reload): saved whole, and every subscriber is sent `!reload <revision>` for a
  /// reload (rendered here: what the entry's own events said never reaches a client), or else
  /// `!state`.
  package func fleetAdopt(_ state: SavedState, reloaded: Bool = false) {
    service.adopt(state)
    do {
      try store?.saveWhole(service.encodeState(into:))
    } catch {
      Log.error(
        "state file not saved (\(error)); the fleet keeps the list, and the next start reads it there")
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

  /// Keeps, in a fleet, the input of the group held for the commit (`input[start..<end]`,
  /// what `handle` took of it) and of a BATCH not ended yet (from `batchStart` when it began
  /// in this input), for `fleetRetry`; forgets it when there is neither. `ignoredByBatch`: the
  /// batch was past a limit before this input, which it ignores up to its END: nothing of it
  /// is kept while the batch is still open (what is kept stays within the batch's limits).
  func keepHeldInput(
    _ input: ArraySlice<UInt8>, on connection: Connection, from start: Int, batchFrom batchStart: Int,
    to end: Int, ignoredByBatch: Bool
  ) {
    guard connection.heldReplyStart != nil || connection.batch != nil else {
      connection.heldInput.removeAll()
      connection.heldBatchStart = nil
      return
    }
    if connection.batch == nil {
      connection.heldBatchStart = nil
    } else if connection.heldBatchStart == nil {
      connection.heldBatchStart = connection.heldInput.count + max(0, batchStart - start)
    }
    if start < end, !(ignoredByBatch && connection.batch != nil) {
      connection.heldInput.append(contentsOf: input[(input.startIndex + start)..<(input.startIndex + end)])
    }
  }

  /// The fleet this host's state file belongs to (its id and prefix, in a file beside it), so
  /// that a restart catches up from its own state only in the same fleet. Empty when unknown.
  package func fleetMark(prefix: String) -> String {
    guard let path = fleetMarkPath, let bytes = try? FileSystem.readFile(path, limit: 4096) else { return "" }
    let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
    guard words.count == 2, words[1] == prefix else { return "" }
    return String(words[0])
  }

  package func markFleet(_ id: String, prefix: String) {
    guard let path = fleetMarkPath else { return }
    do {
      try FileSystem.replaceAtomically(path, with: Array("\(id) \(prefix)".utf8), sync: false)
    } catch {
      Log.warning("cannot write \(path) (\(error)); the next start loads the fleet's state afresh")
    }
  }

  private var fleetMarkPath: String? { store.map { $0.path + ".fleet" } }
}
