import CSystemd
import Glibc
import Posix

/// Tells the service manager what the daemon is doing (sd_notify). Without NOTIFY_SOCKET
/// every call is a cheap no-op, so callers never need to ask whether systemd is there.
public enum Notifier {
  /// The daemon serves: every socket accepts and the state is loaded.
  public static func ready(status: String? = nil) {
    send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
  }

  /// A short human line for `systemctl status`.
  public static func status(_ text: String) {
    send(["STATUS=\(text)"])
  }

  /// Reloading the config; systemd 253+ matches this with the MONOTONIC_USEC timestamp.
  public static func reloading() {
    send(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds())"])
  }

  /// "Still alive", sent from the serving loop.
  static func watchdog() {
    send(["WATCHDOG=1"])
  }

  public static func stopping() {
    send(["STOPPING=1"])
  }

  /// Start-up failed: the reason for `systemctl status`, and the errno when there is one.
  public static func failed(_ reason: String, errno: Errno? = nil) {
    send(["STATUS=\(reason)"] + (errno.map { ["ERRNO=\($0.rawValue)"] } ?? []))
  }

  /// Whether a service manager listens: NOTIFY_SOCKET is set. Read once: the manager sets it
  /// at exec, and the status is sent after every save (a getenv was 800 instructions of a
  /// fleet host's 47,000 applying a TOGGLE).
  public static let isActive = ProcessInfo.environment("NOTIFY_SOCKET") != nil

  /// sd_notify is not variadic, so the message is formatted here; newlines separate assignments.
  private static func send(_ assignments: [String]) {
    guard isActive else { return }
    _ = sd_notify(0, assignments.joined(separator: "\n"))
  }
}
