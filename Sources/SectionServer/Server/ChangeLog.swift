import Posix
import SectionCore
import Systemd

/// `--log-changes`: each saved group of changes as structured journal entries, one per client
/// whose changes are in it, so that `journalctl -u sectiond SECTIOND_CLIENT_NAME=waybar` answers
/// "who closed my section" long after the history has moved on.
///
/// Made from the saved group's changes and their authors (`SavedGroup`), at the save: the
/// same who and when as the history records. A flood is bounded: at most `burst` entries at
/// once and `perSecond` a second after that (a token bucket); a group past the bound costs a
/// counter and nothing else, and the next entry logged says how many were left out
/// (SECTIOND_SUPPRESSED). Each entry names at most `namedChanges` changes in its MESSAGE and
/// `namedSections` sections in SECTIOND_SECTIONS.
final class ChangeLog {
  static let burst = 200.0
  static let perSecond = 20.0
  static let namedChanges = 10
  static let namedSections = 100

  private var tokens = ChangeLog.burst
  private var refilled = monotonicMicroseconds()
  /// Groups left out since the last entry logged.
  private var suppressed = 0
  /// Sends an entry; the journal outside tests.
  private let send: ([(name: String, value: String)]) -> Void
  private var clock = HistoryClock()

  init(send: @escaping ([(name: String, value: String)]) -> Void = { StructuredLog.send($0) }) {
    self.send = send
  }

  /// Logs `group`, saved with `model` as the state after it; `processName` names an author
  /// that gave no name, as the history does. The entries are made only when they are logged.
  func record(_ group: SavedGroup, after model: SectionModel, processName: (Int32) -> String?) {
    let now = monotonicMicroseconds()
    tokens = min(ChangeLog.burst, tokens + Double(now - refilled) / 1_000_000 * ChangeLog.perSecond)
    refilled = now
    guard tokens >= 1 else {
      suppressed += 1
      return
    }
    // One entry for each client's run of changes: authors that the history shows alike (one
    // process's two connections under one name) are one client to the reader.
    var runs: [(who: HistoryRecord.Who, changes: Range<Int>)] = []
    for run in group.runs {
      let who = HistoryRecord.Who(run.author, processName: processName)
      if let last = runs.last, last.who == who, last.changes.upperBound == run.changes.lowerBound {
        runs[runs.count - 1].changes = last.changes.lowerBound..<run.changes.upperBound
      } else {
        runs.append((who, run.changes))
      }
    }
    guard !runs.isEmpty else { return }
    let ids = group.sectionIDs(after: model)
    let time = clock.string(milliseconds: group.time)
    for run in runs where tokens >= 1 {
      tokens -= 1
      send(
        ChangeLog.fields(
          run.who, group.changes[run.changes], ids[run.changes], time: time, suppressed: suppressed))
      suppressed = 0
    }
  }

  /// The entry of one client's changes in a group; `ids` are the sections they name.
  static func fields(
    _ who: HistoryRecord.Who, _ changes: ArraySlice<Change>, _ ids: ArraySlice<String?>, time: String,
    suppressed: Int
  ) -> [(name: String, value: String)] {
    let (first, last) = (changes.first!.revision, changes.last!.revision)
    var sections: [String] = []
    for case let id? in ids where !sections.contains(id) && sections.count < namedSections {
      sections.append(id)
    }
    let credentials = [who.uid.map { "uid \($0)" }, who.pid.map { "pid \($0)" }].compactMap { $0 }
    let name = who.name.isEmpty ? nil : String(decoding: who.name, as: UTF8.self)
    var message =
      (name ?? "someone") + (credentials.isEmpty ? "" : " (\(credentials.joined(separator: ", ")))")
    message +=
      " via \(who.via.rawValue): "
      + zip(changes, ids).prefix(namedChanges).map { words($0, $1) }.joined(separator: ", ")
    if changes.count > namedChanges { message += " and \(changes.count - namedChanges) more" }
    message += changes.count == 1 ? " (revision \(first))" : " (revisions \(first)-\(last))"
    if suppressed > 0 { message += "; \(suppressed) earlier groups not logged (rate limit)" }
    var fields: [(name: String, value: String)] = [
      ("MESSAGE", message), ("PRIORITY", "6"), ("SYSLOG_IDENTIFIER", "sectiond"),
      ("SECTIOND_REV", String(last)), ("SECTIOND_FIRST_REV", String(first)),
      ("SECTIOND_CHANGES", String(changes.count)), ("SECTIOND_VIA", who.via.rawValue),
      ("SECTIOND_TIME", time),
    ]
    if let uid = who.uid { fields.append(("SECTIOND_CLIENT_UID", String(uid))) }
    if let pid = who.pid { fields.append(("SECTIOND_CLIENT_PID", String(pid))) }
    if let name { fields.append(("SECTIOND_CLIENT_NAME", name)) }
    if !sections.isEmpty { fields.append(("SECTIOND_SECTIONS", sections.joined(separator: ","))) }
    if suppressed > 0 { fields.append(("SECTIOND_SUPPRESSED", String(suppressed))) }
    return fields
  }

  /// A change in words, as its event names it: `opened net`, `mode exclusive`, `reload`.
  private static func words(_ change: Change, _ id: String?) -> String {
    let section = id ?? "?"
    return switch change {
    case .opened: "opened \(section)"
    case .closed: "closed \(section)"
    case .mode(_, let mode): "mode \(mode.rawValue)"
    case .reloaded: "reload"
    case .inserted: "inserted \(section)"
    case .deleted: "deleted \(section)"
    case .moved: "moved \(section)"
    case .renamed: "renamed \(section)"
    case .items: "items of \(section)"
    }
  }
}
