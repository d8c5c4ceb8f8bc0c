import Posix
import SectionCore
import Systemd

/// Group commit: at the end of each loop iteration the changes of that iteration are saved
/// once, then replies are released, events broadcast and everything queued is written. What
/// the turn holds until then is `Turn` (`Server+Turn`); writing is `Server+Writing`, the
/// subscribers `Server+Subscribers`, long answers `Server+Streams`.
extension Server {
  /// End of a loop iteration: commit the changes of this iteration once, then write everything.
  func finishIteration() {
    if stopRequested && !backend.isCommitting { return shutdown() }
    if service.hasUnsavedChanges && !backend.isBusy { commitTurn() }
    if reloadWhenIdle && !backend.isBusy && !service.hasUnsavedChanges {
      reloadWhenIdle = false
      reloadFromSignal()
    }
    if reloadRequested && !service.hasUnsavedChanges { reloadFinished() }
    // The requests that waited for this save are answered now, before a client can make
    // another change; the changes they make themselves are saved at the end of the next turn.
    handleReleased()
    // Changes made by the requests just released are committed at the end of another turn;
    // while a commit is under way, once it is through, not in a spin meanwhile.
    if service.hasUnsavedChanges && !backend.isBusy { resume?.trigger() }
    let connections = turn.toFlush
    turn.toFlush.removeAll(keepingCapacity: true)
    for connection in connections {
      connection.flushQueued = false
      write(connection)
    }
    bus?.publish()
  }

  /// Hands on the turn's group, committed (`CommitOutcome.committed`), in one place and in this
  /// order: the history, the subscribers' events, `--log-changes`, the D-Bus signals, the
  /// status. Each takes what it needs from the one value (`SavedGroup`); none reads another's
  /// text. The state file has it already (`LocalCommit`).
  func handOn() {
    service.commit { group in
      broadcast(group.events)
      changeLog?.record(group, after: service.model, processName: service.processName)
      bus?.saved(group, after: service.model)
    }
    releaseWaiting()
    status?.figuresChanged()
  }
}
