import CSystemd
import CSystemdBus
import Glibc
import Posix

/// One connection to the system or the session bus, on an `EventLoop`, serving sectiond's
/// object (the vtable of CSystemdBus) under one well-known name.
///
/// The bus is watched with sources of its own rather than `sd_bus_attach_event`, whose
/// handler takes one message per loop turn: the daemon saves once per turn (group commit),
/// and one message a turn would make every bus change a save of its own. Here a turn takes up
/// to `messagesPerTurn` messages. A bus that is not there, or goes away, is retried every few
/// seconds: the daemon serves its sockets all the while.
public final class Bus {
  public enum Kind: String, Sendable {
    case system
    case session
  }

  /// What the served object does. `method`: a call of the interface, answered now or later;
  /// `property`: writes a property's value; `intercept`: sees every call to the object first
  /// and returns true when it took it.
  public struct Handlers {
    public var method: (BusCall) -> Void
    public var property: (String, inout BusWriter) throws -> Void
    public var intercept: (BusCall) -> Bool
    /// One line for the log: the connection came, went, or the name could not be had.
    public var log: (_ message: String, _ isProblem: Bool) -> Void
    /// A new connection to the bus, before its first message: what was learnt of the peers
    /// of the last one no longer holds (a restarted bus daemon gives their unique names out again).
    public var connected: () -> Void

    public init(
      method: @escaping (BusCall) -> Void, property: @escaping (String, inout BusWriter) throws -> Void,
      intercept: @escaping (BusCall) -> Bool, log: @escaping (String, Bool) -> Void,
      connected: @escaping () -> Void
    ) {
      self.method = method
      self.property = property
      self.intercept = intercept
      self.log = log
      self.connected = connected
    }
  }

  /// The most messages taken in one loop turn: the bound on how long the bus keeps socket
  /// clients (and the save) waiting. 128 calls are about 3 ms of the debug build's work, and
  /// enough that a pipelining client's calls are saved together.
  static let messagesPerTurn = 128
  /// The most messages sd-bus may hold unwritten before no further call is read (the calls
  /// then wait in the bus daemon, which refuses them past its own queue's limit). The bus
  /// daemon reads slowly when callers do not read their answers; while anything waits, the
  /// face refuses the reads whose answers are long (`isWriteBehind`), so what waits is
  /// short answers and signals: 4,096 of them are about a MiB.
  static let writesBehindLimit: UInt64 = 4096
  /// How long the bus daemon may take nothing sectiond sent before the connection is made
  /// anew. dbus-daemon counts a message against the connection it came from until the
  /// message is delivered, and stops reading that connection once the count passes its
  /// max_incoming_bytes: answers parked in the queues of callers that never read freeze the
  /// whole connection, for every other caller, for as long as those callers stay. A new
  /// connection starts with nothing counted against it. Five seconds is far past any pause
  /// of a bus daemon that is reading (it takes a message in microseconds).
  static let stallTimeout: UInt64 = 5_000_000
  /// The longest a turn goes on taking messages: large calls (a message may be 32 MB on the
  /// system bus) end the turn sooner than `messagesPerTurn` small ones, so the sockets wait
  /// for the bus no longer than for about 128 small calls.
  static let turnBudget: UInt64 = 5_000

  /// Waits between attempts to reach a missing bus: the first after one second, doubling to this.
  static let longestRetry: UInt64 = 16_000_000

  public let kind: Kind
  public let name: String
  public let path: String
  public let interface: String
  /// `path` and `interface` as C strings, made once: sd-bus takes them for every signal.
  private let cPath: UnsafeMutablePointer<CChar>
  private let cInterface: UnsafeMutablePointer<CChar>
  let handlers: Handlers
  private let loop: EventLoop
  private var bus: OpaquePointer?
  /// The connection's socket while connected: a test waits on it for a call to arrive before
  /// it lets the loop turn.
  var descriptor: Int32? { bus.map { sd_bus_get_fd($0) } }
  private var io: OpaquePointer?
  private var timer: OpaquePointer?
  private var vtableSlot: OpaquePointer?
  private var callbackSlot: OpaquePointer?
  private let object: UnsafeMutablePointer<sectiond_bus_object>
  private var retry: EventSource?
  private var retryDelay: UInt64 = 1_000_000
  /// What waited for the bus daemon when the loop last slept, and since when it has not shrunk.
  private var backlog = Backlog()
  /// The last failure was logged; the next success is logged too.
  private var failureLogged = false

