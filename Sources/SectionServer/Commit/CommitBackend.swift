import SectionCore

/// Where a turn's group of changes is committed: the state file (`LocalCommit`), or a list that
/// other hosts share (the backend `Daemon` picks for `--etcd`, linked only into a second binary
/// so that a daemon without it maps none of its code). A group goes in (`commit`), and exactly
/// one outcome comes out (`CommitOutcome`): returned at once, or handed to `Server.finish(_:)`
/// later. Groups committed elsewhere come in through `Server.applyFromElsewhere(_:authors:through:)`
/// and `Server.adopt(_:reloaded:)`, and are handed on as a local group is.
package protocol CommitBackend: AnyObject {
  /// Whether changes may be made now, and whether the unsaved ones are sealed: the backend's
  /// to set, the service's to read (`SectionService.gate`).
  var gate: ChangeGate { get }
  /// Whether changes must wait: a commit, or the backend's own catching up, is under way.
  var isBusy: Bool { get }
  /// Whether a group's commit is under way: its clients wait for its outcome, and a stop too.
  var isCommitting: Bool { get }
  /// Whether a group may come back as `.retry`: the requests of a held group are then kept,
  /// to run again.
  var retries: Bool { get }
  /// STATUS's lines about the backend, after the daemon's own.
  var statusFields: [(String, String)] { get }
  /// Begins, once the daemon serves. Returns whether the daemon is ready now; if not, the
  /// backend sends READY=1 itself once it is (changes wait for it meanwhile, reads do not).
  func start() throws -> Bool
  /// The daemon stops; a group under way is dropped (its connections go to the next process).
  func stop()
  /// Commits `group`, the service's unsaved changes. Returns its outcome when it is known at
  /// once; nil when it comes later, through `Server.finish(_:)`, exactly once either way.
  func commit(_ group: SavedGroup, of service: SectionService) -> CommitOutcome?
}

/// What became of a group handed to a `CommitBackend`.
package enum CommitOutcome: Equatable {
  /// It is committed, its last change at this revision: it is saved here and handed on.
  case committed(revision: UInt64)
  /// It was not committed, and never will be: the state moved on under it (another host
  /// committed first). It is undone and its requests run again on the newer state.
  case retry
  /// It cannot be committed: it is undone and each of its requests is answered with this.
  case refused(ProtocolError)
}

/// The state file as where groups are committed: a group is committed once it is saved there.
/// A backend that commits elsewhere keeps the file as its copy through the same value.
package final class LocalCommit: CommitBackend {
  /// Nil: the state is kept in memory only (no `--state`).
  let store: StateStore?
  package let gate = ChangeGate()

  init(store: StateStore?) { self.store = store }

  /// The state file's path; nil when the state is kept in memory only.
  package var statePath: String? { store?.path }
  /// The most bytes of a state that a start reads of the state file: a state from elsewhere
  /// is held to the same bound before anything is read or allocated by it.
  package static var readLimit: Int { StateStore.readLimit }

  package var isBusy: Bool { false }
  package var isCommitting: Bool { false }
  package var retries: Bool { false }
  package var statusFields: [(String, String)] { [] }
  package func start() -> Bool { true }
  package func stop() {}

  package func commit(_ group: SavedGroup, of service: SectionService) -> CommitOutcome? {
    do {
      try store?.save(group) { service.encodeState(into: &$0) }
    } catch {
      Log.error("state not saved, changes refused: \(error)")
      return .refused(ProtocolError(.internal, "state not saved: \(error)"))
    }
    return .committed(revision: group.revision)
  }

  /// Keeps `service`'s unsaved group, committed elsewhere already, in the state file: a
  /// failure is logged, not refused; the file catches up at the next save or start.
  func keepCopy(of service: SectionService) {
    do {
      try store?.save(service.unsavedGroup) { service.encodeState(into: &$0) }
    } catch {
      Log.error("state file not saved (\(error)); the changes are committed, and the next start catches up")
    }
  }
}
