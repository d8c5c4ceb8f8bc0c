import CShim
import Glibc

/// Unix-domain stream sockets: the only kind sectiond speaks.
public enum UnixSocket {
  /// The longest path `sun_path` can hold, leaving room for the terminating NUL.
  public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

  /// A new stream socket, close-on-exec; non-blocking when asked.
  public static func make(nonBlocking: Bool = true) throws -> FileDescriptor {
    var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
    let fd = try retrying("socket") { socket(AF_UNIX, type, 0) }
    return FileDescriptor(rawValue: fd)
  }

  /// Binds `fd` to `path` and starts listening, the socket file's mode exactly `permissions`,
  /// and at no moment more open than that.
  ///
  /// Linux gives the new file the mode of the socket's own inode less the umask, so an `fchmod`
  /// before `bind` creates it no more open than asked; a `chmod` then gives back what the umask
  /// took. Setting the umask around `bind` instead would touch the whole process: a file another
  /// thread created in that moment would get the socket's mode.
  ///
  /// The file appears at `path` only once the socket listens: bound under a name of this
  /// process's beside it, it is linked to `path` after `listen`. A daemon starting on the same
  /// path meanwhile, finding a socket file that refused its connection, took it for a dead
  /// daemon's and removed it: the first then served on a file no longer there (two daemons
  /// started at once: both ran 7 times in 200). `link` fails with EEXIST (`Errno.exists`) when
  /// `path` is taken: another socket got there first. A path too long for the name beside it
  /// is bound directly.
  public static func listen(
    _ fd: FileDescriptor, path: String, permissions: mode_t = 0o660, backlog: Int32 = 1024
  ) throws {
    let mode = permissions & 0o777
    _ = try retrying("fchmod", path) { fchmod(fd.rawValue, mode) }
    let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path.utf8.index(after: $0) }
    let staging = String(path[..<(slash ?? path.startIndex)]) + ".sd" + String(getpid(), radix: 36)
    let bound = staging.utf8.count <= maximumPathLength ? staging : path
    if bound == staging { _ = unlink(staging) }  // left by a process of this pid that died starting
    try withAddress(bound, call: "bind") { address, length in
      _ = try retrying("bind", bound) { Glibc.bind(fd.rawValue, address, length) }
    }
    defer { if bound == staging { _ = unlink(staging) } }
    _ = try retrying("chmod", bound) { chmod(bound, mode) }
    _ = try retrying("listen", bound) { Glibc.listen(fd.rawValue, backlog) }
    if bound == staging { _ = try retrying("link", path) { link(staging, path) } }
  }

  /// Connects `fd` to the socket at `path`. On a non-blocking socket EAGAIN means the backlog is full.
  public static func connect(_ fd: FileDescriptor, path: String) throws {
    try withAddress(path, call: "connect") { address, length in
      _ = try retrying("connect", path) { Glibc.connect(fd.rawValue, address, length) }
    }
  }

  /// A connected, blocking client socket.
  public static func connect(path: String) throws -> FileDescriptor {
    let fd = try make(nonBlocking: false)
    do {
      try connect(fd, path: path)
    } catch {
      fd.close()
      throw error
    }
    return fd
  }

  /// Accepts one pending connection as a non-blocking, close-on-exec descriptor.
  public static func accept(_ listener: FileDescriptor) throws -> IOResult<FileDescriptor> {
    switch try retryingNonBlocking("accept4", { cshim_accept_nonblocking(listener.rawValue) }) {
    case .done(let fd): return .done(FileDescriptor(rawValue: fd))
    case .wouldBlock: return .wouldBlock
    }
  }

  /// Who is on the other end, from SO_PEERCRED: its pid, effective uid and effective gid.
  public static func peerCredentials(_ fd: FileDescriptor) -> (pid: pid_t, uid: uid_t, gid: gid_t)? {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
    guard cshim_peer_credentials(fd.rawValue, &pid, &uid, &gid) == 0 else { return nil }
    return (pid, uid, gid)
  }

  /// The peer's supplementary groups as the kernel recorded them when it connected
  /// (SO_PEERGROUPS; its effective group is `peerCredentials`'); nil when the kernel cannot
  /// say. The kernel never gives a process more than 65,536 groups.
  public static func peerGroups(_ fd: FileDescriptor) -> [gid_t]? {
    var capacity = 32
    while true {
      var groups = [gid_t](repeating: 0, count: capacity)
      let count = Int(cshim_peer_groups(fd.rawValue, &groups, Int32(capacity)))
      guard count >= 0 else { return nil }
      if count <= capacity { return Array(groups[..<count]) }
      guard capacity < 65_536 else { return nil }
      capacity = min(count, 65_536)
    }
  }

  /// Half-closes the sending side, so the peer sees end of input but can still answer.
  public static func shutdownWrite(_ fd: FileDescriptor) {
    _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_WR))
  }

  /// Shuts both directions, so a thread blocked reading the socket wakes up to its end.
  public static func shutdown(_ fd: FileDescriptor) {
    _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_RDWR))
  }

  private static func withAddress(
    _ path: String, call: String,
    _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Void
  ) throws {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard !bytes.isEmpty, bytes.count <= maximumPathLength else {
      throw PosixError(call, path, errno: Errno(ENAMETOOLONG))
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    try withUnsafePointer(to: &address) { (pointer) in
      try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) in
        try body(address, length)
      }
    }
  }
}
