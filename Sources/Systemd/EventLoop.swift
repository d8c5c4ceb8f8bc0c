import CSystemd
import Glibc
import Posix

/// sd-event, the loop systemd's own daemons use, behind a small Swift surface.
///
/// Handlers are Swift closures; each source keeps its closure in a box whose address is the
/// C callback's userdata. The loop is single-threaded: everything runs on the thread that calls `run`.
public final class EventLoop {
  /// The sd_event, for sources registered elsewhere in this module (the bus, see `Bus`).
  let event: OpaquePointer

  public init() throws {
    var event: OpaquePointer?
    try check(sd_event_new(&event), "sd_event_new")
    self.event = event!
  }

  deinit { sd_event_unref(event) }

  /// CLOCK_MONOTONIC in microseconds as of this iteration (the time sources are armed in).
  var now: UInt64 {
    var now: UInt64 = 0
    _ = sd_event_now(event, CLOCK_MONOTONIC, &now)
    return now
  }

  /// Watches `fd`; `handler` gets the epoll events that fired (EPOLLIN, EPOLLOUT, EPOLLHUP...).
  public func watch(
    _ fd: FileDescriptor, events: IOEvents, handler: @escaping (IOEvents) -> Void
  ) throws -> EventSource {
    try add("sd_event_add_io", { handler(IOEvents(rawValue: $0)) }) { source, userdata in
      sd_event_add_io(event, source, fd.rawValue, events.rawValue, ioThunk, userdata)
    }
  }

  /// Handles `signal` through a signalfd. The signal is blocked first, as sd-event requires.
  public func onSignal(_ signal: Int32, handler: @escaping () -> Void) throws -> EventSource {
    try ProcessInfo.blockSignals([signal])
    return try add("sd_event_add_signal", { _ in handler() }) { source, userdata in
      sd_event_add_signal(event, source, signal, signalThunk, userdata)
    }
  }

  /// Runs `handler` at the end of every loop iteration in which any other source ran:
  /// the place for work that batches what the handlers of that iteration did.
  public func afterEachIteration(handler: @escaping () -> Void) throws -> EventSource {
    try add("sd_event_add_post", { _ in handler() }) { source, userdata in
      sd_event_add_post(event, source, staticThunk, userdata)
    }
  }

  /// A source that runs `handler` on the next iteration each time it is `trigger()`ed.
  public func deferred(handler: @escaping () -> Void) throws -> EventSource {
    let source = try add("sd_event_add_defer", { _ in handler() }) { source, userdata in
      sd_event_add_defer(event, source, staticThunk, userdata)
    }
    source.setEnabled(false)
    return source
  }

  /// Runs `work` once when the handler now running returns to the loop: in the same iteration,
  /// without a turn of its own. A deferred source costs a turn, and each turn an `epoll_wait`
  /// (sd-event dispatches one source a turn); this is for work that must not run inside the
  /// caller's call (a library's "call me at once": its callbacks would run inside a change the
  /// caller is making) but need not wait for the next iteration. Only the handlers of the
  /// sources made here return through it (not sd-bus's callbacks): asked from anywhere else,
  /// `work` waits for the next of those, so a caller that cannot wait also triggers a
  /// `deferred` source, and `work` checks whether that ran first.
  public func whenHandlerReturns(_ work: @escaping () -> Void) {
    returning.work.append(work)
  }

  /// The work `whenHandlerReturns` holds, shared with every source's box.
  private let returning = Returning()

  /// A one-shot timer `microseconds` from now on CLOCK_MONOTONIC; re-arm it with `rearm(after:)`.
  public func timer(after microseconds: UInt64, handler: @escaping () -> Void) throws -> EventSource {
    try add("sd_event_add_time_relative", { _ in handler() }) { source, userdata in
      sd_event_add_time_relative(event, source, CLOCK_MONOTONIC, microseconds, 1000, timeThunk, userdata)
    }
  }

  /// Registers a source through `register`, with `handler` boxed as the C callback's userdata.
  private func add(
    _ call: String, _ handler: @escaping (UInt32) -> Void,
    _ register: (UnsafeMutablePointer<OpaquePointer?>, UnsafeMutableRawPointer) -> Int32
  ) throws -> EventSource {
    let box = Box(handler, returning)
    var source: OpaquePointer?
    try check(register(&source, Unmanaged.passUnretained(box).toOpaque()), call)
    return EventSource(source!, box)
  }