  /// Connects now, or logs why not and keeps trying.
  public init(
    _ kind: Kind, name: String, path: String, interface: String, loop: EventLoop, handlers: Handlers
  ) {
    self.kind = kind
    self.name = name
    self.path = path
    self.interface = interface
    cPath = strdup(path)
    cInterface = strdup(interface)
    self.loop = loop
    self.handlers = handlers
    object = .allocate(capacity: 1)
    object.initialize(
      to: sectiond_bus_object(
        context: nil, method: methodThunk, property: propertyThunk, intercept: interceptThunk))
    object.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    connect()
  }

  deinit {
    disconnect()
    object.deallocate()
    free(cPath)
    free(cInterface)
  }

  public var isConnected: Bool { bus != nil }

  /// The bus daemon has not taken everything sent to it yet: a long answer now would wait
  /// in sectiond's memory.
  public var isWriteBehind: Bool { bus.map { queuedWrites($0) > 0 } ?? false }

  /// Emits the signal `member` of the interface, its arguments written by `body`. The path,
  /// interface and member go to sd-bus as the C strings they already are (this runs once per
  /// change while the bus is attached).
  public func emit(_ member: StaticString, _ body: (inout BusWriter) throws -> Void) throws {
    guard let bus else { return }
    var signal: OpaquePointer?
    try check(
      sd_bus_message_new_signal(bus, &signal, cPath, cInterface, cString(member)), "sd_bus_message_new_signal"
    )
    defer { sd_bus_message_unref(signal) }
    var writer = BusWriter(message: signal!)
    try body(&writer)
    try check(sd_bus_send(bus, signal, nil), "sd_bus_send")
  }

