import Glibc
import Posix
import SectionCore

/// Loading at start, and what is done with files that do not load.
///
/// What a crash or a power cut leaves is read as far as it is intact: the state file, then the
/// groups of the journal and of the journal a background compaction started that follow it;
/// a torn last group is dropped. What does not fit is damage, never guessed at:
/// - a state file that cannot be understood: the previous one (the spare) with the journals
///   is tried instead, and every file of the state is set aside together (renamed
///   `….corrupt-<time>`), so that nothing that could recover the data is overwritten;
/// - intact groups that cannot be applied, or that follow a damaged one: replayed up to there,
///   and the journal holding them set aside;
/// - a state file of a newer format: the daemon refuses to start and touches nothing.
/// A start that read anything past the state file saves the whole state durably before it
/// serves (`durableSaveNeeded`), so that the files add up again.
extension StateStore {
  /// A state file this sectiond must not read or set aside.
  struct NewerFormat: Error, CustomStringConvertible {
    let path: String
    let format: Int64

    var description: String {
      "\(path) has format \(format), written by a newer sectiond; this one reads formats 1 to "
        + "\(SavedState.format). Run the newer sectiond, or move the file away to start from the config."
    }
  }

  /// Creates the state file's directory when it is missing (private: it is ours alone), and
  /// refuses one that other users can write, unless `allowInsecure`. Takes the state's lock
  /// (`lockAgainstOthers`) and starts the syncer.
  func prepareDirectory(allowInsecure: Bool) throws {
    let directory = directoryName(of: path)
    try FileSystem.makeDirectories(directory, permissions: 0o700)
    if !allowInsecure, let problem = FileSystem.privateDirectoryProblem(directory) {
      throw StartFailure("unsafe state directory: \(problem); or start with --allow-insecure")
    }
    try lockAgainstOthers()
    try startSyncer(in: directory)
  }

  /// The saved state with the journals replayed, or nil when there is none (or nothing in it
  /// could be recovered: then the daemon starts from the config).
  func load() throws -> SavedState? {
    let spare = path + ".tmp"
    let family = [path, spare, journalPath, nextJournalPath]
    let base: SavedState
    switch try readState(path) {
    case .missing: return nil
    case .loaded(let state): base = state
    case .damaged(let problem):
      let fallback = try readState(spare)
      guard case .loaded(let previous) = fallback else {
        let empty = { (file: String) in
          (try? FileSystem.status(file)).map { $0.isRegularFile && $0.size == 0 } ?? true
        }
        if family.allSatisfy(empty) {
          // What a power cut leaves of files never fsynced (--fsync no): nothing to keep.
          Log.warning(
            "\(path) and the files beside it are empty (a power cut before they reached the disk?); started from the config"
          )
          durableSaveNeeded = true
          return nil
        }
        let why = if case .damaged(let why) = fallback { "unreadable too (\(why))" } else { "missing" }
        try setAside(
          family, because: "\(path) is unreadable (\(problem)), and the previous one, \(spare), is \(why)",
          then: "started from the config")
        return nil
      }
      let (state, notes) = try replayJournals(onto: previous)
      try setAside(
        family,
        because: "\(path) is unreadable (\(problem))",
        then:
          "recovered revision \(state.revision) from \(spare) and the journal\(notes.map { " (\($0))" } ?? "")"
      )
      durableSaveNeeded = true
      return state
    }
    let (state, notes) = try replayJournals(onto: base)
    if let notes { Log.warning(notes) }
    if state != base || FileSystem.exists(nextJournalPath) { durableSaveNeeded = true }
    return state
  }

  private enum Read {
    case missing
    case loaded(SavedState)
    case damaged(String)
  }

  /// The state file at `file`; throws on a newer format and on errors that say nothing
  /// about the file (no permission: the daemon must not start and then overwrite it).
  private func readState(_ file: String) throws -> Read {
    let bytes: [UInt8]
    switch try readFile(file) {
    case .missing: return .missing
    case .damaged(let problem): return .damaged(problem)
    case .bytes(let read): bytes = read
    }
    do {
      return .loaded(try SavedState.decode(bytes))
    } catch {
      if let format = SavedState.newerFormat(in: bytes) { throw NewerFormat(path: file, format: format) }
      return .damaged("\(error)")
    }
  }

