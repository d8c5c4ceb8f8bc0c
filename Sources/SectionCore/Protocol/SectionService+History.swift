/// The history (`HISTORY`, the journal's `by` lines, the state file's lines, `--log-changes`):
/// who made each change and when, kept by `History` once the change is saved.
extension SectionService {
  /// `history` lines of the changes from `position` (the oldest is 0), then `OK <rev>`.
  func appendHistory(from position: Int, access: Access, to buffer: inout [UInt8]) {
    for position in position..<history.count {
      buffer.append("history ")
      history.appendLine(
        position, blankingWho: access == .readOnly, clock: &historyClock, processName: processName,
        to: &buffer)
    }
    appendStatus(to: &buffer)
  }

  /// The journal's `by <time> <via> <uid> <pid> <name>` line: the changes after it in the group
  /// are `author`'s, made at the group's time. One line for a client's run of changes, not one a
  /// change: at 16 in flight a line with each change made the journal ten times longer and the
  /// history cost a TOGGLE half its CPU (perf).
  func journalAuthor() {
    journal.appendText { line in
      line.append("by ")
      historyClock.append(milliseconds: pendingHistory.time, to: &line)
      line.append(" ")
      line.append(contentsOf: author.who(processName))
      line.append("\n")
    }
    authorJournaled = true
  }

  /// `history` with the unsaved changes kept too.
  func keepUnsaved(in history: inout History) {
    history.append(pendingHistory, events: pendingEvents)
  }

  func appendLines(of history: History, from position: Int, blankingWho: Bool, to buffer: inout [UInt8]) {
    for position in position..<history.count {
      history.appendLine(
        position, blankingWho: blankingWho, clock: &historyClock, processName: processName, to: &buffer)
    }
  }

  /// The history lines of the unsaved changes (`<rev> <time> <via> <uid> <pid> <name> <event>`,
  /// each with its LF): for the journal entries of a save (`--log-changes`).
  public func unsavedHistoryLines() -> [UInt8] {
    var unsaved = History(capacity: pendingHistory.count)
    keepUnsaved(in: &unsaved)
    var lines: [UInt8] = []
    appendLines(of: unsaved, from: 0, blankingWho: false, to: &lines)
    return lines
  }

  /// The start moved the revision on from the saved one (`savedRevision`), opening what the
  /// config opens: that is a reload by the daemon in the history, so that it stays unbroken.
  public func recordStart(after savedRevision: UInt64) {
    guard history.capacity > 0, model.revision == savedRevision + 1 else { return }
    var event: [UInt8] = []
    event.appendText { text in
      text.append("!reload ")
      text.appendDecimal(model.revision)
      text.append("\n")
    }
    history.append(revision: model.revision, time: clock(), author: author, event: event)
  }
}