  /// One org.freedesktop.DBus.Properties.PropertiesChanged for `names`: the values of those
  /// the vtable says emit a change, the others as invalidated.
  public func propertiesChanged(_ names: [StaticString]) throws {
    guard let bus, !names.isEmpty else { return }
    try withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<CChar>?.self, capacity: names.count + 1) {
      strv in
      for (index, name) in names.enumerated() { strv[index] = UnsafeMutablePointer(mutating: cString(name)) }
      strv[names.count] = nil
      try check(
        sd_bus_emit_properties_changed_strv(bus, cPath, cInterface, strv.baseAddress),
        "sd_bus_emit_properties_changed")
    }
  }

  /// Writes what is queued and leaves the bus (the name goes with the connection).
  public func close() {
    if let bus { _ = sd_bus_flush(bus) }
    disconnect()
    retry = nil
  }

  // MARK: Connecting

  private func connect() {
    do {
      try open()
      handlers.connected()
      handlers.log("on the \(kind) bus as \(name)", false)
      failureLogged = false
      retryDelay = 1_000_000
    } catch {
      disconnect()
      if !failureLogged {
        handlers.log(
          "the \(kind) bus is not reachable (\(error)); trying again every few seconds, the sockets serve meanwhile",
          true)
        failureLogged = true
      }
      scheduleRetry()
    }
  }

  private func open() throws {
    var bus: OpaquePointer?
    switch kind {
    case .system: try check(sd_bus_open_system_with_description(&bus, "sectiond"), "sd_bus_open_system")
    case .session: try check(sd_bus_open_user_with_description(&bus, "sectiond"), "sd_bus_open_user")
    }
    self.bus = bus
    backlog = Backlog()
    try check(
      sectiond_bus_add_object(bus, &vtableSlot, &callbackSlot, path, interface, object),
      "sd_bus_add_object_vtable")
    // Queued: across a restart the name passes from the old process to this one as the old
    // one leaves, instead of being refused while it is still there.
    try check(
      sd_bus_request_name_async(
        bus, nil, name, UInt64(SD_BUS_NAME_QUEUE), nameThunk, Unmanaged.passUnretained(self).toOpaque()),
      "sd_bus_request_name_async", name)
    let context = Unmanaged.passUnretained(self).toOpaque()
    try check(sd_event_add_io(loop.event, &io, sd_bus_get_fd(bus), 0, ioThunk, context), "sd_event_add_io")
    try check(sd_event_source_set_prepare(io, prepareThunk), "sd_event_source_set_prepare")
    try check(
      sd_event_add_time(loop.event, &timer, CLOCK_MONOTONIC, 0, 0, timeThunk, context), "sd_event_add_time")
    _ = sd_event_source_set_enabled(timer, Int32(SD_EVENT_OFF))
  }

  private func disconnect() {
    io = io.flatMap { sd_event_source_disable_unref($0) }
    timer = timer.flatMap { sd_event_source_disable_unref($0) }
    vtableSlot = vtableSlot.flatMap { sd_bus_slot_unref($0) }
    callbackSlot = callbackSlot.flatMap { sd_bus_slot_unref($0) }
    bus = bus.flatMap { sd_bus_close_unref($0) }
  }

  private func scheduleRetry() {
    let delay = retryDelay
    retryDelay = min(retryDelay * 2, Bus.longestRetry)
    if let retry {
      retry.rearm(after: delay)
    } else {
      retry = try? loop.timer(after: delay) { [unowned self] in self.connect() }
    }
  }

  fileprivate func lost(_ reason: String) {
    handlers.log("lost the \(kind) bus (\(reason)); trying again every few seconds", true)
    failureLogged = true
    disconnect()
    scheduleRetry()
  }

  // MARK: Serving

  /// Takes up to `messagesPerTurn` messages; what is left stays for the next turn (the
  /// prepare step sees it and arms the timer at once). Stops reading calls while
  /// `writesBehindLimit` messages wait unwritten, and drops a connection the bus daemon has
  /// stopped reading (`stallTimeout`).
  fileprivate func process() {
    guard let bus else { return }
    let waiting = Backlog(of: bus, since: backlog.since)
    if !waiting.isEmpty, !waiting.isShorter(than: backlog), loop.now >= backlog.since + Bus.stallTimeout {
      lost(
        "it took nothing sectiond sent for \(Bus.stallTimeout / 1_000_000) s, \(waiting):"
          + " callers that do not read their answers fill its queues")
      return
    }
    let deadline = monotonicMicroseconds() + Bus.turnBudget
    for _ in 0..<Bus.messagesPerTurn {
      let result = sd_bus_process(bus, nil)
      if result < 0 {
        lost("\(Errno(-result))")
        return
      }
      if result == 0 || queuedWrites(bus) >= Bus.writesBehindLimit || monotonicMicroseconds() >= deadline {
        break
      }
    }
    if sd_bus_is_open(bus) <= 0 { lost("the bus closed the connection") }
  }

  /// Before the loop sleeps: what the bus waits for, and when its next deadline is. Past
  /// `writesBehindLimit`, only for the socket to take what waits: `sd_bus_process` then only
  /// writes (it reads a message only when it wrote none). While anything waits, the timer
  /// also wakes the loop when the wait would pass `stallTimeout`.
  fileprivate func prepare() {
    guard let bus else { return }
    var waiting = Backlog(of: bus, since: backlog.since)
    if backlog.isEmpty || waiting.isShorter(than: backlog) { waiting.since = loop.now }
    backlog = waiting
    let full = waiting.messages >= Bus.writesBehindLimit
    let events = sd_bus_get_events(bus)
    if events >= 0 { _ = sd_event_source_set_io_events(io, full ? EPOLLOUT.rawValue : UInt32(events)) }
    var until = UInt64.max
    if !full, sd_bus_get_timeout(bus, &until) < 0 { until = .max }
    if !waiting.isEmpty { until = min(until, waiting.since + Bus.stallTimeout) }
    if until != .max {
      _ = sd_event_source_set_time(timer, until)
      _ = sd_event_source_set_enabled(timer, Int32(SD_EVENT_ONESHOT))
    } else {
      _ = sd_event_source_set_enabled(timer, Int32(SD_EVENT_OFF))
    }
  }

  fileprivate func nameReply(_ reply: OpaquePointer?) {
    if let error = sd_bus_message_get_error(reply), let text = error.pointee.message {
      handlers.log("cannot own \(name) on the \(kind) bus: \(String(cString: text))", true)
      return
    }
    var result: UInt32 = 0
    if sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "u")), &result) > 0, result == 2 {
      handlers.log("\(name) is owned by another process; this one takes it when that one leaves", true)
    }
  }
}