  private enum FileRead {
    case missing
    case bytes([UInt8])
    case damaged(String)
  }

  /// The bytes of `file`; damaged when too large, not a regular file, or a symbolic link
  /// (never read through).
  private func readFile(_ file: String) throws -> FileRead {
    do {
      return .bytes(try FileSystem.readFile(file, limit: StateStore.readLimit, followingLinks: false))
    } catch let error as PosixError where error.errno == .noEntry {
      return .missing
    } catch let error as PosixError where error.errno != Errno(EFBIG) && error.errno != Errno(ELOOP) {
      throw error
    } catch {
      return .damaged("\(error)")
    }
  }

  /// `base` with the intact groups of both journals that follow it applied; the warning to
  /// log when some were left out. A journal holding intact groups that were not applied is
  /// set aside.
  private func replayJournals(onto base: SavedState) throws -> (SavedState, String?) {
    var groups: [(revision: UInt64, changes: [Change])] = []
    var authors: [UInt64: SavedAuthor] = [:]
    var notes: [String] = []
    var unusable: [String] = []
    for file in [journalPath, nextJournalPath] {
      switch try readFile(file) {
      case .missing: continue
      case .damaged(let problem):
        notes.append("\(file) is unreadable (\(problem))")
        unusable.append(file)
      case .bytes(let bytes):
        let contents = Journal.decode(bytes)
        groups += contents.groups
        authors.merge(contents.authors) { _, newer in newer }
        guard let stop = contents.stop else { continue }
        if stop.intactGroupsAfter {
          notes.append("\(file) is damaged at \(stop); the groups after it were not replayed")
          unusable.append(file)
        } else {
          notes.append("dropped the torn last group of \(file) (\(stop))")
        }
      }
    }
    let (state, stop) = base.replaying(groups, authors: authors)
    if let stop {
      notes.append("replayed the journal up to revision \(state.revision): \(stop)")
      unusable = [journalPath, nextJournalPath]
    }
    if !unusable.isEmpty {
      try setAside(unusable, because: "journal groups were left out", then: "kept them for inspection")
      durableSaveNeeded = true
    }
    if !notes.isEmpty { durableSaveNeeded = true }
    return (state, notes.isEmpty ? nil : notes.joined(separator: "; "))
  }

  /// Gives each of `files` that exists the name `<file>.corrupt-<time>` too, one time for all,
  /// and logs it: kept for a person to look at, never overwritten. A second name, not a
  /// rename: the files keep their names until the start's durable save replaces them, so that
  /// a power cut before that save finds what this start recovered from, not a state without
  /// the journal's acknowledged groups (a rename may reach the disk before the save does).
  ///
  /// A name already taken (a second set-aside within the same second: a restart loop) gets
  /// the next free `-2`, `-3`... A file that cannot be set aside refuses the start: the save
  /// would overwrite what could still be recovered from it.
  func setAside(_ files: [String], because reason: String, then what: String) throws {
    let present = files.compactMap { file in (try? FileSystem.status(file)).map { (file, $0) } }
    let suffix = StateStore.freeSuffix(".corrupt-\(wallClockSeconds())", for: present.map(\.0))
    for (file, status) in present {
      do {
        // A directory (or anything but a file) has no second name to give, and holds no
        // state to lose: it is renamed, so that the save can put a file in its place.
        if status.isRegularFile {
          try FileSystem.link(file, to: file + suffix)
        } else {
          try FileSystem.rename(file, to: file + suffix)
        }
      } catch {
        throw StartFailure(
          "\(reason), and \(file) cannot be kept aside as \(file + suffix) (\(error)); not started, "
            + "so that nothing overwrites it: copy \(file) elsewhere and remove it, or make room in its directory, then start again"
        )
      }
    }
    let kept = present.map(\.0).joined(separator: ", ")
    Log.warning(
      "\(reason); \(present.isEmpty ? "" : "kept \(kept) aside with the suffix \(suffix) and ")\(what)")
  }

  /// `base`, or `base-2`, `base-3`... the first that no file of `files` has behind its name yet.
  static func freeSuffix(_ base: String, for files: [String]) -> String {
    var suffix = base
    var attempt = 1
    while files.contains(where: { (try? FileSystem.status($0 + suffix)) != nil }) {
      attempt += 1
      suffix = "\(base)-\(attempt)"
    }
    return suffix
  }
}
