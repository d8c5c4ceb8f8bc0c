import Posix
import SectionCore

/// Accepting clients, within the limits on how many may be connected.
extension Server {
  func accept(from listener: Listener) {
    for _ in 0..<64 {
      let result: IOResult<FileDescriptor>
      do {
        result = try UnixSocket.accept(listener.fd)
      } catch let error as PosixError
        where error.errno == .tooManyFiles || error.errno == .tooManyFilesInSystem
      {
        pauseAccepting(because: error)
        return
      } catch {
        Log.warning("\(error)")
        return
      }
      guard case .done(let fd) = result else { return }
      if acceptPaused {
        acceptPaused = false
        Log.notice("accepting clients again")
      }
      if let refusal = refusal(for: listener.access) {
        _ = ProtocolError.tooManyClients.line.withUnsafeBytes { try? fd.write($0) }
        fd.close()
        Log.debug("refused a client: \(refusal)")
        continue
      }
      add(fd, access: listener.access)
    }
  }

  /// Why one more client on a socket of `access` would be one too many, or nil. At the limit,
  /// the clients' pending events are handled first: hang-ups among them free slots.
  private func refusal(for access: SectionService.Access) -> String? {
    if connections.count >= limits.total || (access == .readOnly && readOnlyCount >= limits.readOnly) {
      pollClients()
    }
    if connections.count >= limits.total {
      return "\(limits.total) clients already (--max-clients)"
    }
    if access == .readOnly && readOnlyCount >= limits.readOnly {
      return "\(limits.readOnly) read-only clients already (--max-readonly-clients)"
    }
    return nil
  }

  private func add(_ fd: FileDescriptor, access socketAccess: SectionService.Access) {
    let access = socketAccess.readOnlySocket ? socketAccess : self.access(of: fd)
    let connection = Connection(fd: fd, access: access)
    guard register(connection) else { return }
    connectionStore?.keep(connection)
    if Log.threshold >= .debug, let peer = UnixSocket.peerCredentials(fd) {
      Log.debug(
        "client connected on the \(access.readOnlySocket ? "read-only" : "control") socket: uid \(peer.uid), pid \(peer.pid), level \(access.level.rawValue)"
      )
    }
  }

  /// The access of a connection accepted on the control socket: what the rules give who is at
  /// the other end, as the kernel recorded them when it connected. Without rules, edit, asking
  /// the kernel nothing; a peer the kernel cannot tell about gets read, the least.
  private func access(of fd: FileDescriptor) -> SectionService.Access {
    guard accessRules != .none else { return .control }
    guard let peer = UnixSocket.peerCredentials(fd),
      let groups = accessRules.needsGroups ? UnixSocket.peerGroups(fd) : []
    else {
      Log.warning("the kernel did not say who connected to the control socket: the connection may only read")
      return SectionService.Access(level: .read)
    }
    return SectionService.Access(level: accessRules.level(uid: peer.uid, gids: [peer.gid] + groups))
  }

  /// Logs the request the service refused as above its client's level, with who sent it
  /// (Redis's ACL LOG keeps the same: who, what, and why).
  func noteDenial() {
    guard let (author, refusal) = service.takeDenial() else { return }
    let name =
      author.name.map { String(decoding: $0, as: UTF8.self) } ?? author.pid.flatMap(ProcessInfo.name(of:))
    denials.note(
      "refused a request of uid \(author.uid.map(String.init) ?? "?"), pid \(author.pid.map(String.init) ?? "?"), \(name.map { "name " + VisibleName.of($0) } ?? "no name"): DENIED \(refusal.message)"
    )
  }

  /// Watches a new connection's socket and counts it; false (and the socket closed) when it
  /// cannot be watched.
  func register(_ connection: Connection) -> Bool {
    do {
      try clients.add(connection.fd, events: connection.watchedEvents)
    } catch {
      Log.warning("\(error)")
      connection.fd.close()
      return false
    }
    connections[fd: connection.fd.rawValue] = connection
    if connection.access == .readOnly { readOnlyCount += 1 }
    status?.figuresChanged()
    return true
  }

  /// Out of file descriptors: stop accepting instead of spinning on a listener that stays
  /// readable, and try again when a client leaves or after a short pause.
  private func pauseAccepting(because error: PosixError) {
    if !acceptPaused {  // once per shortage, not every 100 ms
      acceptPaused = true
      Log.warning("cannot accept more clients: \(error); retrying every 100 ms until a descriptor is free")
    }
    for listener in listeners { listener.source?.setEnabled(false) }
    acceptRetry =
      acceptRetry ?? (try? loop.timer(after: 100_000) { [unowned self] in self.resumeAccepting() })
    acceptRetry?.rearm(after: 100_000)
  }

  func resumeAccepting() {
    for listener in listeners { listener.source?.setEnabled(true) }
  }
}
