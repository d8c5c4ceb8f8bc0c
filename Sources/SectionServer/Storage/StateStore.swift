import Glibc
import Posix
import SectionCore

/// When the state is fsynced (`--fsync`), as Redis's `appendfsync`: what a power cut may take.
public enum FsyncPolicy: String, Equatable, Sendable, CaseIterable {
  /// Every group commit is on disk before its replies go out: a power cut loses nothing
  /// acknowledged. `--sync` says the same.
  case always
  /// A thread of its own fsyncs at most a second after a change, never the loop: a power cut
  /// loses at most the last second or so (see `StateSyncer`). The default.
  case everySecond = "everysec"
  /// Never: the kernel writes back when it likes (a tmpfs, tests). A crash of the daemon loses
  /// nothing; a power cut may lose anything not yet written back, the state file too.
  case never = "no"
}

/// The state file and its journal: loaded once at start; after every group of changes, the
/// changes are appended to the journal, and now and then the whole state is written instead.
///
/// Writing the whole file at every group commit costs the size of the list (a list of 1,000
/// sections of 100 items is 2 MB); appending costs the size of the change. Loading reads the
/// state file, then replays the journal's intact groups newer than it (see `Journal`).
/// The whole state is written (compaction, as Redis rewrites its append-only file) when the
/// journal has grown past twice the state file (and 1 MiB), and at once, durably unless the
/// policy is `never`, for what the journal cannot hold: a reload, a start that replayed the
/// journal, a journal that failed or was found replaced.
///
/// The journal is held open between saves. A compaction puts the new state file in place
/// through its spare (see `FileSystem.replaceAtomically`) and starts the journal afresh. With
/// `always` (and `never`) that happens at once, the fsyncs with it. With `everySecond` the
/// group is appended first; then the loop only writes the spare and starts a new journal,
/// `state.json.journal.next`, and the syncer's thread fsyncs the old journal and the spare,
/// swaps it in, fsyncs the directory and renames the new journal into place. Until then the
/// previous state file stays, and the old journal with it: whatever a crash or a power cut
/// leaves, the state file and the journals beside it replay to an acknowledged state (a
/// compaction is trusted only once it is on disk).
final class StateStore {
  let path: String
  let policy: FsyncPolicy
  var journalPath: String { path + ".journal" }
  /// The journal a compaction in the background starts, until it is renamed to `journalPath`.
  var nextJournalPath: String { path + ".journal.next" }

  /// `lockPath`, held locked while the daemon runs (see `lockAgainstOthers`).
  var lock: FileDescriptor?
  /// The journal, open for appending; nil until the first whole save.
  private var journal: FileDescriptor?
  private var journalSize = 0
  private var stateSize = 0
  /// Whether the next save must write the whole state: the journal failed.
  private var wholeStateNeeded = false
  /// Whether the next whole save must be on disk before it returns, whatever the policy: after
  /// a start that recovered from a crash (the journals may not add up again after a second
  /// one), and after a background fsync failed.
  var durableSaveNeeded = false
  /// The background half of `everySecond`, started once the directory is known to be there.
  /// It shares the journal's descriptor: with a syncer, a journal is closed by it, never here.
  private var syncer: StateSyncer?
  /// Compactions handed to the syncer; fewer finished means one is under way.
  private var compactionsStarted = 0
  /// When the journal's name is next compared with the file held open (`journalReplaced`).
  private var nextNameCheck: UInt64 = 0
  /// The journal's size before which a compaction that failed is not tried again.
  private var compactionDeferredUntil = 0
  /// The largest state file or journal read at start.
  static let readLimit = 1 << 30

  init(path: String, policy: FsyncPolicy) {
    self.path = path
    self.policy = policy
    fillReserve()
  }

