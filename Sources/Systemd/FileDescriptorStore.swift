import CSystemd
import Glibc
import Posix

/// systemd's file descriptor store (FDSTORE=1): descriptors the service manager keeps for
/// the service and hands back to its next process, through `SocketActivation`, after a
/// restart or a crash. Needs FileDescriptorStoreMax= in the unit; without NOTIFY_SOCKET
/// nothing is stored.
public enum FileDescriptorStore {
  /// Hands `fds` to systemd under `name` (a name groups descriptors: removal is by name).
  /// Returns false when no service manager listens.
  @discardableResult
  public static func store(_ fds: [FileDescriptor], name: String) throws -> Bool {
    precondition(fds.count <= 253, "at most 253 descriptors per message (SCM_MAX_FD)")
    let raw = fds.map(\.rawValue)
    let sent = try check(
      sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=\(name)", raw, UInt32(raw.count)),
      "sd_pid_notify_with_fds", name)
    return sent > 0
  }

  /// Asks systemd to close and forget the descriptors stored under `name`.
  public static func remove(name: String) {
    _ = sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=\(name)")
  }
}
