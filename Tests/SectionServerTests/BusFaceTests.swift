import Glibc
import Posix
import Testing

@testable import SectionCore
@testable import SectionServer
@testable import ServerHarnessSupport
@testable import Systemd

/// The D-Bus face and the sockets as two fronts of one group commit, on a dbus-daemon of the
/// test's own (bench/dbus-private.conf.in) with a real caller (Python on Gio, as a desktop
/// program calls): the server runs in this process, driven a loop iteration at a time. One
/// test at a time: each points the process's session bus at its own.
@Suite(.serialized) struct BusFaceTests {
  /// The repository, for the bus's configuration.
  static let root = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")

  static var toolsPresent: Bool {
    access("/usr/bin/dbus-daemon", X_OK) == 0
      && system("/usr/bin/python3 -c 'import gi' >/dev/null 2>&1") == 0
  }

  /// A Toggle on the bus and a TOGGLE on a socket that arrive in one loop turn are saved
  /// once, together: one journal group holds both changes, and each
  /// answer (the bus's return, the socket's `OK`) names its own revision of that group. The
  /// caller's first call makes the daemon ask the bus who it is; the second, the one in the
  /// shared turn, is decided at once.
  @Test(
    .enabled(
      if: toolsPresent, "needs dbus-daemon and /usr/bin/python3 with python3-gi (scripts/deps.sh --test)"))
  func aBusCallAndASocketRequestInOneTurnShareOneSave() throws {
    let harness = try ServerHarness()
    try BusFaceTests.withCaller(of: harness) { caller in try sharedTurn(harness, caller) }
  }

  /// A bus call's change in a retried group: the call's request runs again on the newer state,
  /// and the caller's one return names that run's result.
  @Test(
    .enabled(
      if: BusFaceTests.toolsPresent,
      "needs dbus-daemon and /usr/bin/python3 with python3-gi (scripts/deps.sh --test)"))
  func aRetriedBusCallRunsAgainOnTheNewerState() throws {
    let harness = try ServerHarness()
    let backend = CommitBackendTests.AnsweredBackend()
    harness.server.backend = backend
    try BusFaceTests.withCaller(of: harness) { caller in
      // The caller's first call toggles c.
      #expect(try harness.run(until: { backend.committing == [1] }))
      try CommitBackendTests.retry(harness, backend, after: "OPEN c", reranTo: 2)
      backend.answer(.committed(revision: 2), to: harness.server)
      #expect(try harness.run(until: { try caller.answers().count == 1 }))
      #expect(try caller.answers() == ["False 2"])
      #expect(try harness.savedOpen().isEmpty)
    }
  }

  /// Serves `harness`'s server on a bus of its own, with a `Caller` on it, for `body`.
  static func withCaller(of harness: ServerHarness, _ body: (Caller) throws -> Void) throws {
    let bus = try PrivateBus(in: harness.directory)
    defer { bus.stop() }
    // sd-bus finds the session bus here; the process's own is back once the test is done.
    let sessionBus = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
    setenv("DBUS_SESSION_BUS_ADDRESS", bus.address, 1)
    defer {
      if let sessionBus {
        setenv("DBUS_SESSION_BUS_ADDRESS", sessionBus, 1)
      } else {
        unsetenv("DBUS_SESSION_BUS_ADDRESS")
      }
    }
    let name = "org.sectiond.Sectiond1.t\(getpid())"
    harness.server.bus = try BusFace(.session, name: name, server: harness.server)
    defer {
      harness.server.bus?.close()
      harness.server.bus = nil
    }
    let caller = try Caller(in: harness.directory, address: bus.address, name: name)
    defer { caller.stop() }
    try body(caller)
  }

  private func sharedTurn(_ harness: ServerHarness, _ caller: Caller) throws {
    // The first call: the caller's credentials are asked for and kept; its change is saved.
    #expect(try harness.run(until: { try caller.answers().count == 1 }))
    #expect(try caller.answers() == ["True 1"])
    #expect(try harness.journalCommits() == ["1"])
    // The loop idle, the caller's second call arrives while a socket client's request
    // waits: the next iteration finds both.
    try harness.run(until: { false }, timeout: 0.2)
    let client = try harness.connect()
    try caller.go()
    let busFD = try #require(harness.server.bus?.bus.descriptor)
    var ready = pollfd(fd: busFD, events: Int16(POLLIN), revents: 0)
    #expect(poll(&ready, 1, 20_000) == 1, "the caller's second call never reached the daemon")
    try client.send("TOGGLE a\n")
    #expect(try harness.run(until: { try caller.answers().count == 2 && client.hasReplies(1) }))

    // One save for both, whichever was handled first.
    #expect(try harness.journalCommits() == ["1", "3"])
    let socketRevision = client.statuses.first.flatMap { UInt64($0.split(separator: " ").last ?? "") }
    let answers = try caller.answers()
    let busRevision = answers.last.flatMap { UInt64($0.split(separator: " ").last ?? "") }
    #expect(Set([socketRevision, busRevision]) == [2, 3], "\(client.statuses) \(answers)")
    #expect(try harness.savedOpen() == ["a", "b", "c"])
  }
}

