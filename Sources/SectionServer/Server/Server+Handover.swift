import Posix
import SectionCore
import Systemd

/// Connections that outlive the process, so that a restart does not cut clients off: on a stop or restart the connections are
/// left in systemd's file descriptor store with a record of what each had read and not
/// answered and had rendered and not sent; the next process takes them back, sends what was
/// unsent and answers what was unanswered. After a crash there is no record: subscribers on
/// the read-only socket are resynchronised (`!restart`, `!state`); every other connection is
/// closed, since a request of its may have been lost, or a BATCH cut in two, whose second half
/// must never run as single requests.
extension Server {
  /// Leaves every stored connection to the next process, with a record of each. Called once
  /// listening has stopped and the last changes are saved, so that every record is complete.
  func handOver() {
    var records: [HandoverState.Connection] = []
    for connection in connections.values {
      finishStream(connection)
      guard connection.flush() else {
        close(connection)
        continue
      }
      guard let stored = connection.stored, connection.batch == nil else {
        // Over FileDescriptorStoreMax, or inside a BATCH (whose lines so far are not part of
        // the record): it cannot be kept, and its batch is not applied.
        SectionService.appendGoodbyeEvent(reason: "restart", to: &connection.output)
        _ = connection.flush()
        close(connection)
        continue
      }
      records.append(
        HandoverState.Connection(
          inode: stored.inode, access: connection.access, subscription: connection.subscription,
          discarding: connection.framer.discarding, inputEnded: connection.inputEnded,
          quitting: connection.state == .quitting, pending: connection.pending,
          output: connection.output.unsentBytes, name: connection.session.author.name))
    }
    let handover = HandoverState(
      fingerprint: HandoverState.fingerprint(of: service.model.sections), connections: records)
    do {
      let memory = try FileDescriptor.memory(named: "sectiond-handover", holding: handover.encode())
      defer { memory.close() }
      try FileDescriptorStore.store([memory], name: ConnectionStore.handoverName)
      Log.notice("stopping, \(records.count) connections left to the next process: \(statusLine)")
    } catch {
      Log.error(
        "stopping; cannot leave a record of the connections (\(error)): the next process treats them as after a crash"
      )
    }
  }

  /// Takes back what the previous process left in the store: `inherited` are the descriptors
  /// systemd passed that are not listening sockets.
  func restore(_ inherited: [SocketActivation.Inherited]) {
    var handover: HandoverState?
    for descriptor in inherited where descriptor.name == ConnectionStore.handoverName {
      do {
        handover = try HandoverState.decode(
          descriptor.fd.readAllFromStart(subject: "handover", limit: 1 << 30))
      } catch {
        Log.warning("the previous process's record of its connections is unreadable (\(error))")
      }
    }
    let records = Dictionary(
      (handover?.connections ?? []).map { ($0.inode, $0) }, uniquingKeysWith: { first, _ in first })
    var resumed = 0
    var resynchronised = 0
    var closed = 0
    for descriptor in inherited {
      // What becomes of it: resumed from its record, resynchronised (a read-only subscriber
      // after a crash), or nil: closed, and forgotten by the store.
      var record: HandoverState.Connection?
      let described = ConnectionStore.parse(descriptor.name)
      let inode = descriptor.kind == .connectedSocket ? descriptor.fd.identity()?.inode : nil
      if let described, let inode {
        record = records[inode].flatMap { $0.access == described.access ? $0 : nil }
      }
      guard let connectionStore, let described, let inode,
        record != nil || (described.subscribed && described.access == .readOnly)
      else {
        FileDescriptorStore.remove(name: descriptor.name)
        descriptor.fd.close()
        if descriptor.name != ConnectionStore.handoverName { closed += 1 }
        continue
      }
      let connection = Connection(fd: descriptor.fd, access: described.access)
      // Registered first, so that one it cannot watch is never left among the subscribers.
      guard register(connection) else {
        FileDescriptorStore.remove(name: descriptor.name)
        continue
      }
      connectionStore.adopt(connection, inode: inode, name: descriptor.name)
      if let record {
        resume(connection, from: record)
        resumed += 1
      } else {
        subscribe(connection)
        service.appendRestartEvents(to: &connection.output)
        resynchronised += 1
      }
      queueFlush(connection)
      turn.runnable.append(connection)
    }
    if let handover, handover.fingerprint != HandoverState.fingerprint(of: service.model.sections),
      service.announceReload(by: daemon) == .changed
    {
      // Saved in the state file before any other backend begins, as a group committed here.
      switch localCommit.commit(service.unsavedGroup, of: service) {
      case .refused(let refusal)?: finish(.refused(refusal))
      default: handOn()
      }
    }
    if !turn.runnable.isEmpty { resume?.trigger() }
    if resumed + resynchronised + closed > 0 {
      Log.notice(
        "took over \(resumed) connections from the previous process"
          + (handover == nil ? " (it crashed)" : "")
          + ", resynchronised \(resynchronised) subscribers, closed \(closed)")
    }
  }

  /// A connection exactly as the previous process left it.
  private func resume(_ connection: Connection, from record: HandoverState.Connection) {
    connection.framer = LineFramer(discarding: record.discarding)
    connection.pending = record.pending
    connection.output.append(contentsOf: record.output)
    if record.inputEnded { connection.handle(.endOfInput) }
    if let name = record.name { connection.session.author = connection.session.author.named(name) }
    if record.quitting { connection.handle(.quit) }
    if record.subscription != .none {
      subscribe(connection)
      switch record.subscription {
      case .owedSnapshot: connection.handle(.fellBehind)
      // Not left by a process that finishes each replay before its record; kept as it came.
      case .replaying: connection.handle(.replay)
      case .live, .none: break
      }
    }
  }
}
