import CShim
import Glibc

extension FileDescriptor {
  /// An anonymous file in memory holding `bytes` (memfd_create): something to hand another
  /// process, as systemd's file descriptor store does, without touching a file system.
  public static func memory(named name: String, holding bytes: [UInt8]) throws -> FileDescriptor {
    let fd = FileDescriptor(rawValue: try retrying("memfd_create", name) { cshim_memfd(name) })
    do {
      try fd.writeAll(bytes, subject: name)
    } catch {
      fd.close()
      throw error
    }
    return fd
  }

  /// Everything in a file from its start, wherever its offset is now (a memfd handed over
  /// keeps the offset its writer left at the end).
  public func readAllFromStart(subject: String? = nil, limit: Int) throws -> [UInt8] {
    _ = try retrying("lseek", subject) { lseek(rawValue, 0, SEEK_SET) }
    return try readAll(subject: subject, limit: limit)
  }
}
