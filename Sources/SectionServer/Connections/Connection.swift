import Posix
import SectionCore

/// One client: its socket, the input not yet handled and the output not yet written.
final class Connection {
  /// Replies waiting beyond this stop the reading of requests until the client catches up.
  static let outputLimit = 1 << 20
  /// Events waiting beyond this are dropped for one `!state` snapshot once the client catches up.
  static let eventLimit = 64 << 10

  let fd: FileDescriptor
  let access: SectionService.Access
  /// Where it is in its life (`Life`): what it waits for, whether its input ended, its
  /// subscription, whether it is parked. Changed only by `handle(_:)`, which traps an illegal
  /// change; stored apiece, so that the request path reads each as a field (a debug build
  /// would otherwise call a getter and copy the whole value for every look).
  private(set) var state = State.ready
  /// The client sent end of input; answer what it sent, then close.
  private(set) var inputEnded = false
  private(set) var subscription = Subscription.none
  /// Hung up while it waits for a save: out of the epoll set until released (`Life.parked`).
  private(set) var parked = false
  var life: Life {
    Life(state: state, inputEnded: inputEnded, subscription: subscription, parked: parked)
  }
  /// Its socket's inode and its name in systemd's file descriptor store, while it is kept there.
  var stored: (inode: UInt64, name: String)?
  /// What the server's epoll set watches this socket for.
  var watchedEvents: IOEvents = .readable

  var framer = LineFramer()
  /// Input read but not handled yet: a partial line, or lines left while the connection waited.
  var pending: [UInt8] = []
  var output = OutputQueue()
  /// Queued in the turn's list of connections to flush (`Turn.toFlush`): the list's mark, not
  /// a state of the connection.
  var flushQueued = false
  /// Index in the server's subscriber list, for O(1) removal.
  var subscriberSlot = -1
  /// The lines of a BATCH not ended yet; discarded with the connection.
  var batch: Batch?
  /// The requests of the group held for the commit, kept when the backend may answer it with
  /// a retry (`CommitBackend.retries`), to run them again then.
  var heldRequests: [KeptRequest] = []
  /// The requests of a retried group, to run again before any input (`Server.runKept`).
  var rerun: [KeptRequest] = []
  /// The rest of a long answer from the history, made part by part as the client reads
  /// (`Server.continueStream`); no request is taken until it is sent.
  var stream: HistoryStream?
  /// What the service is handed with each request: the socket's access, and who this client
  /// is for the history, asked of the socket (SO_PEERCRED) at its first request; `CLIENT NAME`
  /// names it.
  lazy var session: Session = {
    let peer = UnixSocket.peerCredentials(fd)
    // A peer in a PID namespace this one cannot see has pid 0: not known.
    return Session(
      access: access,
      author: Author(
        via: .socket, uid: peer.map { UInt32($0.uid) }, pid: peer.flatMap { $0.pid > 0 ? Int32($0.pid) : nil }
      ))
  }()

  init(fd: FileDescriptor, access: SectionService.Access) {
    self.fd = fd
    self.access = access
  }

  /// Applies `event` to the connection's life. An event its life does not allow is a bug in
  /// the server, which must not go on serving with connections in states no one thought of:
  /// it traps.
  @inline(__always)
  func handle(_ event: Life.Event) {
    guard let next = life.next(on: event) else { refuse(event) }
    state = next.state
    inputEnded = next.inputEnded
    subscription = next.subscription
    parked = next.parked
  }

  /// The trap, out of line: the request path that inlines `handle` stays as small as it was.
  @inline(never)
  private func refuse(_ event: Life.Event) -> Never {
    preconditionFailure("connection \(fd.rawValue): \(event) is illegal in \(life)")
  }

  var isClosed: Bool { state == .closed }
  /// Waiting for a save, its own group's or others': it neither reads nor writes meanwhile.
  var isWaitingForSave: Bool {
    switch state {
    case .awaitingSave, .awaitingOthersSave: true
    case .ready, .outputBlocked, .quitting, .closed: false
    }
  }
  /// `state == .ready` as a pattern: the request loop asks for every run of requests.
  var isReady: Bool {
    if case .ready = state { return true }
    return false
  }
  var isSubscribed: Bool { subscription != .none }

