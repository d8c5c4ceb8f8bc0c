import CShim
import Glibc

/// An open file descriptor. A plain value: whoever opened it closes it, once.
public struct FileDescriptor: Hashable, Sendable {
  public let rawValue: Int32

  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let standardInput = FileDescriptor(rawValue: 0)
  public static let standardOutput = FileDescriptor(rawValue: 1)
  public static let standardError = FileDescriptor(rawValue: 2)

  /// Opens `path`; `O_CLOEXEC` is always added.
  public static func open(
    _ path: String, _ flags: Int32, permissions: mode_t = 0o600
  ) throws -> FileDescriptor {
    let fd = try retrying("open", path) { Glibc.open(path, flags | O_CLOEXEC, permissions) }
    return FileDescriptor(rawValue: fd)
  }

  /// Reads up to `buffer.count` bytes; 0 means end of input.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> IOResult<Int> {
    try retryingNonBlocking("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
  }

  /// `read(into:)` for a socket, through recv(2): the kernel serves it without the VFS layer
  /// of read(2), and it is not a cancellation point (see `cshim_receive`). A send and a
  /// receive on a Unix socket pair took 1.68 us against 1.84 us for write and read, measured
  /// side by side on the bench machine. The daemon reads every request with it.
  public func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> IOResult<Int> {
    try retryingNonBlocking("recv") { cshim_receive(rawValue, buffer.baseAddress, buffer.count) }
  }

  /// What is waiting to be read, without taking it (recv(2) with MSG_PEEK, never waiting): the
  /// next `receive` reads the same bytes.
  public func peek(into buffer: UnsafeMutableRawBufferPointer) throws -> IOResult<Int> {
    try retryingNonBlocking("recv") { cshim_peek(rawValue, buffer.baseAddress, buffer.count) }
  }

  /// Writes what the kernel takes now, through send(2) (so only to a socket); a short count
  /// is normal on a non-blocking socket.
  public func write(_ buffer: UnsafeRawBufferPointer) throws -> IOResult<Int> {
    try retryingNonBlocking("send") { cshim_send(rawValue, buffer.baseAddress, buffer.count) }
  }

  /// Writes every byte, waiting as needed: for files and blocking descriptors.
  public func writeAll(_ bytes: [UInt8], subject: String? = nil) throws {
    var offset = 0
    while offset < bytes.count {
      offset += try bytes.withUnsafeBytes { (buffer) throws -> Int in
        try retrying("write", subject) {
          Glibc.write(rawValue, buffer.baseAddress! + offset, buffer.count - offset)
        }
      }
    }
  }

  /// Reads everything until end of file. The buffer is no larger than the limit needs: a
  /// client's `/proc/<pid>/comm` (64 bytes at most) zeroed a 64 KiB one, 66,000 instructions.
  public func readAll(subject: String? = nil, limit: Int = 16 << 20) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: min(limit, 65535) + 1)
    while true {
      let count = try chunk.withUnsafeMutableBytes { (buffer) throws -> Int in
        try retrying("read", subject) { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
      }
      if count == 0 { return bytes }
      bytes.append(contentsOf: chunk[0..<count])
      if bytes.count > limit { throw PosixError("read", subject, errno: Errno(EFBIG)) }
    }
  }

  /// The device and inode the descriptor refers to, to recognise it (JOURNAL_STREAM names stderr so).
  public func identity() -> (device: UInt64, inode: UInt64)? {
    var info = stat()
    guard fstat(rawValue, &info) == 0 else { return nil }
    return (UInt64(info.st_dev), UInt64(info.st_ino))
  }

  /// What fstat says about the open file.
  public func status(subject: String? = nil) throws -> FileSystem.Status {
    var info = stat()
    _ = try retrying("fstat", subject) { fstat(rawValue, &info) }
    return FileSystem.Status(info)
  }

  public func setNonBlocking() throws {
    let flags = try retrying("fcntl") { fcntl(rawValue, F_GETFL) }
    _ = try retrying("fcntl") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
  }

  public func sync(subject: String? = nil) throws {
    _ = try retrying("fsync", subject) { fsync(rawValue) }
  }

  /// Takes an exclusive flock(2) on the open file without waiting: true when taken, false when
  /// another open file holds it. The lock goes with the open file, so with the process too:
  /// a daemon killed with SIGKILL lets go of it as it exits.
  public func lockExclusively(subject: String? = nil) throws -> Bool {
    do {
      _ = try retrying("flock", subject) { flock(rawValue, LOCK_EX | LOCK_NB) }
      return true
    } catch let error as PosixError where error.errno == .wouldBlock {
      return false
    }
  }

  /// Cuts the file to `length` bytes (ftruncate).
  public func truncate(to length: Int, subject: String? = nil) throws {
    _ = try retrying("ftruncate", subject) { ftruncate(rawValue, off_t(length)) }
  }

  /// Closes the descriptor. EINTR from close(2) on Linux still closed it, so it is not retried.
  public func close() {
    _ = Glibc.close(rawValue)
  }
}