  /// With `everySecond`, starts the syncer, holding `directory` (the state file's) open.
  func startSyncer(in directory: String) throws {
    guard policy == .everySecond, syncer == nil else { return }
    syncer = try StateSyncer(directory: FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY))
  }

  /// Saves `group`: appended to the journal, or, when the journal cannot hold it or has grown
  /// past the state, the whole state as `encodeState` renders it (the model with the group
  /// applied, and its history): a store needs the whole state only then, and never the service.
  func save(_ group: SavedGroup, encodeState: (inout [UInt8]) -> Void) throws {
    if let syncer {
      let failures = syncer.takeFailures()
      if !failures.isEmpty {
        // Acknowledged changes may not be on disk: this save writes and fsyncs them all.
        Log.error(
          "fsync in the background failed (\(failures.joined(separator: "; "))); writing the whole state again"
        )
        durableSaveNeeded = true
      }
    }
    // A durable save starts the journal afresh itself; opening it first would take the old one's
    // name (openPrivateFile replaces a file with a second name, as a set-aside journal has)
    // before the state holding its groups is on disk.
    if journal == nil && !wholeStateNeeded && !durableSaveNeeded { try openJournal() }
    let tooLong = journalSize > max(2 * stateSize, 1 << 20)
    if wholeStateNeeded || durableSaveNeeded || group.needsSnapshot || journalReplaced()
      || (tooLong && syncer == nil)
    {
      try saveWholeState(encodeState)
      return
    }
    try append(group)
    // The group is in the journal, so the compaction can take its time: until the syncer has
    // put the new state file in place, the old one and the journal hold the same. The save is
    // done, whatever happens to the compaction: failing, it waits for another megabyte.
    guard let syncer, tooLong, !compacting, journalSize > compactionDeferredUntil else { return }
    do {
      try startCompaction(syncer, encodeState)
      compactionDeferredUntil = 0
    } catch {
      compactionDeferredUntil = journalSize + (1 << 20)
      Log.warning("cannot compact the journal (\(error)); trying again after another MiB of it")
    }
  }

  /// Whether the journal there now keeps its name when `openPrivateFile` opens it: a file of
  /// the daemon's own with one name is opened (and emptied) in place, its name on disk
  /// already. One that is new (a start), or replaced (a set-aside journal shares its inode
  /// with the kept copy), gets a name that must reach the disk before any group in it is
  /// acknowledged: fsynced appends to a file whose name is lost are lost with it.
  private var journalNameIsOnDisk: Bool {
    (try? FileSystem.status(journalPath)).map {
      $0.isRegularFile && $0.linkCount == 1 && $0.owner == geteuid()
    }
      ?? false
  }

  /// The journal as left by the start: it holds nothing newer than the state file (a start
  /// that replayed any saves the whole state before it serves), so groups go after the rest.
  private func openJournal() throws {
    let nameOnDisk = journalNameIsOnDisk
    let fd = try withReserve { try FileSystem.openPrivateFile(journalPath, appending: true) }
    journal = fd
    if !nameOnDisk && policy != .never { try FileSystem.syncDirectory(directoryName(of: path)) }
    journalSize = (try? fd.status().size) ?? 0
    syncer?.switchJournal(to: fd)
  }

  /// Appends `group`'s journal lines to the journal, with its checksum.
  private func append(_ group: SavedGroup) throws {
    guard let journal else { preconditionFailure("a save opens the journal first") }
    bytes.removeAll(keepingCapacity: true)
    bytes.append(contentsOf: group.journal)
    Journal.appendCommit(revision: group.revision, to: &bytes, groupStart: 0)
    do {
      try journal.writeAll(bytes, subject: journalPath)
      if policy == .always { try journal.sync(subject: journalPath) }
      journalSize += bytes.count
      syncer?.journalWritten()
    } catch {
      // Take back what part of the group reached the journal; failing that, the next save
      // writes the whole state, which starts a new journal.
      if (try? journal.truncate(to: journalSize, subject: journalPath)) == nil { wholeStateNeeded = true }
      throw error
    }
  }

  /// Whether a compaction handed to the syncer is still under way.
  private var compacting: Bool { (syncer?.finished ?? compactionsStarted) < compactionsStarted }

  /// Whether the journal held open is no longer the file at its name: removed, renamed over
  /// (no name left) or given a second name, checked at each save (fstat); moved away, checked
  /// by its name at most once a second (lstat). Appending to it would save nothing: the whole
  /// state is saved instead, which starts a new journal.
  private func journalReplaced() -> Bool {
    guard let journal, let open = try? journal.status(), open.linkCount == 1 else { return true }
    let now = monotonicMicroseconds()
    guard now >= nextNameCheck, !compacting else { return false }
    nextNameCheck = now + 1_000_000
    guard let named = try? FileSystem.status(journalPath) else { return true }
    return named.device != open.device || named.inode != open.inode
  }

  /// Writes the whole state file at once, durably unless the policy is `never`, and starts the
  /// journal afresh. For what the journal cannot hold (a reload), a journal that failed, or a
  /// start or a background failure that needs the files to add up again.
  /// Saves the whole state, which replaced the list without a group of its own: a host
  /// adopting a shared list's state (`Server.adopt`).
  func saveWhole(_ encodeState: (inout [UInt8]) -> Void) throws { try saveWholeState(encodeState) }

  private func saveWholeState(_ encodeState: (inout [UInt8]) -> Void) throws {
    if let syncer, compacting {
      // Rare: a reload or a replaced journal while a compaction is under way. Only one at a time.
      syncer.waitUntilFinished(compactionsStarted)
    }
    encodeState(&bytes)
    try withReserve { try FileSystem.replaceAtomically(path, with: bytes, sync: policy != .never) }
    stateSize = bytes.count
    // Every journal now holds only groups the state file has: the journal starts empty.
    if syncer == nil { journal?.close() }
    journal = nil
    journalSize = 0
    durableSaveNeeded = false
    wholeStateNeeded = false
    do {
      let nameOnDisk = journalNameIsOnDisk
      let fresh = try withReserve {
        try FileSystem.openPrivateFile(journalPath, truncating: true, appending: true)
      }
      journal = fresh
      let hadNext = FileSystem.exists(nextJournalPath)
      if hadNext { try FileSystem.remove(nextJournalPath) }
      if policy != .never && (!nameOnDisk || hadNext) {
        try FileSystem.syncDirectory(directoryName(of: path))
      }
      syncer?.switchJournal(to: fresh)
    } catch {
      // The state is saved; without a journal the next save writes the whole state again.
      Log.warning("\(error); the next save writes the whole state again")
      wholeStateNeeded = true
    }
  }

  /// Writes the spare and starts the next journal; the syncer does the rest.
  private func startCompaction(_ syncer: StateSyncer, _ encodeState: (inout [UInt8]) -> Void) throws {
    encodeState(&bytes)
    guard let ended = journal else { preconditionFailure("a compaction follows an append") }
    let spare = try withReserve { try FileSystem.writeSpare(for: path, bytes) }
    let next: FileDescriptor
    do {
      next = try withReserve {
        try FileSystem.openPrivateFile(nextJournalPath, truncating: true, appending: true)
      }
    } catch {
      spare.close()
      throw error
    }
    syncer.switchJournal(
      to: next,
      finishing: StateSyncer.Compaction(
        spare: spare, endedJournal: ended, statePath: path, startedJournalPath: nextJournalPath,
        journalPath: journalPath))
    compactionsStarted += 1
    journal = next
    journalSize = 0
    stateSize = bytes.count
    wholeStateNeeded = false
  }

  /// The first save of a start that must save before it serves: durable, whatever the policy
  /// (what a start decided, or recovered, is in no journal).
  func saveAtStart(_ group: SavedGroup, encodeState: (inout [UInt8]) -> Void) throws {
    durableSaveNeeded = true
    try save(group, encodeState: encodeState)
  }

  /// Ends the syncer's thread once what it has is on disk; at shutdown.
  func close() {
    if let syncer { syncer.stop() } else { journal?.close() }
    journal = nil
    lock?.close()
    lock = nil
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

  /// Descriptors held back from clients, as many as a save opens at once besides the journal
  /// (the spare and its directory, or the spare and the next journal), so that a change is not
  /// refused when clients have taken all the others (the server pauses accepting only once
  /// accept fails). The journal is held open, and the syncer holds the directory.
  private var reserve: [FileDescriptor] = []

  private func fillReserve() {
    while reserve.count < 2, let held = try? FileDescriptor.open("/dev/null", O_RDONLY) {
      reserve.append(held)
    }
  }
}
