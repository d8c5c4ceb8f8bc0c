import Glibc

/// File-system calls the daemon and its tools make, each wrapped once.
public enum FileSystem {
  /// What `stat` says about a path, as far as sectiond cares.
  public struct Status: Sendable {
    public let mode: mode_t
    public let owner: uid_t
    /// Device and inode: which file this is, to tell it from another one put at the same path.
    public let device: UInt64
    public let inode: UInt64
    public var isSocket: Bool { mode & S_IFMT == S_IFSOCK }
    public var isSymbolicLink: Bool { mode & S_IFMT == S_IFLNK }
    public var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
    /// Writable by the file's group or by everyone: by users other than its owner.
    public var isWritableByOthers: Bool { mode & (S_IWGRP | S_IWOTH) != 0 }
  }

  /// `lstat`: never follows a symbolic link. Nil when nothing is there.
  public static func status(_ path: String) throws -> Status? {
    var info = stat()
    if lstat(path, &info) == 0 {
      return Status(
        mode: info.st_mode, owner: info.st_uid, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
    let error = Errno.current
    if error == .noEntry { return nil }
    throw PosixError("lstat", path, errno: error)
  }

  public static func exists(_ path: String) -> Bool {
    access(path, F_OK) == 0
  }

  public static func readFile(_ path: String, limit: Int = 16 << 20) throws -> [UInt8] {
    let fd = try FileDescriptor.open(path, O_RDONLY)
    defer { fd.close() }
    return try fd.readAll(subject: path, limit: limit)
  }

  /// Replaces `path` with `bytes` so that a crash at any moment leaves either the old file or
  /// the new one whole: write a temporary file beside it, remove the old file, rename.
  ///
  /// Removing the old file before the rename is deliberate: ext4 (auto_da_alloc) starts
  /// writing back the new file's data when a rename replaces an existing file, which measured
  /// 130-250 µs per save here against 25-30 µs without it. The price is a moment when only
  /// the complete temporary file exists; `recoverInterruptedReplace` finishes that rename
  /// at start-up. Durability against power loss comes from `sync` (fsync before the rename).
  ///
  /// The temporary file is created with O_EXCL, so a symbolic link planted at either name is
  /// replaced, never followed. A leftover temporary file (five syscalls a save without this
  /// check up front, seven with it) is dealt with only when it is there.
  public static func replaceAtomically(
    _ path: String, with bytes: [UInt8], permissions: mode_t = 0o600, sync: Bool = false
  ) throws {
    let temporary = path + ".tmp"
    let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
    let fd: FileDescriptor
    do {
      fd = try FileDescriptor.open(temporary, flags, permissions: permissions)
    } catch let error as PosixError where error.errno == .exists {
      // Left by a crash while writing (then `path` is intact), or the only copy after a
      // rename that failed (then it is put back first).
      try recoverInterruptedReplace(path)
      _ = unlink(temporary)
      fd = try FileDescriptor.open(temporary, flags, permissions: permissions)
    }
    do {
      try fd.writeAll(bytes, subject: temporary)
      if sync { try fd.sync(subject: temporary) }
    } catch {
      fd.close()
      _ = unlink(temporary)
      throw error
    }
    fd.close()
    try remove(path)
    // From here the temporary file is the only copy: if the rename fails it stays, and
    // `recoverInterruptedReplace` (at start-up, or in the next replace) puts it back.
    try rename(temporary, to: path)
  }

  /// Completes a `replaceAtomically` that a crash cut short between removing `path` and
  /// renaming the (then complete) temporary file over it. Returns whether it did.
  @discardableResult
  public static func recoverInterruptedReplace(_ path: String) throws -> Bool {
    let temporary = path + ".tmp"
    guard try status(path) == nil, try status(temporary) != nil else { return false }
    try rename(temporary, to: path)
    return true
  }

  public static func rename(_ from: String, to: String) throws {
    _ = try retrying("rename", "\(from) -> \(to)") { Glibc.rename(from, to) }
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
