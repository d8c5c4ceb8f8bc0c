import CCurl
import Posix
import Systemd

/// libcurl's multi-socket interface driven by an sd-event loop: curl says which sockets to
/// watch for what (CURLMOPT_SOCKETFUNCTION) and when to wake it (CURLMOPT_TIMERFUNCTION);
/// the loop's io and time sources tell curl what became ready (curl_multi_socket_action).
/// No threads: every transfer runs and completes on the loop's thread. The multi handle keeps
/// the connections between transfers, so a request after the first reuses its member's.
final class CurlMulti {
  private let loop: EventLoop
  private let multi: UnsafeMutableRawPointer
  /// The sockets curl asked to have watched. A connection's stays registered in the loop
  /// between its requests (`Watched.parked`): adding it to epoll for each request and removing
  /// it after cost a fleet host two `epoll_ctl` calls a change (bench/fleet_cost.py --tools
  /// strace), and sd-event's source made and freed.
  private(set) var sockets: [Int32: Watched] = [:]
  /// The connections' sockets curl made (CURLOPT_SOCKOPTFUNCTION) and has not closed yet
  /// (CURLOPT_CLOSESOCKETFUNCTION): only these are kept registered when curl is done with them
  /// for now, since only their closing is seen. Others (the threaded resolver's pipe, which
  /// curl closes itself) would leave epoll when closed behind a source that believes them
  /// there, and a new socket of the same number would be watched by nobody.
  private var connections: Set<Int32> = []
  private var timer: EventSource?
  /// curl's "as soon as possible": a time source would wait for its 1 ms accuracy window
  /// (measured: 0.6 ms more per call at the p50), a deferred source runs on the next iteration.
  private var soon: EventSource?
  /// The transfers under way, by easy handle: this keeps them alive while curl has them.
  private var transfers: [UnsafeMutableRawPointer: Transfer] = [:]
  /// Easy handles whose transfers ended, for the next ones: making a handle (curl_easy_init)
  /// and freeing it cost more of libcurl's time than the request itself (a fleet host makes
  /// one or two a change). They are not `curl_easy_reset`: every transfer sets every option
  /// any transfer sets (`Transfer.init` says why that suffices), and a reset would cost each
  /// reuse 2,600 instructions more (callgrind, libcurl 7.88.1: bench/curl_reset_cost.c), where
  /// the host that commits a TOGGLE spends about 160k on it in all. Readable for the tests. curl
  /// keeps the connections in the multi handle either way.
  private(set) var idle: [UnsafeMutableRawPointer] = []
  /// Enough for the calls a host has under way at once (a commit, a read, a watch); more are
  /// freed.
  private static let idleLimit = 4

  /// Loads libcurl (the first time in the process) and makes the multi handle.
  init(loop: EventLoop) throws(EtcdError) {
    guard ccurl_load() == 0 else {
      throw EtcdError(.library, call: "load", member: nil, detail: String(cString: ccurl_load_error()))
    }
    guard let multi = ccurl_multi_init() else {
      throw EtcdError(.library, call: "curl_multi_init", member: nil, detail: "out of memory")
    }
    self.loop = loop
    self.multi = multi
    let me = Unmanaged.passUnretained(self).toOpaque()
    ccurl_multi_setopt_socket(multi, CURLMOPT_SOCKETFUNCTION, socketThunk)
    ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
    ccurl_multi_setopt_timer(multi, CURLMOPT_TIMERFUNCTION, timerThunk)
    ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
  }

