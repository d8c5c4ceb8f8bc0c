import CShim
import Glibc

/// File-system calls the daemon and its tools make, each wrapped once.
public enum FileSystem {
  /// What `stat` says about a path, as far as sectiond cares.
  public struct Status: Sendable {
    public let mode: mode_t
    public let owner: uid_t
    public let group: gid_t
    /// Device and inode: which file this is, to tell it from another one put at the same path.
    public let device: UInt64
    public let inode: UInt64
    /// How many names the file has (hard links).
    public let linkCount: Int
    public let size: Int
    public var isSocket: Bool { mode & S_IFMT == S_IFSOCK }
    public var isSymbolicLink: Bool { mode & S_IFMT == S_IFLNK }
    public var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
    public var isRegularFile: Bool { mode & S_IFMT == S_IFREG }
    /// Writable by the file's group or by everyone: by users other than its owner.
    public var isWritableByOthers: Bool { mode & (S_IWGRP | S_IWOTH) != 0 }
    /// The sticky bit: in such a directory only a file's owner may remove or rename it (/tmp).
    public var isSticky: Bool { mode & S_ISVTX != 0 }

    init(_ info: stat) {
      mode = info.st_mode
      owner = info.st_uid
      group = info.st_gid
      device = UInt64(info.st_dev)
      inode = UInt64(info.st_ino)
      linkCount = Int(info.st_nlink)
      size = Int(info.st_size)
    }
  }

  /// `lstat`: never follows a symbolic link (with `followingLinks`, `stat`). Nil when nothing is there.
  public static func status(_ path: String, followingLinks: Bool = false) throws -> Status? {
    var info = stat()
    if (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 { return Status(info) }
    let error = Errno.current
    if error == .noEntry { return nil }
    throw PosixError(followingLinks ? "stat" : "lstat", path, errno: error)
  }

  public static func exists(_ path: String) -> Bool {
    access(path, F_OK) == 0
  }

  /// Whether `path` is a regular file this process may execute (links followed).
  public static func isExecutableFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
  }