/// A dbus-daemon on a socket in `directory`, with a session bus's open policy.
final class PrivateBus {
  let address: String
  private let files: [String]
  private var pid: pid_t = 0

  init(in directory: String) throws {
    let socket = directory + "/bus"
    address = "unix:path=" + socket
    let template = String(
      decoding: try FileSystem.readFile(BusFaceTests.root + "/bench/dbus-private.conf.in"), as: UTF8.self)
    let config = directory + "/bus.conf"
    files = [socket, config]
    try writeFile(config, template.replacing("@SOCKET@", with: socket))
    pid = try spawn(["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile"])
    let deadline = monotonicMicroseconds() + 20_000_000
    while access(socket, F_OK) != 0 {
      guard monotonicMicroseconds() < deadline else { throw PosixError("dbus-daemon", socket) }
      usleep(10_000)
    }
  }

  /// Stops the bus and removes its files, so that the harness can remove its directory.
  func stop() {
    if pid > 0 {
      kill(pid, SIGKILL)
      waitpid(pid, nil, 0)
      pid = 0
    }
    for file in files { unlink(file) }
  }
}

/// One bus connection making two Toggle calls: of `c` at once (retried until the daemon owns
/// its name), then of `b` once told to go (`go()`). Each return is a line of its output.
final class Caller {
  private let output: String
  private let script: String
  private var pid: pid_t = 0
  private var input: Int32 = -1

  init(in directory: String, address: String, name: String) throws {
    output = directory + "/caller.out"
    script = directory + "/caller.py"
    try writeFile(
      script,
      """
      import sys, time
      from gi.repository import Gio, GLib
      address, name = sys.argv[1], sys.argv[2]
      flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
      bus = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
      def toggle(ref):
          args = GLib.Variant("(s)", (ref,))
          result = bus.call_sync(name, "/org/sectiond/Sectiond1", "org.sectiond.Sectiond1", "Toggle", args,
                                 None, 0, 20000, None).unpack()
          print(result[0], result[1], flush=True)
      for attempt in range(400):
          try:
              toggle("c")
              break
          except GLib.Error:
              time.sleep(0.05)
      sys.stdin.readline()
      toggle("b")
      """)
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw PosixError("pipe") }
    // Only the caller holds the reading end: it sees the end of input when the test stops.
    _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
    input = fds[1]
    defer { close(fds[0]) }
    pid = try spawn(["/usr/bin/python3", script, address, name], stdin: fds[0], stdout: output)
  }

  /// The returns so far, as `<open> <revision>`.
  func answers() throws -> [String] {
    guard access(output, F_OK) == 0 else { return [] }
    return String(decoding: try FileSystem.readFile(output), as: UTF8.self).split(separator: "\n").map(
      String.init)
  }

  /// Makes the second call.
  func go() throws {
    guard write(input, "go\n", 3) == 3 else { throw PosixError("write", "caller") }
  }

  /// Stops the caller and removes its files.
  func stop() {
    if input >= 0 { close(input) }
    input = -1
    if pid > 0 {
      kill(pid, SIGKILL)
      waitpid(pid, nil, 0)
      pid = 0
    }
    unlink(script)
    unlink(output)
  }
}

private func writeFile(_ path: String, _ text: String) throws {
  let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
  guard fd >= 0 else { throw PosixError("open", path) }
  defer { close(fd) }
  try FileDescriptor(rawValue: fd).writeAll(Array(text.utf8), subject: path)
}

/// Starts `arguments` (found on PATH), its standard input `stdin` (else /dev/null), its output
/// to the file `stdout` (else /dev/null), its errors to /dev/null.
private func spawn(_ arguments: [String], stdin: Int32? = nil, stdout: String? = nil) throws -> pid_t {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  if let stdin {
    posix_spawn_file_actions_adddup2(&actions, stdin, 0)
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  }
  posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
  let argv = arguments.map { strdup($0) } + [nil]
  defer { for argument in argv { free(argument) } }
  var pid: pid_t = 0
  let result = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
  guard result == 0 else { throw PosixError("posix_spawnp", arguments[0], errno: Errno(result)) }
  return pid
}
