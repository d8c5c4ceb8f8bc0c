import Glibc

/// Ending the process and pausing it, for command-line clients.
extension ProcessInfo {
  /// Ends the process with `status`. Output written through `FileDescriptor` is unbuffered, so nothing is lost.
  public static func exit(_ status: Int32) -> Never {
    Glibc.exit(status)
  }

  /// Makes SIGINT and SIGTERM end the process at once with status 0.
  ///
  /// For a client that only waits and prints (`sectionctl watch`), being interrupted is how it is
  /// meant to stop, not a failure; `_exit` is async-signal-safe, and its output is already written.
  /// The signals are unblocked too: a parent that blocked them (a thread pool, a supervisor) would
  /// otherwise leave them pending forever and the client unstoppable.
  public static func exitSuccessfullyOnInterrupt() {
    signal(SIGINT) { _ in _exit(0) }
    signal(SIGTERM) { _ in _exit(0) }
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    sigprocmask(SIG_UNBLOCK, &set, nil)
  }

  /// Sleeps for `milliseconds`, resuming after signals that do not end the process.
  public static func sleep(milliseconds: Int) {
    var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && Errno.current == .interrupted { request = remaining }
  }
}
