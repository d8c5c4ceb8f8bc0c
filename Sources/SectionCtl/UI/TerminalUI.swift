import Posix
import SectionClient

/// `sectionctl ui`: the accordion, live and shared, in a terminal. One poll loop over the
/// terminal, the daemon's socket and a signalfd: keys are handled as they come, events are
/// applied as they come, and the screen is redrawn from the result at most 60 times a second,
/// only the rows that changed. When the daemon goes away the screen stays and the ui
/// reconnects by itself, as `watch` does.
final class TerminalUI {
  /// The shortest time between two frames: redraws are coalesced to at most 60 a second.
  static let frameMicroseconds: UInt64 = 16_667

  let path: String
  /// What the daemon's history calls the connection: `sectionctl-ui`, or `--name`.
  let name: String
  let style: Style
  var status: StatusBar
  var state = LiveState()
  var screen: ScreenModel
  var renderer: ScreenRenderer
  var showsHelp = false
  /// The question or text field at the bottom, while one is open (a, i, e, d).
  var prompt: Prompt?
  var connection: LiveConnection?
  var running = true
  let terminal: TerminalSession
  private let signals: SignalDescriptor
  private var decoder = InputDecoder()
  private var escapeDeadline: UInt64 = 0
  /// Something changed since the last frame.
  private var dirty = true
  private var lastFrame: UInt64 = 0
  private var cachedLayout: ScreenModel.Layout?
  private var reconnectAt: UInt64?
  private var attempts = 0

  /// Checks for a terminal, connects (failing with "cannot connect" as other commands do), then takes the terminal over.
  init(path: String, name: String, readonly: Bool, style: Style, environment: Environment) throws(ClientError)
  {
    let term = environment.nonEmpty("TERM")
    guard FileDescriptor.standardInput.isTerminal, FileDescriptor.standardOutput.isTerminal, term != nil,
      term != "dumb"
    else {
      throw .terminal(
        "ui needs a terminal: standard input and output must be one, and TERM set and not 'dumb'; "
          + "use 'sectionctl view' to print the sections or 'sectionctl watch' to follow changes")
    }
    self.path = path
    self.name = name
    self.style = style
    status = StatusBar(socket: path, readonly: readonly)
    let connection = try LiveConnection(path: path, name: name)
    do {
      signals = try SignalDescriptor([.interrupt, .terminate, .hangUp, .windowChange])
    } catch {
      throw .terminal("cannot watch for signals (\(error)); use 'sectionctl view' or 'sectionctl watch'")
    }
    terminal = try TerminalSession()
    let size = terminal.size
    screen = ScreenModel(rows: size.rows, columns: size.columns)
    renderer = ScreenRenderer(color: style.color)
    start(connection)
  }

  /// Runs until a quit key, a signal or the terminal going away; the terminal is given back on every way out.
  func run() throws(ClientError) -> ExitStatus {
    defer { terminal.end() }
    while running {
      let now = monotonicMicroseconds()
      if dirty && now >= lastFrame + TerminalUI.frameMicroseconds { draw(now) }
      var watched: [(FileDescriptor, IOEvents)] = [(terminal.input, .readable), (signals.fd, .readable)]
      if let connection {
        watched.append((connection.fd, connection.wantsToWrite ? [.readable, .writable] : .readable))
      }
      let ready: [IOEvents]
      do {
        ready = try Poll.wait(watched, milliseconds: timeout(now))
      } catch {
        throw .terminal("poll failed: \(error)")
      }
      if !ready[1].isEmpty { handleSignals() }
      if !ready[0].isEmpty {
        readKeys()
      } else if decoder.isWaiting && monotonicMicroseconds() >= escapeDeadline {
        for key in decoder.flush() { handle(key) }
      }
      if ready.count > 2, !ready[2].isEmpty { serviceConnection(ready[2]) }
      if let reconnectAt, monotonicMicroseconds() >= reconnectAt { reconnect() }
    }
    return .success
  }

  /// Marks the screen for redrawing at the next frame; the layout is worked out again then.
  func changed() {
    dirty = true
    cachedLayout = nil
  }

