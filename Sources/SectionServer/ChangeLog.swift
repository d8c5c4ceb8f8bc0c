import Posix
import SectionCore
import Systemd

/// `--log-changes`: each saved group of changes as structured journal entries, one per client
/// whose changes are in it, so that `journalctl -u sectiond SECTIOND_CLIENT_NAME=waybar` answers
/// "who closed my section" long after the history has moved on.
///
/// Read from the group's history lines (the same record HISTORY serves), at the save. A flood
/// is bounded: at most `burst` entries at once and `perSecond` a second after that (a token
/// bucket); a group past the bound costs a counter and nothing else, and the next entry logged
/// says how many were left out (SECTIOND_SUPPRESSED). Each entry names at most `namedChanges`
/// changes in its MESSAGE and `namedSections` sections in SECTIOND_SECTIONS.
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

  init(send: @escaping ([(name: String, value: String)]) -> Void = { StructuredLog.send($0) }) {
    self.send = send
  }

  /// The saved group whose history lines (`<rev> <time> <via> <uid> <pid> <name> <event>`,
  /// each with its LF) `render` gives: rendered only when the entry is to be logged.
  func record(_ render: () -> [UInt8]) {
    let now = monotonicMicroseconds()
    tokens = min(ChangeLog.burst, tokens + Double(now - refilled) / 1_000_000 * ChangeLog.perSecond)
    refilled = now
    guard tokens >= 1 else {
      suppressed += 1
      return
    }
    var runs: [[[Substring]]] = []
    for line in render().split(separator: 0x0A) {
      let words = String(decoding: line, as: UTF8.self).split(separator: " ", maxSplits: 6)
      guard words.count == 7 else { continue }
      if let last = runs.last?.last, last[2...5] == words[2...5] {
        runs[runs.count - 1].append(words)
      } else {
        runs.append([words])
      }
    }
    for run in runs where tokens >= 1 {
      tokens -= 1
      send(ChangeLog.fields(run, suppressed: suppressed))
      suppressed = 0
    }
  }

  /// The entry of one client's changes in a group: words are those of its history lines.
  static func fields(_ run: [[Substring]], suppressed: Int) -> [(name: String, value: String)] {
    let first = run[0]
    let (via, uid, pid, name) = (String(first[2]), first[3], first[4], first[5])
    let events = run.map { $0[6].split(separator: " ") }
    var sections: [String] = []
    for event in events {
      guard let id = sectionID(event), !sections.contains(id), sections.count < namedSections else {
        continue
      }
      sections.append(id)
    }
    let who = [uid == "-" ? nil : "uid \(uid)", pid == "-" ? nil : "pid \(pid)"].compactMap { $0 }
    var message =
      (name == "-" ? "someone" : String(name)) + (who.isEmpty ? "" : " (\(who.joined(separator: ", ")))")
    message += " via \(via): " + events.prefix(namedChanges).map(words).joined(separator: ", ")
    if events.count > namedChanges { message += " and \(events.count - namedChanges) more" }
    let revisions = run.count == 1 ? "revision \(first[0])" : "revisions \(first[0])-\(run[run.count - 1][0])"
    message += " (\(revisions))"
    if suppressed > 0 { message += "; \(suppressed) earlier groups not logged (rate limit)" }
    var fields: [(name: String, value: String)] = [
      ("MESSAGE", message), ("PRIORITY", "6"), ("SYSLOG_IDENTIFIER", "sectiond"),
      ("SECTIOND_REV", String(run[run.count - 1][0])), ("SECTIOND_FIRST_REV", String(first[0])),
      ("SECTIOND_CHANGES", String(run.count)), ("SECTIOND_VIA", via), ("SECTIOND_TIME", String(first[1])),
    ]
    if uid != "-" { fields.append(("SECTIOND_CLIENT_UID", String(uid))) }
    if pid != "-" { fields.append(("SECTIOND_CLIENT_PID", String(pid))) }
    if name != "-" { fields.append(("SECTIOND_CLIENT_NAME", String(name))) }
    if !sections.isEmpty { fields.append(("SECTIOND_SECTIONS", sections.joined(separator: ","))) }
    if suppressed > 0 { fields.append(("SECTIOND_SUPPRESSED", String(suppressed))) }
    return fields
  }

  /// The id of the section an event names (`opened REV INDEX ID`, `moved REV FROM TO ID`,
  /// `items REV INDEX ID COUNT`...); nil for a mode switch or a reload.
  private static func sectionID(_ event: [Substring]) -> String? {
    switch event.first {
    case "moved": event.count > 4 ? String(event[4]) : nil
    case "mode", "reload", nil: nil
    default: event.count > 3 ? String(event[3]) : nil
    }
  }

  /// An event in words: `opened net`, `mode exclusive`, `reload`.
  private static func words(_ event: [Substring]) -> String {
    guard let kind = event.first else { return "" }
    switch kind {
    case "mode": return "mode \(event.count > 2 ? event[2] : "")"
    case "reload": return "reload"
    case "items": return "items of \(sectionID(event) ?? "?")"
    default: return "\(kind) \(sectionID(event) ?? "?")"
    }
  }
}
