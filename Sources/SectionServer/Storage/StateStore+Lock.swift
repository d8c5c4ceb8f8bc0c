import Glibc
import Posix

/// One daemon to a state file. Two sectiond given the same `--state` (a second one started
/// by hand beside the service, on a socket of its own) would each append to the journal and
/// rewrite the file from its own list, and a restart would keep one of the two: changes the
/// other had acknowledged would be gone. So the daemon holds `state.json.lock` locked while
/// it runs, and one that finds it held refuses to start.
///
/// The lock is flock(2) on a file of its own: the state file and the journal are replaced by
/// renames, and a lock on a file that was renamed over locks nothing. The file is never
/// removed or replaced (unlinking it could let two daemons each lock a file of that name), is
/// opened as it is, whoever owns it (root starting a second daemon on the service's state must
/// meet the service's lock, not make a new one), and holds the pid of its holder for the
/// message. The kernel lets go of the lock when its holder exits, however it ends.
extension StateStore {
  var lockPath: String { path + ".lock" }

  /// How long a start waits for the lock: a daemon just sent SIGKILL holds it until its
  /// process is gone, a few milliseconds later.
  static let lockWaitMilliseconds = 1_000

  /// Takes the lock, or throws naming the daemon that holds it. Where the lock file cannot be
  /// created (a read-only or full file system, a directory this user cannot write), one that
  /// is there is locked read-only; with none, the daemon starts unlocked, with a warning: such
  /// a daemon cannot write the state either.
  func lockAgainstOthers() throws {
    guard let fd = try openLockFile() else { return }
    let deadline = monotonicMicroseconds() + UInt64(StateStore.lockWaitMilliseconds) * 1_000
    while try !fd.lockExclusively(subject: lockPath) {
      guard monotonicMicroseconds() < deadline else {
        let holder = lockHolder(fd)
        fd.close()
        throw StartFailure(
          "another sectiond\(holder.map { " (pid \($0))" } ?? "") is using the state file \(path): "
            + "stop it first, or give this one a state file of its own with --state",
          errno: .wouldBlock)
      }
      ProcessInfo.sleep(milliseconds: 10)
    }
    lock = fd
    // Only for the message a second daemon gives: a failure here changes nothing.
    if (try? fd.truncate(to: 0)) != nil {
      try? fd.writeAll(Array("\(ProcessInfo.processID)\n".utf8), subject: lockPath)
    }
  }

  private func openLockFile() throws -> FileDescriptor? {
    // O_NOFOLLOW and O_NONBLOCK: a link or a FIFO put in its place is refused, not followed
    // or waited on (the directory is private, so only this user or root could put one there).
    let flags = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY
    let fd: FileDescriptor
    do {
      fd = try FileDescriptor.open(lockPath, O_RDWR | O_CREAT | flags)
    } catch let error as PosixError where StateStore.cannotCreate.contains(error.errno) {
      guard let existing = try? FileDescriptor.open(lockPath, O_RDONLY | flags) else {
        Log.warning(
          "cannot create \(lockPath) (\(error.errno)): a second sectiond on this state would not be stopped")
        return nil
      }
      fd = existing
    } catch let error as PosixError {
      throw StartFailure(
        "cannot open the lock file \(lockPath): \(error.errno); remove it if it is not a plain file",
        errno: error.errno)
    }
    guard (try? fd.status(subject: lockPath))?.isRegularFile == true else {
      fd.close()
      throw StartFailure("\(lockPath) is not a plain file: remove it")
    }
    return fd
  }

  private static let cannotCreate = [Errno(EROFS), Errno(EACCES), .noSpace, Errno(EDQUOT)]

  /// The pid the daemon holding the lock wrote in `fd` (the lock file, just opened), if any.
  private func lockHolder(_ fd: FileDescriptor) -> Int32? {
    guard let bytes = try? fd.readAll(subject: lockPath, limit: 32) else { return nil }
    return Int32(String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self))
  }
}
