import Posix

/// The background half of `--fsync everysec`: a thread of its own fsyncs the journal at most a
/// second after a group was appended to it, and finishes compactions (fsync of the new state
/// file, the swap, fsyncs of the directory), so that the loop never waits for the disk.
///
/// The loop tells it that the journal was written (`journalWritten`, a lock and a flag) and
/// hands it compactions (`finish`); it reports what went wrong (`takeFailures`) and how many
/// compactions it finished (`finished`). Descriptors it is given are its own: it closes them.
final class StateSyncer: @unchecked Sendable {
  /// A whole state written to the spare, and the journals around it: the one it ends (groups
  /// up to it, fsynced before anything else) and the one started after it, under a name of
  /// its own until the new state file is on disk, then renamed to be the journal.
  struct Compaction {
    let spare: FileDescriptor
    let endedJournal: FileDescriptor
    let statePath: String
    let startedJournalPath: String
    let journalPath: String
  }

  /// How long a written group may wait for its fsync: the window a power cut may lose, less
  /// the fsync itself.
  static let interval: UInt64 = 1_000_000

  private let condition = Condition()
  /// The state file's directory, held so that its fsyncs need no descriptor clients could take.
  private let directory: FileDescriptor
  private var thread: Thread?
  // Shared with the thread, under `condition`:
  /// The journal being appended to: a descriptor of the syncer's own.
  private var journal: FileDescriptor?
  /// Journals retired without a compaction (their groups are in a state file on disk): closed.
  private var retired: [FileDescriptor] = []
  private var dirty = false
  /// The thread waits with nothing to do: a write must wake it (and only then, so that a busy
  /// loop pays no wake-up per save).
  private var idle = false
  private var compactions: [Compaction] = []
  private var finishedCount = 0
  private var failures: [String] = []
  private var stopping = false

  init(directory: FileDescriptor) throws {
    self.directory = directory
    do {
      thread = try Thread.start { [self] in run() }
    } catch {
      directory.close()
      throw error
    }
  }

  /// A group was appended to the journal.
  func journalWritten() {
    condition.withLock {
      guard !dirty else { return }
      dirty = true
      if idle { condition.broadcast() }
    }
  }

  /// From now on `journal` is the journal (the loop appends to it; the syncer closes it once
  /// another replaces it): with `compaction`, the one it ends is fsynced first; without, the
  /// previous one is closed unsynced (a state file on disk holds its groups).
  func switchJournal(to journal: FileDescriptor, finishing compaction: Compaction? = nil) {
    condition.withLock {
      if let previous = self.journal, compaction == nil { retired.append(previous) }
      if let compaction { compactions.append(compaction) }
      self.journal = journal
      condition.broadcast()
    }
  }

  /// How many compactions are done (well or not).
  var finished: Int { condition.withLock { finishedCount } }

  /// Waits until `count` compactions are done: for a whole save while one is under way.
  func waitUntilFinished(_ count: Int) {
    condition.withLock {
      while finishedCount < count { condition.wait() }
    }
  }

  /// What failed since last asked: acknowledged changes may not be on disk.
  func takeFailures() -> [String] {
    condition.withLock {
      defer { failures.removeAll() }
      return failures
    }
  }

  /// Finishes what is pending (the last fsync included) and ends the thread.
  func stop() {
    condition.withLock {
      stopping = true
      condition.broadcast()
    }
    thread?.join()
    thread = nil
    journal?.close()
    journal = nil
    directory.close()
  }

  private func run() {
    var lastSync: UInt64 = 0
    while true {
      let (work, syncing, closing, done) = condition.withLock {
        () -> ([Compaction], FileDescriptor?, [FileDescriptor], Bool) in
        while !stopping && compactions.isEmpty && !dirty {
          idle = true
          condition.wait()
          idle = false
        }
        // At most one fsync a second; a compaction, or the stop, goes at once.
        while !stopping && compactions.isEmpty && monotonicMicroseconds() < lastSync + StateSyncer.interval {
          condition.wait(until: lastSync + StateSyncer.interval)
        }
        let work = compactions
        compactions.removeAll()
        let syncing = dirty ? journal : nil
        dirty = false
        let closing = retired
        retired.removeAll()
        return (work, syncing, closing, stopping && work.isEmpty && syncing == nil)
      }
      for fd in closing { fd.close() }
      for compaction in work {
        let failure = complete(compaction)
        condition.withLock {
          finishedCount += 1
          if let failure { failures.append(failure) }
          condition.broadcast()
        }
      }
      if let syncing {
        lastSync = monotonicMicroseconds()
        do {
          try syncing.sync(subject: "journal")
        } catch {
          condition.withLock { failures.append("\(error)") }
        }
      }
      if done { return }
    }
  }

  /// Makes a compaction durable; the error, if any. The state file is swapped only once the
  /// journal it ends and its own data are on disk, and the journal started after it is renamed
  /// into place only once the swap is: at every moment the state file on disk and the journals
  /// beside it add up to every group fsynced.
  private func complete(_ compaction: Compaction) -> String? {
    defer { compaction.endedJournal.close() }
    do {
      do {
        try compaction.endedJournal.sync(subject: compaction.journalPath)
      } catch {
        compaction.spare.close()
        throw error
      }
      try FileSystem.swapIn(compaction.spare, as: compaction.statePath, sync: true, directory: directory)
      try FileSystem.rename(compaction.startedJournalPath, to: compaction.journalPath)
      try directory.sync(subject: directoryName(of: compaction.statePath))
      return nil
    } catch {
      return "\(error)"
    }
  }
}
