import Glibc
import Posix
import SectionCore

/// The state file and its journal: loaded once at start; after every group of changes, the
/// changes are appended to the journal, and now and then the whole state is written instead.
///
/// Writing the whole file at every group commit costs the size of the list (a list of 1,000
/// sections of 100 items is 2 MB); appending costs the size of the change. Loading reads the
/// state file, then replays the journal's complete groups newer than it (see `Journal`).
/// The whole state is written (compaction, as Redis rewrites its append-only file) at the
/// first save after a start, after a reload, after a failed append, and when the journal
/// has grown past twice the state file (and 1 MiB): the state file is replaced atomically,
/// then the journal is emptied; a crash between the two leaves journal groups the state
/// file already holds, which the replay skips.
final class StateStore {
  let path: String
  /// fsync the file before it is swapped into place and the directory after, and the journal
  /// after each append, so that even a power cut loses nothing acknowledged.
  let sync: Bool
  var journalPath: String { path + ".journal" }

  private var journalSize = 0
  private var stateSize = 0
  /// Whether the next save must write the whole state.
  private var wholeStateNeeded = true
  /// The largest state file or journal read at start.
  static let readLimit = 1 << 30

  init(path: String, sync: Bool) {
    self.path = path
    self.sync = sync
    fillReserve()
  }

  /// The saved state with the journal replayed, or nil when there is none. A state file that
  /// cannot be understood (not JSON of the format, too large, a FIFO or a directory) is renamed
  /// aside, never overwritten, with a warning, and the daemon starts from the config; so is a
  /// journal that does not replay onto it, and the daemon starts from the state file alone.
  func load() throws -> SavedState? {
    let state = try read(path, otherwise: "started from the config") { bytes in
      stateSize = bytes.count
      return try SavedState.decode(bytes)
    }
    guard let saved = state else { return nil }
    let replayed = try read(journalPath, otherwise: "started from the state file alone") { bytes in
      try saved.replaying(try Journal.decode(bytes))
    }
    return replayed ?? saved
  }

  /// `decode` of the bytes of `file`; nil when there is no such file, or when it cannot be
  /// understood (too large, not a regular file, a symbolic link, which is never read through,
  /// not decoded): then it is set aside and the log says what the daemon does `otherwise`.
  private func read<T>(_ file: String, otherwise: String, _ decode: ([UInt8]) throws -> T) throws -> T? {
    do {
      return try decode(try FileSystem.readFile(file, limit: StateStore.readLimit, followingLinks: false))
    } catch let error as PosixError where error.errno == .noEntry {
      return nil
    } catch let error as PosixError where error.errno != Errno(EFBIG) && error.errno != Errno(ELOOP) {
      throw error
    } catch {
      try setAside(file, because: error, then: otherwise)
      return nil
    }
  }

  private func setAside(_ file: String, because error: Error, then what: String) throws {
    let aside = "\(file).corrupt-\(wallClockSeconds())"
    try FileSystem.rename(file, to: aside)
    Log.warning("\(file) is unreadable (\(error)); moved it to \(aside) and \(what)")
  }

  func save(_ service: SectionService) throws {
    if wholeStateNeeded || service.needsSnapshot || journalSize > max(2 * stateSize, 1 << 20) {
      try saveWholeState(service)
      return
    }
    bytes.removeAll(keepingCapacity: true)
    bytes.append(contentsOf: service.journal)
    Journal.appendCommit(revision: service.model.revision, to: &bytes)
    do {
      // Opened for each append, not held: a descriptor open for writing would keep the file
      // system from being remounted read-only.
      let journal = try withReserve { try FileDescriptor.open(journalPath, O_WRONLY | O_APPEND | O_NOFOLLOW) }
      defer { journal.close() }
      try journal.writeAll(bytes, subject: journalPath)
      if sync { try journal.sync(subject: journalPath) }
      journalSize += bytes.count
    } catch {
      // Part of the group may be in the journal: the next save writes the whole state,
      // which empties the journal.
      wholeStateNeeded = true
      throw error
    }
  }

  /// Writes the whole state file, then empties the journal. The journal is created first, so
  /// that with `sync` the directory's fsync after the state file covers its name too.
  private func saveWholeState(_ service: SectionService) throws {
    let journal = try withReserve {
      try FileDescriptor.open(journalPath, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK)
    }
    defer { journal.close() }
    service.encodeState(into: &bytes)
    try withReserve { try FileSystem.replaceAtomically(path, with: bytes, permissions: 0o600, sync: sync) }
    stateSize = bytes.count
    do {
      try journal.truncate(to: 0, subject: journalPath)
      journalSize = 0
      wholeStateNeeded = false
    } catch {
      // The state is saved; the journal's groups are older than it and skipped at load.
      Log.warning("\(error); the next save writes the whole state again")
    }
  }

  /// Runs `body`; when clients hold every other descriptor, gives up the reserve for it.
  private func withReserve<T>(_ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as PosixError where error.errno == .tooManyFiles {
      guard !reserve.isEmpty else { throw error }
      for held in reserve { held.close() }
      reserve.removeAll()
      defer { fillReserve() }
      return try body()
    }
  }

  /// The rendered state, kept to reuse its storage.
  private var bytes: [UInt8] = []

  /// Descriptors held back from clients, as many as a save has open at once (the journal, the
  /// spare file, and with `sync` its directory), so that a change is not refused when clients have taken
  /// all the others (the server pauses accepting only once accept fails).
  private var reserve: [FileDescriptor] = []

  private func fillReserve() {
    while reserve.count < (sync ? 3 : 2), let held = try? FileDescriptor.open("/dev/null", O_RDONLY) {
      reserve.append(held)
    }
  }

  /// Creates the state file's directory when it is missing; private, since it is ours alone.
  func prepareDirectory() throws {
    try FileSystem.makeDirectories(directoryName(of: path), permissions: 0o700)
  }
}