  /// Whether a PING may be answered where it is framed, ahead of the service, as a plain line
  /// server answers it: only while nothing must come before its `OK`. Not inside a BATCH (the
  /// PING is one of its lines), not while replies are held for a save (the PING's `OK` would
  /// overtake them; it waits with the rest), not while a snapshot is owed (the `OK` promises
  /// every earlier change has been seen). The one statement of this rule: `Server.handle` and
  /// `Server.answerOnlyPings` both ask it.
  var answersPingsNow: Bool { isReady && batch == nil && subscription != .owedSnapshot }

  /// Whether requests may be taken from this connection now. Once a megabyte of output
  /// waits, or while a long answer is still being sent, it stops taking them
  /// (`.outputBlocked`) until the client has read half of it, or all of the answer.
  func acceptsRequests() -> Bool {
    guard isReady else { return false }
    if output.count >= Connection.outputLimit || stream != nil {
      handle(.outputFull)
      return false
    }
    return true
  }

  /// Whether the next request already read may be handled now: when requests are accepted,
  /// and while replies are held for a save (it joins their group), up to the output limit.
  func takesNextRequest() -> Bool {
    guard case .awaitingSave = state else { return acceptsRequests() }
    return output.count < Connection.outputLimit
  }

  /// Where the replies held for a save start, if any are.
  var heldReplyStart: Int? {
    if case .awaitingSave(let start, _) = state { return start }
    return nil
  }

  /// The held group came back as a retry: its replies are dropped and its requests are run
  /// again on the newer state (a TOGGLE toggles what is there then), before anything after
  /// them. A BATCH begun after the group and not ended yet stays open: its lines are not the
  /// group's. Its state goes back to ready with `released`.
  func takeBackHeldGroup() {
    guard case .awaitingSave(let start, _) = state else { return }
    output.removeTail(from: start)
    rerun.insert(contentsOf: heldRequests, at: 0)
    heldRequests.removeAll()
  }

  /// The held group is through (committed or refused): its requests are not run again.
  func forgetHeldGroup() {
    if !heldRequests.isEmpty { heldRequests.removeAll(keepingCapacity: true) }
  }

  /// Whether it has requests left to handle: input read, or a retried group's requests.
  var hasRequestsLeft: Bool { !pending.isEmpty || !rerun.isEmpty }

  /// The save failed: each reply of the held group becomes `refusal`, in request order.
  func refuseHeldReplies(with refusal: [UInt8]) {
    guard case .awaitingSave(let start, let replies) = state else { return }
    output.removeTail(from: start)
    for _ in 0..<replies { output.append(contentsOf: refusal) }
  }

  /// Whether there is nothing left to do but close: the client is done and so are we.
  var isFinished: Bool {
    switch state {
    case .quitting: output.isEmpty
    case .ready, .outputBlocked: inputEnded && !hasRequestsLeft && output.isEmpty && stream == nil
    case .awaitingSave, .awaitingOthersSave, .closed: false
    }
  }

  /// Writes as much of the output as the socket takes, but never a reply held for a save.
  /// False when the peer is gone.
  func flush() -> Bool {
    let alive = output.send(upToTail: heldReplyStart) { bytes in
      switch Result(catching: { try fd.write(bytes) }) {
      case .success(.done(let count)): count
      case .success(.wouldBlock): 0
      case .failure: nil
      }
    }
    let moved = output.compact()
    if moved > 0, case .awaitingSave = state { handle(.outputMoved(by: moved)) }
    return alive
  }

  /// Queues `bytes` behind the output, sending what the socket takes at once when nothing is
  /// waiting ahead of them: a broadcast then reaches the first subscribers before it is copied
  /// for the last (a large rest is shared, so `bytes` must never change afterwards). Returns whether output is left to flush (failures included: the flush
  /// meets them again and closes the connection).
  func enqueue(_ bytes: [UInt8]) -> Bool {
    var sent = 0
    if output.isEmpty,
      case .success(.done(let count)) = bytes.withUnsafeBytes({ b in Result { try fd.write(b) } })
    {
      sent = count
    }
    if sent < bytes.count { output.append(shared: bytes[sent...]) }
    return !output.isEmpty
  }
}
