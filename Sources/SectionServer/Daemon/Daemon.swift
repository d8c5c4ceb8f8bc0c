import Glibc
import Posix
import SectionCore
import Systemd

/// Start-up and shutdown of sectiond: everything `main` does, so `main` stays one line.
public enum Daemon {
  /// Runs the daemon with `arguments` (without the program name); returns the exit status.
  /// With --etcd it becomes sectiond-fleet (`FleetBinary`), which has the fleet.
  public static func main(_ arguments: [String]) -> Int32 { main(arguments, fleet: nil) }

  /// The daemon, with `fleet` making this host's part in a fleet when --etcd asks for one
  /// (sectiond-fleet's main gives it; sectiond's has none, and execs sectiond-fleet instead).
  package static func main(_ arguments: [String], fleet makeFleet: FleetFactory?) -> Int32 {
    let options: DaemonOptions
    do {
      switch try DaemonOptions.parse(arguments) {
      case .printAndExit(let text):
        print(text)
        return 0
      case .run(let parsed): options = parsed
      }
    } catch {
      Log.error("\(error)")
      return 2
    }
    Log.threshold = options.verbose ? .debug : .info
    do {
      if options.etcd != nil && makeFleet == nil {
        // First, before anything is opened, and before sd_listen_fds marks the inherited
        // sockets close-on-exec. A check finds the binary as a start would.
        if options.checkConfigOnly { _ = try FleetBinary.locate() } else { try FleetBinary.become() }
      }
      if options.checkConfigOnly { return try checkConfig(options) }
      return try run(options, makeFleet: makeFleet)
    } catch let failure as StartFailure {
      Log.error(failure.message)
      Notifier.failed(failure.message, errno: failure.errno)
      return 1
    } catch {
      Log.error("\(error)")
      Notifier.failed("\(error)", errno: (error as? PosixError)?.errno)
      return 1
    }
  }

  private static func checkConfig(_ options: DaemonOptions) throws -> Int32 {
    let config = try loadConfig(options)
    _ = try loadAccessRules(options)
    // The same refusal a start would give: OK must mean the daemon would start with it.
    try Security.checkFiles(options, statePath: nil)
    let source = options.configPath ?? "built-in demo config"
    print("\(source): OK: \(counted(config.sections.count, "section")), mode \(config.mode.rawValue)")
    return 0
  }

  private static func run(_ options: DaemonOptions, makeFleet: FleetFactory?) throws -> Int32 {
    ProcessInfo.ignoreBrokenPipes()
    ProcessInfo.raiseFileLimit(to: options.maxClients + 64)
    let config = try loadConfig(options)
    let store = options.statePath.map { StateStore(path: $0, policy: options.fsync) }
    defer { store?.close() }
    try Security.checkFiles(options, statePath: store?.path)
    let saved: SavedState?
    do {
      try store?.prepareDirectory(allowInsecure: options.allowInsecure)
      saved = try store?.load()
    } catch let failure as StartFailure {
      throw failure
    } catch {
      throw StartFailure(
        "cannot load the state file \(store!.path): \(error)", errno: (error as? PosixError)?.errno)
    }
    let model = SectionModel(config: config, saved: saved)
    let service = SectionService(
      model: model, limits: options.editLimits,
      history: History(
        capacity: options.history, lines: saved?.history ?? [], revision: saved?.revision ?? model.revision))
    service.clock = wallClockMilliseconds
    service.processName = ProcessInfo.name(of:)
    // The daemon's own changes at start are a reload by sectiond itself.
    let daemon = Author(
      via: .reload, uid: UInt32(ProcessInfo.userID), pid: Int32(ProcessInfo.processID), name: "sectiond")
    service.recordStart(after: saved?.revision ?? model.revision, by: daemon)
    // Sections that came or went with the config since the last run are a reload, with a
    // revision of its own (unless opening one took it, which the history has as a reload): a
    // client that catches up (SUBSCRIBE FROM) must hear `!reload`, not "nothing changed".
    if let saved, let list = saved.list, model.revision == saved.revision,
      SavedState(service.model).list != list,
      service.announceReload(by: daemon) == .changed
    {
      if store == nil { service.commit() }
    }
    var unchanged = SavedState(service.model)
    unchanged.history = saved?.history ?? []
    if let store, saved != unchanged || store.durableSaveNeeded {
      // What this start decided (the config's sections, those it opened) is saved before anyone
      // sees it, so that the next start knows it as a reload would, whatever the config says then.
      do {
        try store.saveAtStart(service.unsavedGroup, encodeState: service.encodeState(into:))
        if service.hasUnsavedChanges { service.commit() }
      } catch {
        Log.warning(
          "cannot save the state file \(store.path) at start-up (\(error)); changes are refused until it can be written"
        )
      }
    }

    let loop = try EventLoop()
    let limits = ClientLimits(total: options.maxClients, readOnly: options.maxReadOnlyClients)
    // One descriptor of the store is for the handover record; none without a service manager.
    let connectionStore =
      options.fdStore > 1 && Notifier.isActive ? ConnectionStore(capacity: options.fdStore - 1) : nil
    let server = try Server(
      loop: loop, service: service, store: store, limits: limits, connectionStore: connectionStore,
      loadConfig: { try loadConfig(options) }, daemon: daemon)
    server.list = options.list
    server.accessRules = try loadAccessRules(options)
    server.loadAccessRules = { try loadAccessRules(options) }
    if let fleet = options.etcd, let makeFleet {
      service.host = Array(fleet.host.utf8)
      server.backend = try makeFleet(fleet, server)
    }
    service.statusFields = statusFields(options, store: store, server: server)
    if options.logChanges {
      server.changeLog = ChangeLog()
      if !StructuredLog.isAvailable {
        Log.warning(
          "--log-changes: no journal here (\(StructuredLog.socketPath) is missing: journald is not running), so the changes are logged nowhere; HISTORY and sectionctl log still show them"
        )
      }
    }
    let inherited = try SocketActivation.inherited()
    let sockets = try Sockets.open(options, inherited: inherited)
    for socket in sockets { try server.serve(socket.fd, access: socket.access, file: socket.file) }
    server.restore(inherited.filter { $0.kind != .listeningSocket })
    if let kind = options.bus { server.bus = try BusFace(kind, name: options.busName, server: server) }

    let signals = try [SIGTERM, SIGINT].map { try loop.onSignal($0) { server.shutdown() } }
    let hangUp = try loop.onSignal(SIGHUP) { server.reloadFromSignal() }
    let watchdog = try loop.enableWatchdog()
    let names = sockets.map {
      $0.file?.path ?? "inherited \($0.access.readOnlySocket ? "readonly" : "control") socket"
    }
    Log.notice(
      "serving \(counted(service.model.sections.count, "section")) on \(names.joined(separator: " and "))"
        + (store.map { ", state in \($0.path)" } ?? ", state in memory only")
        + (watchdog ? ", watchdog on" : ""))
    // A fleet serves reads from the local state meanwhile; changes wait until it is joined,
    // and it sends READY=1 itself.
    if try server.backend.start() { Notifier.ready(status: server.statusLine) }
    let code = try loop.run()
    withExtendedLifetime((signals, hangUp, server)) {}
    return code
  }