  /// Reads a whole regular file of at most `limit` bytes (EFBIG beyond). Opened without
  /// blocking and checked before a byte is read: a FIFO planted at `path` would otherwise hang
  /// the caller in open() until a writer came, and a device could be read forever. Anything
  /// but a regular file throws `NotARegularFile`.
  /// With `followingLinks: false` a symbolic link at `path` is not read through (ELOOP).
  public static func readFile(_ path: String, limit: Int = 16 << 20, followingLinks: Bool = true) throws
    -> [UInt8]
  {
    let fd = try FileDescriptor.open(
      path, O_RDONLY | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW))
    defer { fd.close() }
    var info = stat()
    _ = try retrying("fstat", path) { fstat(fd.rawValue, &info) }
    guard info.st_mode & S_IFMT == S_IFREG else { throw NotARegularFile(path: path, mode: info.st_mode) }
    if info.st_size > limit { throw PosixError("read", path, errno: Errno(EFBIG)) }
    return try fd.readAll(subject: path, limit: limit)
  }

  /// A path that was to be read as a file names something else.
  public struct NotARegularFile: Error, CustomStringConvertible {
    public let path: String
    let mode: mode_t

    public var description: String {
      let kind =
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        default: "not a regular file"
        }
      return "\(path) is \(kind), not a regular file"
    }
  }

  /// Replaces `path` with `bytes` so that `path` names a whole file at every moment, the old
  /// one or the new one, whenever a crash comes: the bytes go into the spare file `path.tmp`,
  /// which then swaps names with `path` in one renameat2(RENAME_EXCHANGE).
  ///
  /// The spare keeps the previous version and is overwritten in place by the next save, so no
  /// file is created or removed per save. That is the point: on ext4 a save measured 5 µs
  /// this way, 19 µs as create + remove + rename, and 130-250 µs as create + rename over the
  /// old file (auto_da_alloc writes the new file back at once when a rename replaces one).
  /// A file system that cannot exchange names gets the rename over the old file, as atomic.
  ///
  /// Power loss is another matter: `sync` makes the save durable (fsync of the file before the
  /// exchange, of the directory after it). `writeSpare` and `swapIn` do the same in two steps,
  /// for a caller that fsyncs on another thread.
  public static func replaceAtomically(
    _ path: String, with bytes: [UInt8], permissions: mode_t = 0o600, sync: Bool = false
  ) throws {
    try swapIn(try writeSpare(for: path, bytes, permissions: permissions), as: path, sync: sync)
  }

  /// The spare of `path`, `path.tmp`, holding `bytes` and still open, for `swapIn`.
  public static func writeSpare(for path: String, _ bytes: [UInt8], permissions: mode_t = 0o600) throws
    -> FileDescriptor
  {
    let spare = path + ".tmp"
    let fd = try openPrivateFile(spare, permissions: permissions)
    do {
      try fd.writeAll(bytes, subject: spare)
      try fd.truncate(to: bytes.count, subject: spare)
    } catch {
      fd.close()
      throw error
    }
    return fd
  }

  /// Puts the spare `fd` (from `writeSpare`) in place of `path` and closes it; with `sync`,
  /// only once its data is on disk, and the directory (`directory`, or opened by its name) is
  /// fsynced after, so that the new name survives a power cut too.
  public static func swapIn(
    _ fd: FileDescriptor, as path: String, sync: Bool, directory: FileDescriptor? = nil
  )
    throws
  {
    let spare = path + ".tmp"
    do {
      if sync { try fd.sync(subject: spare) }
    } catch {
      fd.close()
      throw error
    }
    fd.close()
    try exchangeOrRename(spare, path)
    guard sync else { return }
    if let directory {
      try directory.sync(subject: directoryName(of: path))
    } else {
      try syncDirectory(directoryName(of: path))
    }
  }

  /// fsyncs the directory `path`: the names made or changed in it survive a power cut.
  public static func syncDirectory(_ path: String) throws {
    let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
    defer { directory.close() }
    try directory.sync(subject: path)
  }

  /// Opens a file of the daemon's own for writing, creating it when missing, and makes sure
  /// that what is written goes to that file alone. O_NOFOLLOW makes a symbolic link planted
  /// there fail (ELOOP) instead of being followed, and O_NONBLOCK does the same for a FIFO or a
  /// socket (ENXIO) instead of hanging the daemon; a device, another user's file, or a second
  /// name (hard link) of another file is found by fstat once open. Any of these is removed,
  /// and the file created afresh with O_EXCL. With `truncating`, the file starts empty.
  public static func openPrivateFile(
    _ path: String, permissions: mode_t = 0o600, truncating: Bool = false, appending: Bool = false
  ) throws -> FileDescriptor {
    let flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | (appending ? O_APPEND : 0)
    do {
      let fd = try FileDescriptor.open(path, flags, permissions: permissions)
      var info = stat()
      if fstat(fd.rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1,
        info.st_uid == geteuid()
      {
        do {
          if truncating { try fd.truncate(to: 0, subject: path) }
        } catch {
          fd.close()
          throw error
        }
        return fd
      }
      fd.close()
    } catch let error as PosixError where error.errno == Errno(ELOOP) || error.errno == Errno(ENXIO) {}
    try remove(path)
    return try FileDescriptor.open(path, flags | O_EXCL, permissions: permissions)
  }

  /// Why `directory` is not safe to keep private files in, or nil when it is: it (after
  /// symbolic links) and each directory above it must be owned by this user or root, and
  /// writable by no one else, unless sticky above it (as /tmp is: others cannot rename what is
  /// ours there). Whoever can write there could put a FIFO, a link or a state of their own in
  /// place of the daemon's files, as sshd's StrictModes guards against. In a user namespace
  /// (systemd's PrivateUsers=) root's files show as the overflow uid: trusted above the
  /// directory, as root's. `contents` names what others could replace, for the message.
  public static func privateDirectoryProblem(
    _ directory: String, holding contents: String = "the state files"
  )
    -> String?
  {
    guard let resolved = realpath(directory, nil) else { return "\(directory): \(Errno.current)" }
    var path = String(cString: resolved)
    free(resolved)
    let user = geteuid()
    let overflow = (try? readFile("/proc/sys/kernel/overflowuid", limit: 32)).flatMap {
      uid_t(String(decoding: $0, as: UTF8.self).filter(\.isNumber))
    }
    var own = true
    while true {
      guard let status = try? status(path) else { return "cannot stat \(path)" }
      let trusted = status.owner == user || status.owner == 0 || (!own && status.owner == overflow)
      let writable = status.isWritableByOthers && (own || !status.isSticky)
      if !trusted || writable {
        // Another user's directory is theirs to fix, not ours: no chown of it is proposed.
        let mode = "\(path) (mode \(String(status.mode & 0o7777, radix: 8)), owner uid \(status.owner))"
        guard trusted else {
          return mode + (writable ? " can be written by other users and" : "")
            + " belongs to another user, who could replace \(contents); use a directory of your own"
        }
        return mode
          + " can be written by other users, who could replace \(contents); fix with: chmod go-w \(path)"
      }
      if path == "/" { return nil }
      path = directoryName(of: path)
      own = false
    }
  }

  /// Swaps the names of `from` and `to`; renames `from` to `to` when there is no `to` yet or
  /// the file system cannot swap names.
  public static func exchangeOrRename(_ from: String, _ to: String) throws {
    do {
      _ = try retrying("renameat2", "\(from) <-> \(to)") { cshim_rename_exchange(from, to) }
    } catch let error as PosixError
      where [.noEntry, Errno(EINVAL), Errno(ENOSYS), Errno(EOPNOTSUPP)].contains(error.errno)
    {
      try rename(from, to: to)
    }
  }

  public static func rename(_ from: String, to: String) throws {
    _ = try retrying("rename", "\(from) -> \(to)") { Glibc.rename(from, to) }
  }

  /// Gives the file `from` the second name `to` (link(2)), which must not exist yet.
  public static func link(_ from: String, to: String) throws {
    _ = try retrying("link", "\(from) -> \(to)") { Glibc.link(from, to) }
  }

  /// Removes a file; a missing file is not an error.
  public static func remove(_ path: String) throws {
    if unlink(path) == 0 || Errno.current == .noEntry { return }
    throw PosixError("unlink", path)
  }

  /// Creates `path` and its missing parents, like `mkdir -p`.
  public static func makeDirectories(_ path: String, permissions: mode_t = 0o755) throws {
    var prefix = path.hasPrefix("/") ? "/" : ""
    for component in path.split(separator: "/") {
      prefix += component
      if mkdir(prefix, permissions) != 0 && Errno.current != .exists {
        throw PosixError("mkdir", prefix)
      }
      prefix += "/"
    }
  }

  public static func changeMode(_ path: String, _ mode: mode_t) throws {
    _ = try retrying("chmod", path) { chmod(path, mode) }
  }
}

/// The directory part of a path, `.` when there is none.
public func directoryName(of path: String) -> String {
  guard let slash = path.lastIndex(of: "/") else { return "." }
  return slash == path.startIndex ? "/" : String(path[..<slash])
}
