import Glibc
import Posix
import SectionCore

/// The state file: loaded once at start, replaced atomically after every group of changes.
final class StateStore {
  let path: String
  /// fsync the file before it is swapped into place and the directory after, so that even a
  /// power cut loses nothing acknowledged.
  let sync: Bool

  init(path: String, sync: Bool) {
    self.path = path
    self.sync = sync
    fillReserve()
  }

  /// The saved state, or nil when there is none. A file that cannot be understood (not JSON
  /// of the format, over 16 MiB, a FIFO or a directory) is renamed aside, never overwritten,
  /// with a warning, and the daemon starts from the config.
  func load() throws -> SavedState? {
    do {
      return try SavedState.decode(try FileSystem.readFile(path, limit: 16 << 20))
    } catch let error as PosixError where error.errno == .noEntry {
      return nil
    } catch let error as PosixError where error.errno != Errno(EFBIG) {
      throw error
    } catch {
      let aside = "\(path).corrupt-\(wallClockSeconds())"
      try FileSystem.rename(path, to: aside)
      Log.warning(
        "state file \(path) is unreadable (\(error)); moved it to \(aside) and started from the config")
      return nil
    }
  }

  func save(_ service: SectionService) throws {
    service.encodeState(into: &bytes)
    do {
      try FileSystem.replaceAtomically(path, with: bytes, permissions: 0o600, sync: sync)
    } catch let error as PosixError where error.errno == .tooManyFiles {
      // Clients hold every other descriptor: give up the reserve for this one save.
      guard !reserve.isEmpty else { throw error }
      for held in reserve { held.close() }
      reserve.removeAll()
      defer { fillReserve() }
      try FileSystem.replaceAtomically(path, with: bytes, permissions: 0o600, sync: sync)
    }
  }

  /// The rendered state, kept to reuse its storage.
  private var bytes: [UInt8] = []

  /// Descriptors held back from clients, as many as a save has open at once (the spare file,
  /// and with `sync` its directory), so that a change is not refused when clients have taken
  /// all the others (the server pauses accepting only once accept fails).
  private var reserve: [FileDescriptor] = []

  private func fillReserve() {
    while reserve.count < (sync ? 2 : 1), let held = try? FileDescriptor.open("/dev/null", O_RDONLY) {
      reserve.append(held)
    }
  }

  /// Creates the state file's directory when it is missing; private, since it is ours alone.
  func prepareDirectory() throws {
    try FileSystem.makeDirectories(directoryName(of: path), permissions: 0o700)
  }
}
