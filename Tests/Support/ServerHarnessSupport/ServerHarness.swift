// The server's internals: only a build for testing (debug, the one `swift test` makes) can
// reach them, so a release build compiles this module empty.
#if DEBUG
  import CSystemd
  import Glibc
  import Posix
  import Testing

  @testable import SectionCore
  @testable import SectionServer
  @testable import Systemd

  /// A `Server` in this process, on a state file of its own in a fresh directory under /tmp,
  /// with clients on socketpairs: no binary, no listening socket. Its sd-event loop runs on the
  /// test's thread (sd-event is confined to one thread), one iteration at a time, so a test can
  /// look at the sockets and the state file between iterations.
  final class ServerHarness {
    let directory: String
    var statePath: String { directory + "/state.json" }
    let loop: EventLoop
    let service: SectionService
    let store: StateStore
    let server: Server

    /// Sections a, b and c, all closed, multi mode.
    static let abc = Config(
      mode: .multi,
      sections: ["a", "b", "c"].map {
        Section(id: $0, title: $0.uppercased(), items: [], initiallyOpen: false)
      }
    )

    init(_ config: Config = ServerHarness.abc) throws {
      var template = Array("/tmp/sst-XXXXXX".utf8CString)
      guard let made = mkdtemp(&template) else { throw PosixError("mkdtemp", "/tmp/sst-XXXXXX") }
      directory = String(cString: made)
      store = StateStore(path: directory + "/state.json", policy: .never)
      service = SectionService(
        model: SectionModel(config: config, saved: nil), history: History(capacity: 100))
      service.clock = wallClockMilliseconds
      // As the daemon starts: the whole state first, so that each group commit appends to the journal.
      try store.saveAtStart(service.unsavedGroup, encodeState: service.encodeState(into:))
      if service.hasUnsavedChanges { service.commit() }
      loop = try EventLoop()
      server = try Server(
        loop: loop, service: service, store: store, limits: ClientLimits(total: 64, readOnly: 64),
        connectionStore: nil, loadConfig: { config })
    }

    deinit {
      for client in clients { client.fd.close() }
      for connection in server.connections.values { server.close(connection) }
      store.close()
      removeTree(directory)
    }

    private var clients: [TestClient] = []

    /// A client on a socketpair whose other end the server serves as if it had accepted it.
    func connect(_ access: SectionService.Access = .control) throws -> TestClient {
      var fds: [Int32] = [0, 0]
      guard
        socketpair(
          AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0
      else { throw PosixError("socketpair") }
      let connection = Connection(fd: FileDescriptor(rawValue: fds[0]), access: access)
      #expect(server.register(connection))
      let client = TestClient(fd: FileDescriptor(rawValue: fds[1]))
      clients.append(client)
      return client
    }

    /// A client on the read-only side that has subscribed, its `OK` received.
    func subscriber() throws -> TestClient {
      let subscriber = try connect(.readOnly)
      try subscriber.send("SUBSCRIBE\n")
      #expect(try run(until: { subscriber.hasReplies(1) }))
      return subscriber
    }

    /// Runs loop iterations until `condition` holds, calling `between` after each: false when
    /// `timeout` seconds passed first (generous: a loaded machine may stall the test for a while,
    /// and a condition that holds ends the wait at once).
    @discardableResult
    func run(
      until condition: () throws -> Bool, timeout: Double = 20, between: () throws -> Void = {}
    ) throws -> Bool {
      let deadline = monotonicMicroseconds() + UInt64(timeout * 1_000_000)
      while try !condition() {
        guard monotonicMicroseconds() < deadline else { return false }
        try iterate()
        try between()
      }
      return true
    }

    /// One iteration of the loop: sd-event dispatches one source (the clients' epoll set, or the
    /// post source that ends a turn: `Server.finishIteration`), waiting up to 10 ms for one.
    func iterate() throws {
      try check(sd_event_run(loop.event, 10_000), "sd_event_run")
    }

    /// What the state file and its journal hold now, as a restart would read them.
    func saved() throws -> SavedState? {
      try StateStore(path: statePath, policy: .never).load()
    }

    /// The ids of the open sections in the saved state (none when there is no state).
    func savedOpen() throws -> Set<String> {
      Set((try saved()?.sections ?? [:]).compactMap { id, opened in opened == nil ? nil : id })
    }

    /// The revisions of the groups in the journal, one per save since the whole state was
    /// written (`commit <rev> <checksum>` ends each).
    func journalCommits() throws -> [String] {
      let journal = String(decoding: try FileSystem.readFile(statePath + ".journal"), as: UTF8.self)
      return journal.split(separator: "\n").compactMap { line in
        line.hasPrefix("commit ") ? String(line.split(separator: " ")[1]) : nil
      }
    }

    /// Makes every save fail as a full or vanished disk would, for root too (a directory made
    /// read-only does not stop root): the state's directory goes, so the journal held open is
    /// found unlinked and the whole state cannot be written where it was.
    func breakSaves() {
      removeTree(directory)
    }

    /// The directory is back: the next save writes the whole state there.
    func mendSaves() {
      #expect(mkdir(directory, 0o700) == 0)
    }

    private func removeTree(_ path: String) {
      for name in ["state.json", "state.json.journal", "state.json.journal.next", "state.json.tmp"] {
        unlink(path + "/" + name)
      }
      rmdir(path)
    }
  }

  /// The client end of a socketpair: writes requests, and keeps what the server sent.
  final class TestClient {
    let fd: FileDescriptor
    /// Everything received so far.
    private(set) var received = ""

    init(fd: FileDescriptor) { self.fd = fd }

    func send(_ text: String) throws {
      try fd.writeAll(Array(text.utf8), subject: "test client")
    }

    /// Takes what the socket holds now, without waiting.
    func receive() {
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = buffer.withUnsafeMutableBytes {
          recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        guard count > 0 else { return }
        received += String(decoding: buffer[..<count], as: UTF8.self)
      }
    }

    /// The lines received so far.
    var lines: [Substring] { received.split(separator: "\n") }

    /// The status lines (`OK`, `ERR`) received so far: one per request answered.
    var statuses: [Substring] { lines.filter { $0.hasPrefix("OK") || $0.hasPrefix("ERR") } }

    /// The events (`!`) received so far.
    var events: [Substring] { lines.filter { $0.hasPrefix("!") } }

    /// Whether `count` replies have come, taking what the socket holds first.
    func hasReplies(_ count: Int) -> Bool {
      receive()
      return statuses.count >= count
    }

    /// Whether `count` events have come, taking what the socket holds first.
    func hasEvents(_ count: Int) -> Bool {
      receive()
      return events.count >= count
    }
  }
#endif