/// What sectiond sent that the bus daemon has not read yet: messages in sd-bus's write
/// queue, and bytes in the socket's send buffer (a short message waits there, not in sd-bus).
private struct Backlog: CustomStringConvertible {
  var messages: UInt64 = 0
  var bytes: Int32 = 0
  /// When it last shrank, or began.
  var since: UInt64 = 0

  init() {}

  init(of bus: OpaquePointer, since: UInt64) {
    messages = queuedWrites(bus)
    if ioctl(sd_bus_get_fd(bus), UInt(TIOCOUTQ), &bytes) != 0 { bytes = 0 }
    self.since = since
  }

  var isEmpty: Bool { messages == 0 && bytes == 0 }

  func isShorter(than other: Backlog) -> Bool { messages < other.messages || bytes < other.bytes }

  var description: String { "\(messages) messages and \(bytes) bytes waiting" }
}

/// Messages sd-bus holds that the bus daemon has not taken yet.
private func queuedWrites(_ bus: OpaquePointer) -> UInt64 {
  var queued: UInt64 = 0
  return sd_bus_get_n_queued_write(bus, &queued) >= 0 ? queued : 0
}

/// A static string's bytes as the C string they are (a StaticString literal ends in a NUL).
private func cString(_ string: StaticString) -> UnsafePointer<CChar> {
  UnsafeRawPointer(string.utf8Start).assumingMemoryBound(to: CChar.self)
}

private func bus(_ userdata: UnsafeMutableRawPointer?) -> Bus {
  Unmanaged<Bus>.fromOpaque(userdata!).takeUnretainedValue()
}

private let ioThunk: sd_event_io_handler_t = { _, _, _, userdata in
  bus(userdata).process()
  return 0
}
private let timeThunk: sd_event_time_handler_t = { _, _, userdata in
  bus(userdata).process()
  return 0
}
private let prepareThunk: sd_event_handler_t = { _, userdata in
  bus(userdata).prepare()
  return 0
}
private let nameThunk: sd_bus_message_handler_t = { reply, userdata, _ in
  bus(userdata).nameReply(reply)
  return 0
}

/// A method call: answered by the handler, now or once its change is saved.
private let methodThunk:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?)
    -> Int32 = { message, context, _ in
      bus(context).handlers.method(BusCall(message!))
      return 1
    }
private let propertyThunk:
  @convention(c) (
    OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?
  )
    -> Int32 = { reply, property, context, _ in
      var writer = BusWriter(message: reply!)
      do {
        try bus(context).handlers.property(String(cString: property!), &writer)
        return 1
      } catch let error as PosixError {
        return -error.errno.rawValue
      } catch {
        return -EINVAL
      }
    }
private let interceptThunk:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32 = {
    message, context, _ in
    bus(context).handlers.intercept(BusCall(message!)) ? 1 : 0
  }
