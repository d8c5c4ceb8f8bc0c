import Posix
import SectionCore

/// Writing to the clients: what a connection's socket takes, and what the socket is watched for.
extension Server {
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
      connection.handle(.outputDrained)
      if connection.hasRequestsLeft {
        turn.runnable.append(connection)
        resume?.trigger()
      }
    }
    var events: IOEvents = []
    // A long answer still to be made waits for the socket to take more, as output does.
    if (!connection.output.isEmpty || connection.stream != nil) && connection.heldReplyStart == nil {
      events.insert(.writable)
    }
    if connection.state == .ready && !connection.inputEnded { events.insert(.readable) }
    // One waiting for a save stays watched for input until some comes (`read` drops the watch
    // then): a client with one request in flight sends nothing meanwhile, and dropping and
    // restoring the watch around every wait cost two epoll_ctl a change where the wait is a
    // round trip (a fleet's commit: 18.9 system calls a TOGGLE on the host that commits).
    if connection.isWaitingForSave && connection.watchedEvents.contains(.readable) {
      events.insert(.readable)
    }
    watch(connection, for: events)
  }

  /// Takes a hung-up connection that waits for a save out of the epoll set (`Life.parked`: with
  /// a commit backend elsewhere the wait is a round trip to it, seconds when it is slow, and the
  /// hang-up, reported at every poll, had the loop spin meanwhile). `release` puts it back.
  func park(_ connection: Connection) {
    connection.handle(.park)
    clients.remove(connection.fd)
  }

  /// Puts a connection back in the epoll set once its release ended its parking, watched for
  /// what it was watched for before.
  func unpark(_ connection: Connection) {
    do {
      try clients.add(connection.fd, events: connection.watchedEvents)
    } catch {
      Log.warning("\(error)")
      close(connection)
    }
  }

  func watch(_ connection: Connection, for events: IOEvents) {
    guard events != connection.watchedEvents else { return }
    connection.watchedEvents = events
    if connection.parked { return }  // given when it is put back
    do {
      try clients.modify(connection.fd, events: events)
    } catch {
      Log.warning("\(error)")
      close(connection)
    }
  }
}