  /// STATUS's facts: who runs the daemon and how, which files it uses (`-`: none), for how
  /// long, and for how many clients. Paths are printed with control characters as `?`, so that
  /// each stays one line. The read-only socket is open to every local user, who must not learn
  /// who else is connected or when (the counts include the control socket's clients), nor the
  /// process and paths that the unit hides (`ProtectProc=invisible`): it is told only whether
  /// systemd runs the daemon and for how long it has run, which SUBSCRIBE's revisions show anyway.
  private static func statusFields(
    _ options: DaemonOptions, store: StateStore?, server: Server
  ) -> (SectionService.Access) -> [(String, String)] {
    let started = monotonicMicroseconds()
    let pid = String(ProcessInfo.processID)
    let uid = String(ProcessInfo.userID)
    let systemd = Notifier.isActive ? "yes" : "no"
    func line(_ path: String?) -> String { VisibleName.of(path ?? "-", limit: .max) }
    let config = line(options.configPath)
    let state = line(store?.path)
    // Which list this is, on both sockets: the name is in every socket's path anyway.
    let list = options.list?.rawValue ?? "-"
    return { [unowned server] access in
      let uptime = String((monotonicMicroseconds() - started) / 1_000_000)
      guard access.seesWho else { return [("list", list), ("systemd", systemd), ("uptime", uptime)] }
      return [
        ("list", list), ("pid", pid), ("uid", uid), ("systemd", systemd), ("uptime", uptime),
        ("config", config), ("state", state),
        ("clients", String(server.connections.count)), ("subscribers", String(server.subscribers.count)),
      ] + server.backend.statusFields
    }
  }

  /// The config named by the options, or the demo set when there is none.
  static func loadConfig(_ options: DaemonOptions) throws -> Config {
    guard let path = options.configPath else { return .demo }
    let bytes = try read(path, what: "config file", limit: Config.readLimit)
    let config = try Config.parse(bytes, source: path)
    try config.check(options.editLimits, source: path)
    return config
  }
}

extension Daemon {
  /// The access rules named by the options; none when there are no rules.
  static func loadAccessRules(_ options: DaemonOptions) throws -> AccessRules {
    guard let path = options.accessPath, options.accessRequired || FileSystem.exists(path) else {
      return .none
    }
    return try AccessRules.parse(
      read(path, what: "access rules", limit: AccessRules.maximumBytes), file: path)
  }

  /// The bytes of the file at `path`, `what` it is for the message when it cannot be read.
  private static func read(_ path: String, what: String, limit: Int) throws -> [UInt8] {
    do {
      return try FileSystem.readFile(path, limit: limit)
    } catch let error as PosixError {
      throw StartFailure("cannot read the \(what) \(path): \(error.errno)", errno: error.errno)
    } catch {
      throw StartFailure("cannot read the \(what) \(path): \(error)")
    }
  }
}

/// A start-up failure with the message an administrator needs.
package struct StartFailure: Error, CustomStringConvertible {
  let message: String
  let errno: Errno?
  package init(_ message: String, errno: Errno? = nil) {
    self.message = message
    self.errno = errno
  }
  package var description: String { message }
}

/// Makes the fleet's commit backend for a server: what sectiond-fleet's main gives `Daemon.main`.
package typealias FleetFactory = (EtcdOptions, Server) throws -> any CommitBackend
