import SectionCore
import Systemd

/// The bookkeeping of one loop turn of the group commit: who waits for the turn's save, who is
/// released after it, who has output to write. Socket connections and D-Bus calls are its two
/// fronts: a change from either holds its answer for the one save, a read from either that
/// would show unsaved changes waits for it, and both are answered, or refused, by the same
/// steps (`Server.refuseHeld`, `Server.releaseWaiting`, `Server.handleReleased`).
struct Turn {
  /// Connections whose replies are held for the save (a group, begun by a change).
  var heldConnections: [Connection] = []
  /// Bus calls whose change waits for the save: answered after it, or refused with NotSaved.
  var heldCalls: [BusFace.HeldCall] = []
  /// Connections whose next request waits for other clients' changes to be saved.
  var waitingConnections: [Connection] = []
  /// Bus calls whose answer would show changes not saved yet.
  var waitingCalls: [BusFace.WaitingCall] = []
  /// Connections whose requests waited for the save just done (or refused), the reads first.
  var releasedConnections: [Connection] = []
  /// Bus calls that waited for the save just done (or refused), in the order they came.
  var releasedCalls: [BusFace.WaitingCall] = []
  /// Connections with input left over that can be handled now: once output drained, or taken
  /// over from the previous process.
  var runnable: [Connection] = []
  /// Connections with output queued during this turn (each marked `flushQueued`).
  var toFlush: [Connection] = []

  /// Nothing is held, waiting, released or queued: what a turn leaves behind once it is over.
  var isOver: Bool {
    heldConnections.isEmpty && heldCalls.isEmpty && waitingConnections.isEmpty && waitingCalls.isEmpty
      && releasedConnections.isEmpty && releasedCalls.isEmpty && runnable.isEmpty && toFlush.isEmpty
  }
}

extension Server {
  /// A change's reply was queued from `replyStart`: it is held for the save, and a
  /// connection whose group it begins joins the turn's held ones.
  func holdForSave(_ connection: Connection, replyStart: Int) {
    let begins = connection.isReady
    connection.handle(.changed(replyStart: replyStart))
    if begins { turn.heldConnections.append(connection) }
  }

  /// The request at the front of the unhandled input waits until the changes of this turn
  /// are saved (or refused); it is kept with the rest of the input, from the start of its
  /// line. A connection whose own replies are held is already waiting for the save.
  func waitForSave(_ connection: Connection) {
    guard connection.heldReplyStart == nil else { return }
    connection.handle(.waitForOthers)
    turn.waitingConnections.append(connection)
  }

  /// A bus call's change waits for the save, as a connection's reply does: its return is
  /// sent after the save's signals, or the refusal if the save fails.
  func holdForSave(_ held: BusFace.HeldCall) {
    turn.heldCalls.append(held)
  }

  /// A bus call whose answer would show changes not saved yet is handled again right after
  /// the save, before the connections that waited for it.
  func waitForSave(_ call: BusFace.WaitingCall) {
    turn.waitingCalls.append(call)
  }

  func queueFlush(_ connection: Connection) {
    guard !connection.flushQueued else { return }
    connection.flushQueued = true
    turn.toFlush.append(connection)
  }

  /// The save failed and its changes were undone: every reply and return held for it, on
  /// either front, becomes the refusal.
  func refuseHeld(_ refusal: ProtocolError) {
    for connection in turn.heldConnections { connection.refuseHeldReplies(with: refusal.line) }
    for held in turn.heldCalls { bus?.answer(held.call, refusal) }
    turn.heldCalls.removeAll(keepingCapacity: true)
  }

  /// The save is done (or refused): replies go out, the bus calls' returns follow their
  /// signals, and the requests and calls that waited are released, the reads first.
  func releaseWaiting() {
    if !turn.heldCalls.isEmpty {
      bus?.answerAfterSignals(turn.heldCalls)
      turn.heldCalls.removeAll(keepingCapacity: true)
    }
    if !turn.waitingCalls.isEmpty {
      turn.releasedCalls.append(contentsOf: turn.waitingCalls)
      turn.waitingCalls.removeAll(keepingCapacity: true)
    }
    // The reads first: a connection waits for others' changes because its next request
    // reads the state.
    for connection in turn.waitingConnections { release(connection) }
    for connection in turn.heldConnections { release(connection) }
    turn.heldConnections.removeAll(keepingCapacity: true)
    turn.waitingConnections.removeAll(keepingCapacity: true)
  }

  private func release(_ connection: Connection) {
    guard !connection.isClosed else { return }
    if keepsHeldRequests { connection.forgetHeldGroup() }
    let parked = connection.parked
    connection.handle(.released)
    if parked { unpark(connection) }
    queueFlush(connection)
    if connection.hasRequestsLeft { turn.releasedConnections.append(connection) }
  }

  /// Answers the requests and calls that waited for the save just done: called right after
  /// it, before a client can make another change. The bus calls first, as they came.
  func handleReleased() {
    if !turn.releasedCalls.isEmpty {
      let calls = turn.releasedCalls
      turn.releasedCalls.removeAll(keepingCapacity: true)
      bus?.handleReleased(calls)
    }
    guard !turn.releasedConnections.isEmpty else { return }
    let ready = turn.releasedConnections
    turn.releasedConnections.removeAll(keepingCapacity: true)
    handleWaiting(ready)
  }

  /// Connections whose input waited for their output to drain, or that were taken over.
  func handleRunnable() {
    let ready = turn.runnable
    turn.runnable.removeAll(keepingCapacity: true)
    handleWaiting(ready)
  }

  /// Handles the input of connections that waited (for a save, or for output to drain) in two
  /// passes: the request each one waited with first, then the rest. A request waits for a save
  /// because it reads the state (or depends on it); answered before any of them makes a new
  /// change, it waits for one save only, however many clients flood changes.
  private func handleWaiting(_ ready: [Connection]) {
    for connection in ready where connection.acceptsRequests() {
      handlePending(connection, replies: 1)
    }
    for connection in ready where connection.hasRequestsLeft && connection.takesNextRequest() {
      handlePending(connection)
    }
  }
}