  /// The rows and cursor for the current state, worked out at most once per change.
  func layout() -> ScreenModel.Layout {
    if let cachedLayout { return cachedLayout }
    let layout = screen.layout(state)
    cachedLayout = layout
    return layout
  }

  /// How long poll may sleep: until the next frame is due when one is wanted, the next
  /// reconnection attempt, or the end of the wait for the rest of an escape sequence.
  private func timeout(_ now: UInt64) -> Int {
    var deadlines: [UInt64] = []
    if dirty { deadlines.append(lastFrame + TerminalUI.frameMicroseconds) }
    if let reconnectAt { deadlines.append(reconnectAt) }
    if decoder.isWaiting { deadlines.append(escapeDeadline) }
    guard let next = deadlines.min() else { return -1 }
    return next <= now ? 0 : Int((next - now + 999) / 1000)
  }

  private func draw(_ now: UInt64) {
    // Laid out first: layout() moves the scroll, and `screen.lines(..., layout: layout())`
    // would read `screen` before the argument changed it.
    let layout = layout()
    status.prompt = prompt.map { $0.line(columns: screen.size.columns, unicode: style.unicode) }
    let lines = screen.lines(state, layout: layout, status: status, style: style, showsHelp: showsHelp)
    if !terminal.write(renderer.frame(lines, columns: screen.size.columns)) { running = false }
    lastFrame = now
    dirty = false
  }

  private func handleSignals() {
    for signal in (try? signals.pending()) ?? [] {
      switch signal {
      case .windowChange:
        let size = terminal.size
        screen.size = (size.rows, size.columns)
        renderer.invalidate()
        changed()
      case .interrupt, .terminate, .hangUp:
        running = false
      }
    }
  }

  private func readKeys() {
    var bytes = [UInt8](repeating: 0, count: 4096)
    let result = try? bytes.withUnsafeMutableBytes { try terminal.input.read(into: $0) }
    guard case .done(let count) = result, count > 0 else {
      // End of input or a hung-up terminal: no one is left to see the screen.
      if case .wouldBlock = result { return }
      running = false
      return
    }
    for key in decoder.feed(bytes[..<count]) { handle(key) }
    if decoder.isWaiting {
      escapeDeadline = monotonicMicroseconds() + UInt64(InputDecoder.escapeWaitMilliseconds) * 1000
    }
  }

  private func serviceConnection(_ events: IOEvents) {
    guard let connection else { return }
    do {
      if events.contains(.writable) { try connection.flush() }
      guard !events.isDisjoint(with: [.readable, .hangUp]) else { return }
      guard let incoming = try connection.receive() else { return disconnected() }
      for item in incoming { handle(item) }
      try connection.flush()
    } catch {
      status.message = error.diagnostic
      disconnected()
    }
  }

  /// A new connection: a reconnection resumes after the revision on screen (`SUBSCRIBE
  /// FROM`); a first one, or one that cannot resume, subscribes and asks for the whole view.
  private func start(_ connection: LiveConnection) {
    self.connection = connection
    status.link = .syncing
    if let resumption = state.resumption {
      connection.send(resumption, as: .resume)
    } else {
      state.awaitView(afresh: true)
      connection.send(Subscribing.request(after: nil), as: .subscribe)
      connection.send("VIEW", as: .view)
    }
    try? connection.flush()
    changed()
  }

  /// The daemon went away: the screen stays as it was, and reconnection attempts begin.
  private func disconnected() {
    connection = nil
    status.link = .disconnected
    attempts = 0
    scheduleReconnect()
    changed()
  }

  private func scheduleReconnect() {
    let delays = Subscriber.backOffMilliseconds
    reconnectAt = monotonicMicroseconds() + UInt64(delays[min(attempts, delays.count - 1)]) * 1000
    attempts += 1
  }

  private func reconnect() {
    reconnectAt = nil
    guard let connection = try? LiveConnection(path: path, name: name) else {
      return scheduleReconnect()
    }
    // What was said about the old connection (`!bye shutdown`) no longer holds.
    status.message = nil
    start(connection)
  }
}