  deinit {
    // curl may still call back while it closes connections: not into an object going away.
    // Their sockets it closes through `closed`, which only closes them now.
    ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, nil)
    ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, nil)
    sockets.removeAll()
    for easy in transfers.keys { ccurl_multi_remove_handle(multi, easy) }
    transfers.removeAll()
    for easy in idle { ccurl_easy_cleanup(easy) }
    ccurl_multi_cleanup(multi)
  }

  /// Whether curl is running (`curl_multi_socket_action`): its callbacks (a watch's stream
  /// of updates among them) must not add or remove transfers then ("API function called from
  /// within callback"): those wait in `deferred` until it returns.
  private var acting = false
  private var deferred: [(start: Bool, transfer: Transfer)] = []

  /// An easy handle for a new transfer: one that served before, or a new one (`fresh`, which
  /// has none of the client's options yet); nil without memory.
  func easyHandle() -> (easy: UnsafeMutableRawPointer, fresh: Bool)? {
    if let easy = idle.popLast() { return (easy, false) }
    guard let easy = ccurl_easy_init() else { return nil }
    // A connection takes these from the handle that opens it, and calls them when it is
    // made and when it is closed, whichever handle it serves then.
    let me = Unmanaged.passUnretained(self).toOpaque()
    ccurl_easy_setopt_sockopt(easy, CURLOPT_SOCKOPTFUNCTION, openedThunk)
    ccurl_easy_setopt_pointer(easy, CURLOPT_SOCKOPTDATA, me)
    ccurl_easy_setopt_closesocket(easy, CURLOPT_CLOSESOCKETFUNCTION, closeThunk)
    ccurl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, me)
    return (easy, true)
  }

  /// Takes back the handle of a transfer that is over (no longer in the multi handle).
  func recycle(_ easy: UnsafeMutableRawPointer) {
    guard idle.count < Self.idleLimit else { return ccurl_easy_cleanup(easy) }
    idle.append(easy)
  }

  /// Starts `transfer`; its completion runs from the loop once curl is done with it.
  func start(_ transfer: Transfer) {
    if acting {
      deferred.append((true, transfer))
      return
    }
    transfers[transfer.easy] = transfer
    let code = ccurl_multi_add_handle(multi, transfer.easy)
    guard code == CURLM_OK else {
      transfers[transfer.easy] = nil
      transfer.finish(CURLE_FAILED_INIT, detail: String(cString: ccurl_multi_strerror(code)))
      return
    }
  }

  /// Stops `transfer` without running its completion.
  func cancel(_ transfer: Transfer) {
    if acting {
      deferred.append((false, transfer))
      return
    }
    guard transfers.removeValue(forKey: transfer.easy) != nil else { return }
    ccurl_multi_remove_handle(multi, transfer.easy)
  }

  /// A socket's registration in the loop: what it waits for, whether curl is done with it
  /// for now (a kept connection between requests), whether it is in epoll at all.
  struct Watched {
    let source: EventSource
    var events: IOEvents
    var parked = false
    var on = true
  }

  fileprivate func update(socket fd: Int32, what: Int32) {
    if what == CURL_POLL_REMOVE {
      if connections.contains(fd) {
        sockets[fd]?.parked = true
      } else {
        sockets.removeValue(forKey: fd)?.source.cancel()
      }
      return
    }
    var events: IOEvents = []
    if what & CURL_POLL_IN != 0 { events.insert(.readable) }
    if what & CURL_POLL_OUT != 0 { events.insert(.writable) }
    if var watched = sockets[fd] {
      if watched.events != events { watched.source.setIOEvents(events) }
      if !watched.on { watched.source.setEnabled(true) }
      watched.events = events
      watched.on = true
      watched.parked = false
      sockets[fd] = watched
      return
    }
    // sd_event_add_io fails only without memory; the transfer then ends at its timeout.
    guard
      let source = try? loop.watch(
        FileDescriptor(rawValue: fd), events: events,
        handler: { [unowned self] ready in
          self.ready(fd, ready)
        })
    else { return }
    sockets[fd] = Watched(source: source, events: events)
  }

  private func ready(_ fd: Int32, _ ready: IOEvents) {
    if sockets[fd]?.parked == true {
      // A kept connection between requests became readable: the member closed it (or broke
      // the protocol). curl finds that out itself before it reuses the connection; until then
      // the socket is out of epoll, or its readiness would spin the loop.
      sockets[fd]?.source.setEnabled(false)
      sockets[fd]?.on = false
      return
    }
    var mask: Int32 = 0
    if ready.contains(.readable) { mask |= CURL_CSELECT_IN }
    if ready.contains(.writable) { mask |= CURL_CSELECT_OUT }
    if mask == 0 { mask = CURL_CSELECT_ERR }
    act(on: fd, mask)
  }

  /// curl made a connection's socket.
  fileprivate func opened(_ fd: Int32) { connections.insert(fd) }

  /// curl closes a connection's socket: its source goes first, so that a socket made later
  /// with the same number starts with a registration of its own.
  fileprivate func closed(_ fd: Int32) {
    connections.remove(fd)
    sockets.removeValue(forKey: fd)?.source.cancel()
    FileDescriptor(rawValue: fd).close()
  }

  /// Which of `timer` and `soon` is armed: each is one-shot, so neither is once it has fired.
  /// Kept here so that curl's three or four timer calls a request switch off only what is on
  /// (each sd-event call was about 250 instructions, two a call switching off both).
  private var armed: Armed = .none
  private enum Armed { case none, soon, timer }

  /// curl's timer: -1 stops it; 0 asks for a call as soon as possible, but not from inside
  /// the callback: not from inside the caller's call either (a request started while the fleet
  /// is making a change, whose completion must not run inside it). So it runs when the loop's
  /// handler now running returns (`EventLoop.whenHandlerReturns`), or, asked from outside one
  /// (a bus call's), from `soon` on the next iteration, whichever comes first: serving every
  /// request's "at once" from `soon` cost a fleet host a turn of the loop (an `epoll_wait`) a
  /// change, and one more for the server's end-of-iteration work that turn set off.
  fileprivate func update(timeout milliseconds: Int) {
    if milliseconds != 0, armed == .soon { soon?.setEnabled(false) }
    if milliseconds <= 0, armed == .timer { timer?.setEnabled(false) }
    guard milliseconds >= 0 else {
      armed = .none
      return
    }
    if milliseconds == 0 {
      if soon == nil { soon = try? loop.deferred { [unowned self] in self.fired() } }
      if armed != .soon {
        soon?.trigger()
        loop.whenHandlerReturns(atReturn)
      }
      armed = .soon
      return
    }
    let microseconds = UInt64(milliseconds) * 1000
    if let timer {
      timer.rearm(after: microseconds)
    } else {
      timer = try? loop.timer(after: microseconds) { [unowned self] in self.fired() }
    }
    armed = .timer
  }

  /// `soon` or `timer` ran: neither is armed now, unless curl arms one from inside.
  private func fired() {
    armed = .none
    act(on: CURL_SOCKET_TIMEOUT, 0)
  }

  /// curl's "at once" served when a handler returns, unless `soon` served it first. Made once:
  /// a closure made for each request would be allocated for each.
  private lazy var atReturn: () -> Void = { [unowned self] in
    guard self.armed == .soon else { return }
    self.soon?.setEnabled(false)
    self.handedOver = false
    self.fired()
    // What a transfer handed over (a watch's lines, a completion) may leave work for the end
    // of the iteration (`EventLoop.afterEachIteration`), which a handler that was itself that
    // end's would not run again: a turn of `soon` makes sure it runs (curl, called early,
    // only asks for its timer again).
    guard self.handedOver else { return }
    if self.armed == .timer { self.timer?.setEnabled(false) }
    if self.armed != .soon { self.soon?.trigger() }
    self.armed = .soon
  }

  /// Whether a transfer handed anything to its owner (a stream's lines, a completion) since
  /// this was last cleared.
  var handedOver = false

  private func act(on socket: Int32, _ mask: Int32) {
    var running: Int32 = 0
    acting = true
    _ = ccurl_multi_socket_action(multi, socket, mask, &running)
    acting = false
    if !deferred.isEmpty {
      let waiting = deferred
      deferred.removeAll()
      for (start, transfer) in waiting {
        if start { self.start(transfer) } else { cancel(transfer) }
      }
    }
    var queued: Int32 = 0
    while let message = ccurl_multi_info_read(multi, &queued) {
      guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
      let result = ccurl_message_result(message)
      guard let transfer = transfers.removeValue(forKey: easy) else { continue }
      ccurl_multi_remove_handle(multi, easy)
      handedOver = true
      transfer.finish(result, detail: nil)
    }
  }
}

private let socketThunk: curl_socket_callback = { _, socket, what, userdata, _ in
  guard let userdata else { return 0 }
  Unmanaged<CurlMulti>.fromOpaque(userdata).takeUnretainedValue().update(socket: socket, what: what)
  return 0
}

private let timerThunk: curl_multi_timer_callback = { _, milliseconds, userdata in
  guard let userdata else { return 0 }
  Unmanaged<CurlMulti>.fromOpaque(userdata).takeUnretainedValue().update(timeout: milliseconds)
  return 0
}

private let openedThunk: curl_sockopt_callback = { userdata, socket, _ in
  if let userdata { Unmanaged<CurlMulti>.fromOpaque(userdata).takeUnretainedValue().opened(socket) }
  return CURL_SOCKOPT_OK
}

/// Also called from the multi handle's deinit (curl_multi_cleanup closes the connections).
private let closeThunk: curl_closesocket_callback = { userdata, socket in
  guard let userdata else {
    FileDescriptor(rawValue: socket).close()
    return 0
  }
  Unmanaged<CurlMulti>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.closed(socket) }
  return 0
}
