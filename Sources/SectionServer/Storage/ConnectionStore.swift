import Posix
import SectionCore
import Systemd

/// Keeps every connection in systemd's file descriptor store while it is open, so that a
/// restart or a crash of the daemon does not cut its clients off.
///
/// Each socket is stored under a name of its own that also says what a process starting
/// after a crash needs to know of it: `c-` or `s-` (subscriber), `rw-` or `ro-` (control or
/// read-only socket: a read-only client never gains control access by a restart), and the
/// socket's inode, which tells connections apart and matches them with a planned handover's
/// records. A subscription changes the name (FDSTOREREMOVE, then FDSTORE again).
final class ConnectionStore {
  /// How many connections may be stored: FileDescriptorStoreMax= less the handover memfd.
  let capacity: Int
  private(set) var count = 0

  static let handoverName = "handover"

  init(capacity: Int) {
    self.capacity = capacity
  }

  /// Stores a new connection, if there is room; one that does not fit is not kept across a
  /// restart (it is told `!bye restart` at the handover).
  func keep(_ connection: Connection) {
    guard count < capacity, let inode = connection.fd.identity()?.inode else { return }
    let name = ConnectionStore.name(
      inode: inode, access: connection.access, subscribed: connection.isSubscribed)
    do {
      guard try FileDescriptorStore.store([connection.fd], name: name) else { return }
    } catch {
      Log.warning("\(error)")
      return
    }
    connection.stored = (inode, name)
    count += 1
  }

  /// A connection handed over by the previous process, already in the store under `name`.
  func adopt(_ connection: Connection, inode: UInt64, name: String) {
    connection.stored = (inode, name)
    count += 1
  }

  /// Its subscription changed: store it under the name that says so.
  func update(_ connection: Connection) {
    guard let stored = connection.stored else { return }
    let name = ConnectionStore.name(
      inode: stored.inode, access: connection.access, subscribed: connection.isSubscribed)
    guard name != stored.name else { return }
    FileDescriptorStore.remove(name: stored.name)
    connection.stored = nil
    count -= 1
    keep(connection)
  }

  /// The connection is closing: systemd must not hand it to the next process.
  func forget(_ connection: Connection) {
    guard let stored = connection.stored else { return }
    FileDescriptorStore.remove(name: stored.name)
    connection.stored = nil
    count -= 1
  }

  /// The access part of a stored connection's name: `ro` the read-only socket, and on the
  /// control socket `rw` edit (as before levels), `op` operate, `rd` read. A daemon that knows
  /// no levels takes `op` and `rd` for `ro`: less, never more.
  private static let accessNames: [(String, SectionService.Access)] = [
    ("rw", .control), ("op", .init(level: .operate)), ("rd", .init(level: .read)), ("ro", .readOnly),
  ]

  static func name(inode: UInt64, access: SectionService.Access, subscribed: Bool) -> String {
    let part = accessNames.first { $0.1 == access }!.0
    return "\(subscribed ? "s" : "c")-\(part)-\(inode)"
  }

  /// What a stored connection's name says, or nil for a name this daemon does not give.
  static func parse(_ name: String) -> (access: SectionService.Access, subscribed: Bool)? {
    let parts = name.split(separator: "-")
    guard parts.count == 3, UInt64(parts[2]) != nil, ["c", "s"].contains(parts[0]),
      let access = accessNames.first(where: { $0.0 == parts[1] })?.1
    else { return nil }
    return (access, parts[0] == "s")
  }
}