  /// Sends WATCHDOG=1 from a timer of this loop when systemd asked for it (WATCHDOG_USEC,
  /// and WATCHDOG_PID naming this process), so a wedged loop stops the pings.
  ///
  /// The pings come every third of the interval, more often than the half systemd suggests:
  /// sd_event_set_watchdog waits anywhere between 1/2 and 3/4 of it, and on a loaded machine
  /// scheduling delay must never make a ping late. A ping is one small datagram.
  /// Returns whether a watchdog is on.
  @discardableResult
  public func enableWatchdog() throws -> Bool {
    var interval: UInt64 = 0
    guard try check(sd_watchdog_enabled(0, &interval), "sd_watchdog_enabled") > 0, interval > 0 else {
      return false
    }
    let period = interval / 3
    watchdog = try timer(after: period) { [unowned self] in
      Notifier.watchdog()
      self.watchdog?.rearm(after: period)
    }
    return true
  }

  private var watchdog: EventSource?

  /// Runs until `exit(code:)`; returns the exit code.
  public func run() throws -> Int32 {
    let result = sd_event_loop(event)
    try check(result, "sd_event_loop")
    return result
  }

  public func exit(code: Int32 = 0) {
    _ = sd_event_exit(event, code)
  }
}

/// An event source; it stays registered until `cancel()` (or until the owner drops it).
public final class EventSource {
  private var source: OpaquePointer?
  private let box: Box

  fileprivate init(_ source: OpaquePointer, _ box: Box) {
    self.source = source
    self.box = box
  }

  deinit { cancel() }

  /// Turns the source on or off; an off source does not fire.
  public func setEnabled(_ enabled: Bool) {
    guard let source else { return }
    _ = sd_event_source_set_enabled(source, enabled ? Int32(SD_EVENT_ON) : Int32(SD_EVENT_OFF))
  }

  /// Sources with a lower value run first when several are ready (sd-event's default is 0).
  public func setPriority(_ priority: Int64) {
    guard let source else { return }
    _ = sd_event_source_set_priority(source, priority)
  }

  /// Changes what an io source waits for (EPOLLIN, EPOLLOUT): libcurl's multi-socket API asks
  /// for one socket to be watched for reading, then writing, then both, as a transfer goes.
  public func setIOEvents(_ events: IOEvents) {
    guard let source else { return }
    _ = sd_event_source_set_io_events(source, events.rawValue)
  }

  /// Runs a deferred source once on the next iteration.
  public func trigger() {
    guard let source else { return }
    _ = sd_event_source_set_enabled(source, Int32(SD_EVENT_ONESHOT))
  }

  /// Re-arms a timer to fire `microseconds` from now.
  public func rearm(after microseconds: UInt64) {
    guard let source else { return }
    _ = sd_event_source_set_time_relative(source, microseconds)
    _ = sd_event_source_set_enabled(source, Int32(SD_EVENT_ONESHOT))
  }

  /// Unregisters the source. Safe to call twice, and from inside its own handler.
  public func cancel() {
    guard let source else { return }
    sd_event_source_disable_unref(source)
    self.source = nil
  }
}

private final class Box {
  let handler: (UInt32) -> Void
  let returning: Returning
  init(_ handler: @escaping (UInt32) -> Void, _ returning: Returning) {
    self.handler = handler
    self.returning = returning
  }
}

private final class Returning {
  var work: [() -> Void] = []
  /// The work being run, apart: what it asks for meanwhile waits for the next handler's
  /// return, so that work asking again each time cannot hold the loop in one iteration.
  private var running: [() -> Void] = []

  func run() {
    swap(&work, &running)
    for work in running { work() }
    running.removeAll(keepingCapacity: true)
  }
}

private func dispatch(_ userdata: UnsafeMutableRawPointer?, _ events: UInt32) -> Int32 {
  let box = Unmanaged<Box>.fromOpaque(userdata!).takeUnretainedValue()
  box.handler(events)
  if !box.returning.work.isEmpty { box.returning.run() }
  return 0
}

private let ioThunk: sd_event_io_handler_t = { _, _, events, userdata in dispatch(userdata, events) }
private let signalThunk: sd_event_signal_handler_t = { _, _, userdata in dispatch(userdata, 0) }
private let staticThunk: sd_event_handler_t = { _, userdata in dispatch(userdata, 0) }
private let timeThunk: sd_event_time_handler_t = { _, _, userdata in dispatch(userdata, 0) }

/// `sd_*` calls return -errno on failure.
@discardableResult
func check(_ result: Int32, _ call: String, _ subject: String? = nil) throws -> Int32 {
  if result < 0 { throw PosixError(call, subject, errno: Errno(-result)) }
  return result
}
