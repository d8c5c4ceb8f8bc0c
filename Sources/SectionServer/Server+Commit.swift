import Posix
import SectionCore
import Systemd

/// Group commit: at the end of each loop iteration the changes of that iteration are saved
/// once, then replies are released, events broadcast and everything queued is written.
extension Server {
  /// End of a loop iteration: save the changes of this iteration once, then write everything.
  func finishIteration() {
    if service.hasUnsavedChanges { save() }
    if reloadRequested && !service.hasUnsavedChanges { reloadFinished() }
    // The requests that waited for this save are answered now, before a client can make
    // another change; the changes they make themselves are saved at the end of the next turn.
    bus?.handleReleased()
    if !released.isEmpty { handleReleased() }
    if service.hasUnsavedChanges { resume?.trigger() }
    let connections = toFlush
    toFlush.removeAll(keepingCapacity: true)
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
    } catch {
      Log.error("state not saved, changes refused: \(error)")
      service.rollback()
      let refusal = ProtocolError(.internal, "state not saved: \(error)")
      for connection in waitingForSave { connection.refuseHeldReplies(with: refusal.line) }
      bus?.saveFailed(refusal)
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

  /// The save is done (or refused): replies go out, and the requests that waited are
  /// `released`, the reads first.
  private func releaseWaiting() {
    for connection in waitingForOthers + waitingForSave where !connection.isClosed {
      connection.state = .ready
      queueFlush(connection)
      if !connection.pending.isEmpty { released.append(connection) }
    }
    waitingForSave.removeAll(keepingCapacity: true)
    waitingForOthers.removeAll(keepingCapacity: true)
  }

  /// Queues the events for every subscriber; one that has too much unread gets a snapshot later.
  /// One that has read everything takes the turn's events whole, however many changes the
  /// turn's pipelines made (a large block is shared between subscribers, not copied).
  private func broadcast(_ events: [UInt8]) {
    guard !events.isEmpty else { return }
    for subscriber in subscribers where subscriber.subscription == .live {
      if !subscriber.output.isEmpty && subscriber.output.count + events.count > Connection.eventLimit {
        subscriber.subscription = .owedSnapshot
        queueFlush(subscriber)
      } else if subscriber.enqueue(events) {
        queueFlush(subscriber)
      }
    }
  }

  /// Queues the `!state` a subscriber is owed ahead of the reply it is about to get, so that a
  /// reply never overtakes it (after `PING` → `OK`, every earlier change has been seen).
  /// False when unsaved changes make a snapshot impossible now.
  func sendOwedSnapshot(_ connection: Connection) -> Bool {
    guard !service.hasUnsavedChanges else { return false }
    connection.subscription = .live
    service.appendStateEvent(to: &connection.output)
    return true
  }

  func queueFlush(_ connection: Connection) {
    guard !connection.flushQueued else { return }
    connection.flushQueued = true
    toFlush.append(connection)
  }

  func write(_ connection: Connection) {
    guard !connection.isClosed else { return }
    guard connection.flush() else {
      clientErrors?.note("a client left before reading \(connection.output.count) bytes of replies")
      close(connection)
      return
    }
    if connection.stream != nil {
      continueStream(connection)
      if connection.isClosed { return }
    }
    if connection.subscription == .owedSnapshot && connection.output.isEmpty {
      // A snapshot now would show changes whose events are still to be broadcast after the
      // save (or that a failed save undoes): then it goes at the end of the iteration.
      guard sendOwedSnapshot(connection) else {
        queueFlush(connection)
        return
      }
      guard connection.flush() else {
        close(connection)
        return
      }
    }
    if connection.isFinished {
      close(connection)
      return
    }
    if connection.state == .outputBlocked && connection.output.count < Connection.outputLimit / 2
      && connection.stream == nil
    {
      connection.state = .ready
      if !connection.pending.isEmpty {
        runnable.append(connection)
        resume?.trigger()
      }
    }
    var events: IOEvents = []
    // A long answer still to be made waits for the socket to take more, as output does.
    if (!connection.output.isEmpty || connection.stream != nil) && connection.heldReplyStart == nil {
      events.insert(.writable)
    }
    if connection.state == .ready && !connection.inputEnded { events.insert(.readable) }
    watch(connection, for: events)
  }

  /// Makes the next part of the connection's long answer once its output has drained below
  /// `HistoryStream.lowWater`, and sends what the socket takes: a client that does not read
  /// holds one part. One part a write, then the next when the socket is writable again: with
  /// hundreds of such connections writable at once, a part each keeps the loop turn short (at
  /// four parts a write, 700 clients asking for 9.5 MiB held another client's PING 1.0-1.1 s;
  /// at one, 0.2-0.5 s, debug build). A replay that is done makes its subscriber live; one
  /// whose next change went is owed the state instead.
  private func continueStream(_ connection: Connection) {
    guard var stream = connection.stream, connection.output.count < HistoryStream.lowWater else { return }
    let progress = service.continueStream(&stream, to: &connection.output)
    connection.stream = progress == .more ? stream : nil
    if stream.isReplay && progress != .more {
      connection.subscription = progress == .done ? .live : .owedSnapshot
    }
    if !connection.flush() { close(connection) }
  }

  /// Finishes a long answer whole, for what needs it in one piece (the handover's record).
  func finishStream(_ connection: Connection) {
    guard var stream = connection.stream else { return }
    connection.stream = nil
    let progress = service.continueStream(&stream, to: &connection.output, limit: .max)
    if stream.isReplay { connection.subscription = progress == .done ? .live : .owedSnapshot }
  }

  func watch(_ connection: Connection, for events: IOEvents) {
    guard events != connection.watchedEvents else { return }
    connection.watchedEvents = events
    do {
      try clients.modify(connection.fd, events: events)
    } catch {
      Log.warning("\(error)")
      close(connection)
    }
  }

  // MARK: Subscribers

  func subscribe(_ connection: Connection) {
    guard !connection.isSubscribed else { return }
    connection.subscription = .live
    connection.subscriberSlot = subscribers.count
    subscribers.append(connection)
    connectionStore?.update(connection)
    status?.figuresChanged()
  }

  func unsubscribe(_ connection: Connection) {
    guard connection.isSubscribed else { return }
    let slot = connection.subscriberSlot
    subscribers.swapAt(slot, subscribers.count - 1)
    subscribers[slot].subscriberSlot = slot
    subscribers.removeLast()
    connection.subscription = .none
    connectionStore?.update(connection)
    status?.figuresChanged()
  }
}
