import CShim
import Glibc

/// The signals a full-screen client reacts to instead of dying: each must restore the terminal first.
/// The raw values are Linux's numbers, the same on x86-64 and arm64 (an enum needs literals,
/// not Glibc's SIGHUP...).
public enum Signal: Int32, Sendable {
  case hangUp = 1  // SIGHUP
  case interrupt = 2  // SIGINT
  case terminate = 15  // SIGTERM
  case windowChange = 28  // SIGWINCH
}

/// Signals delivered as readable data on a descriptor (signalfd), so a poll loop handles them
/// between other work, where anything may safely be done, instead of in a signal handler.
public final class SignalDescriptor {
  public let fd: FileDescriptor

  /// Blocks `signals` for the process (they then wait for this descriptor) and opens the descriptor.
  public init(_ signals: [Signal]) throws {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal.rawValue) }
    _ = try retrying("sigprocmask") { sigprocmask(SIG_BLOCK, &set, nil) }
    fd = FileDescriptor(rawValue: try retrying("signalfd") { cshim_signalfd(&set) })
  }

  deinit { fd.close() }

  /// The signals that arrived since the last call, oldest first; numbers this type does not name are skipped.
  public func pending() throws -> [Signal] {
    var signals: [Signal] = []
    while true {
      let number = try retrying("read", "signalfd") { cshim_read_signal(fd.rawValue) }
      if number == 0 { return signals }
      if let signal = Signal(rawValue: number) { signals.append(signal) }
    }
  }
}
