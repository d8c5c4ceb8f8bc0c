import Posix
import SectionCore
import Systemd

/// Group commit: at the end of each loop iteration the changes of that iteration are saved
/// once, then replies are released, events broadcast and everything queued is written. What
/// the turn holds until then is `Turn` (`Server+Turn`); writing is `Server+Writing`, the
/// subscribers `Server+Subscribers`, long answers `Server+Streams`.
extension Server {
  /// End of a loop iteration: save the changes of this iteration once, then write everything.
  func finishIteration() {
    if let fleet {
      if stopRequested && !fleet.isCommitting { return shutdown() }
      if service.hasUnsavedChanges && !fleet.isBusy { commit(to: fleet) }
      if fleet.reloadWhenIdle && !fleet.isBusy && !service.hasUnsavedChanges {
        fleet.reloadWhenIdle = false
        reloadFromSignal()
      }
    } else if service.hasUnsavedChanges {
      save()
    }
    if reloadRequested && !service.hasUnsavedChanges { reloadFinished() }
    // The requests that waited for this save are answered now, before a client can make
    // another change; the changes they make themselves are saved at the end of the next turn.
    handleReleased()
    // Changes made by the requests just released are saved at the end of another turn; in a
    // fleet that is once the group on its way to etcd is through, not in a spin meanwhile.
    if service.hasUnsavedChanges && fleet?.isBusy != true { resume?.trigger() }
    let connections = turn.toFlush
    turn.toFlush.removeAll(keepingCapacity: true)
    for connection in connections {
      connection.flushQueued = false
      write(connection)
    }
    bus?.publish()
  }

  /// Saves the turn's group of changes and hands it on, in one place and in this order: the
  /// state file, the history, the subscribers' events, `--log-changes`, the D-Bus signals, the
  /// status. Each takes what it needs from the one value (`SavedGroup`); none reads another's
  /// text. A save that fails refuses the whole group: undone, and its requests answered so.
  func save() {
    do {
      try store?.save(service.unsavedGroup) { service.encodeState(into: &$0) }
    } catch  where fleet != nil {
      // etcd has the changes already: the state file catches up at the next save or start.
      Log.error("state file not saved (\(error)); the fleet has the changes")
    } catch {
      Log.error("state not saved, changes refused: \(error)")
      service.rollback()
      let refusal = ProtocolError(.internal, "state not saved: \(error)")
      refuseHeld(refusal)
      releaseWaiting()
      return
    }
    service.commit { group in
      broadcast(group.events)
      changeLog?.record(group, after: service.model, processName: service.processName)
      bus?.saved(group, after: service.model)
    }
    releaseWaiting()
    status?.figuresChanged()
  }
}
