// The server's internals: only a build for testing (debug, the one `swift test` makes) can
// reach them, so a release build compiles this module empty.
#if DEBUG
  import Glibc
  import Posix

  @testable import SectionServer

  /// The server's D-Bus face on a dbus-daemon of the test's own (bench/dbus-private.conf.in),
  /// with a real caller (Python on Gio, as a desktop program calls).
  extension ServerHarness {
    /// The repository, for the bus's configuration.
    static let root = "/" + #filePath.split(separator: "/").dropLast(4).joined(separator: "/")

    /// Whether dbus-daemon and Debian's python3 with python3-gi are here: a test on the bus is
    /// enabled only then (scripts/deps.sh --test installs them).
    static var busToolsPresent: Bool {
      access("/usr/bin/dbus-daemon", X_OK) == 0
        && system("/usr/bin/python3 -c 'import gi' >/dev/null 2>&1") == 0
    }

    /// Serves this harness's server on a bus of its own, with a `Caller` on it, for `body`.
    func withCaller(_ body: (Caller) throws -> Void) throws {
      let bus = try PrivateBus(in: directory)
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
      server.bus = try BusFace(.session, name: name, server: server)
      defer {
        server.bus?.close()
        server.bus = nil
      }
      let caller = try Caller(in: directory, address: bus.address, name: name)
      defer { caller.stop() }
      try body(caller)
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
        decoding: try FileSystem.readFile(ServerHarness.root + "/bench/dbus-private.conf.in"), as: UTF8.self)
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

  /// One bus connection making two Toggle calls: of `c` at once (called again until the daemon
  /// owns its name), then of `b` once told to go (`go()`). Each answer is a line of its output.
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
        # Called again only while the daemon does not own its name yet: any other error is
        # an answer, printed as one.
        for attempt in range(400):
            try:
                toggle("c")
                break
            except GLib.Error as error:
                if "ServiceUnknown" not in error.message and "NameHasNoOwner" not in error.message:
                    print("error", error.message, flush=True)
                    break
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

    /// The answers so far: a return as `<open> <revision>`, an error of the first call as
    /// `error <message>`.
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
#endif
