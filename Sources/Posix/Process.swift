import CShim
import Glibc

/// Process-wide settings and facts.
public enum ProcessInfo {
  public static var userID: uid_t { getuid() }
  public static var processID: pid_t { getpid() }

  public static func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
  }

  /// Sets (or with nil, removes) a variable of this process's environment, which a program it
  /// execs inherits.
  public static func setEnvironment(_ name: String, _ value: String?) {
    if let value { setenv(name, value, 1) } else { unsetenv(name) }
  }

  /// The name of process `pid` as the kernel keeps it (`/proc/PID/comm`, at most 15 bytes);
  /// nil when it is gone or hidden (ProtectProc=invisible hides other users' processes).
  public static func name(of pid: Int32) -> String? {
    guard let bytes = try? FileSystem.readFile("/proc/\(pid)/comm", limit: 64) else { return nil }
    let name = bytes.last == 0x0A ? bytes.dropLast() : bytes[...]
    return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
  }

  /// The name of user `uid` (getpwuid_r); nil when it has none.
  public static func userName(of uid: uid_t) -> String? {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name
    else { return nil }
    return String(cString: name)
  }

  /// The uid of the user named `name` (getpwnam_r); nil when there is none.
  public static func userID(named name: String) -> uid_t? {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
    return entry.pw_uid
  }

  /// The gid of the group named `name` (getgrnam_r); nil when there is none. A group of many
  /// members needs a larger buffer: it grows, up to 1 MiB.
  public static func groupID(named name: String) -> gid_t? {
    var entry = group()
    var found: UnsafeMutablePointer<group>?
    var size = 4096
    while size <= 1 << 20 {
      var buffer = [CChar](repeating: 0, count: size)
      let result = getgrnam_r(name, &entry, &buffer, buffer.count, &found)
      if result == ERANGE {
        size *= 4
        continue
      }
      guard result == 0, found != nil else { return nil }
      return entry.gr_gid
    }
    return nil
  }

  /// `seconds` since the epoch in the local time zone (localtime_r): year, month (1-12), day,
  /// hour, minute, second.
  public static func localTime(_ seconds: Int) -> [Int] {
    var time = time_t(seconds)
    var parts = tm()
    localtime_r(&time, &parts)
    return [
      Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour),
      Int(parts.tm_min), Int(parts.tm_sec),
    ]
  }

  /// The path of this process's executable (`/proc/self/exe`, links resolved); nil when the
  /// kernel cannot say. A file replaced since the start (an upgrade) reads as its path still.
  public static func executablePath() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
  }

  /// Replaces this process's program with `path` (execv): the same process, its environment,
  /// and every descriptor not close-on-exec. `arguments` include argv[0]. Returns only on
  /// failure, with the error.
  public static func execute(_ path: String, arguments: [String]) -> PosixError {
    var argv = arguments.map { strdup($0) }
    argv.append(nil)
    defer { for pointer in argv { free(pointer) } }
    execv(path, argv)
    return PosixError("execve", path)
  }

  /// Makes the process not dumpable (`prctl(PR_SET_DUMPABLE, 0)`): no core file, and no other
  /// process of the same user may trace it or read its memory (/proc/PID/mem, environ), which
  /// holds a secret such as etcd's password.
  public static func forbidDumps() throws {
    _ = try retrying("prctl(PR_SET_DUMPABLE)") { cshim_set_dumpable(0) }
  }

  /// A broken connection must show up as EPIPE from write, never kill the process.
  public static func ignoreBrokenPipes() {
    signal(SIGPIPE, SIG_IGN)
  }

  /// Blocks `signals` for this thread, so that they queue for a signalfd instead of
  /// interrupting (sd-event on systemd 252 requires this before it takes a signal).
  public static func blockSignals(_ signals: [Int32]) throws {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    _ = try retrying("sigprocmask") { sigprocmask(SIG_BLOCK, &set, nil) }
  }

  /// Raises the soft limit on open files as far as the hard limit allows; returns the new soft limit.
  @discardableResult
  public static func raiseFileLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    let target = min(rlim_t(wanted), limit.rlim_max)
    if target > limit.rlim_cur {
      limit.rlim_cur = target
      if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 { return 0 }
    }
    return Int(limit.rlim_cur)
  }
}

/// CLOCK_MONOTONIC in microseconds, as systemd's MONOTONIC_USEC wants it.
public func monotonicMicroseconds() -> UInt64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
}

/// Milliseconds since the epoch, for the history's times.
public func wallClockMilliseconds() -> UInt64 {
  var now = timespec()
  clock_gettime(CLOCK_REALTIME, &now)
  return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
}

/// Seconds since the epoch, for naming files by when they were made.
public func wallClockSeconds() -> Int {
  Int(time(nil))
}
