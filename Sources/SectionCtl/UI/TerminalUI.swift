import Posix
import SectionClient

/// `sectionctl ui`: the accordion, live and shared, in a terminal. One poll loop over the
/// terminal, the daemon's socket and a signalfd: keys are handled as they come, events are
/// applied as they come, and the screen is redrawn from the result at most 60 times a second,
/// only the rows that changed. The daemon is the library's `Follower`: it keeps the state
/// on a thread of its own and answers through a descriptor this loop polls, so no key waits
/// for the daemon. When the daemon goes away the screen stays and the follower reconnects by
/// itself, as `watch` does.
final class TerminalUI {
  /// The shortest time between two frames: redraws are coalesced to at most 60 a second.
  static let frameMicroseconds: UInt64 = 16_667

  let path: String
  /// What the daemon's history calls the connection: `sectionctl-ui`, or `--name`.
  let name: String
  let style: Style
  var status: StatusBar
  /// What the daemon last said, nil until it has: the status line shows no mode then.
  var state: SectionState?
  var screen: ScreenModel
  var renderer: ScreenRenderer
  var showsHelp = false
  /// The question or text field at the bottom, while one is open (a, i, e, d).
  var prompt: Prompt?
  let daemon: Follower
  /// The changes sent and not yet answered, by ticket: what to say when the answer comes.
  var sent: [Int: Sent] = [:]
  var running = true
  let terminal: TerminalSession
  private let signals: SignalDescriptor
  private var decoder = InputDecoder()
  private var escapeDeadline: UInt64 = 0
  /// Something changed since the last frame.
  private var dirty = true
  private var lastFrame: UInt64 = 0
  private var cachedLayout: ScreenModel.Layout?

  /// Checks for a terminal, connects (failing with "cannot connect" as other commands do), then takes the terminal over.
  init(
    path: String, name: String, readonly: Bool, level: AccessLevel? = nil, style: Style,
    environment: Environment
  ) throws(CommandLineError) {
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
    status = StatusBar(socket: path, readonly: readonly, level: level)
    do {
      daemon = try Follower(path: path, name: name)
    } catch {
      throw .client(error)
    }
    do {
      signals = try SignalDescriptor([.interrupt, .terminate, .hangUp, .windowChange])
    } catch {
      throw .terminal("cannot watch for signals (\(error)); use 'sectionctl view' or 'sectionctl watch'")
    }
    terminal = try TerminalSession()
    let size = terminal.size
    screen = ScreenModel(rows: size.rows, columns: size.columns)
    renderer = ScreenRenderer(color: style.color)
  }

  /// Runs until a quit key, a signal or the terminal going away; the terminal is given back on every way out.
  func run() throws(CommandLineError) -> ExitStatus {
    defer { terminal.end() }
    while running {
      let now = monotonicMicroseconds()
      if dirty && now >= lastFrame + TerminalUI.frameMicroseconds { draw(now) }
      let watched: [(FileDescriptor, IOEvents)] = [
        (terminal.input, .readable), (signals.fd, .readable),
        (FileDescriptor(rawValue: daemon.descriptor), .readable),
      ]
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
      if !ready[2].isEmpty {
        for update in daemon.take() { handle(update) }
      }
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
    let layout = screen.layout(shown)
    cachedLayout = layout
    return layout
  }

  /// The state to lay out: none yet is an empty list.
  var shown: SectionState { state ?? TerminalUI.nothingYet }

  private static let nothingYet = SectionState(
    snapshot: StateSnapshot(revision: 0, mode: .multi, openIDs: []),
    view: Listing(sections: [], items: [], revision: 0))

  /// How long poll may sleep: until the next frame is due when one is wanted, or the end of
  /// the wait for the rest of an escape sequence.
  private func timeout(_ now: UInt64) -> Int {
    var deadlines: [UInt64] = []
    if dirty { deadlines.append(lastFrame + TerminalUI.frameMicroseconds) }
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
}
