import Posix
import SectionCore
import SectionClient

/// `sectionctl log`: the daemon's history as a person reads it, `20:41:07  alice (waybar, 4242)
/// opened net`, or as JSON; with `--follow`, each new change as it is saved.
///
/// Following takes two connections: a subscription, whose events say that something changed,
/// and the one that asks `HISTORY FROM` the last revision shown, since an event does not say
/// who made it. A daemon that restarts is waited for, and the changes since are caught up.
struct HistoryLog {
  let runner: Runner
  let count: Int
  let follow: Bool

  private var output: Output { runner.output }
  private var json: Bool { runner.invocation.json }

  func run() throws(ClientError) -> ExitStatus {
    let reply = try runner.connect().request("HISTORY \(count)").succeeded()
    var shown = reply.revision ?? 0
    var users = UserNames()
    if !follow {
      if json {
        output.print(
          JSON.object([
            ("revision", .integer(Int64(shown))),
            ("changes", .array(reply.history.map { HistoryLog.json($0, users: &users) })),
          ]))
      } else {
        for entry in reply.history { output.print(HistoryLog.text(entry, users: &users)) }
      }
      return .success
    }
    for entry in reply.history { show(entry, users: &users) }
    while true {
      do {
        let events = try Client(path: runner.socketPath(), name: "sectionctl-log")
        _ = try events.request(Subscribing.request(after: shown)).succeeded()
        let reader = try runner.connect()
        shown = try showSince(shown, on: reader, users: &users)
        while let event = try events.nextEvent() {
          if case .bye = event { break }
          shown = try showSince(shown, on: reader, users: &users)
        }
      } catch let error where error.exitStatus != .unavailable {
        // The daemon refused, or broke the protocol (a line, a reply or the events before one
        // past the client's bounds): asking again would meet the same.
        throw error
      } catch {
        // The daemon went away: wait for it, then catch up from the last change shown.
      }
      ProcessInfo.sleep(milliseconds: 500)
    }
  }

  /// Prints the changes after `revision`; returns the revision shown last. Changes no longer
  /// kept (more than the daemon keeps were made meanwhile) are said to be missing.
  private func showSince(_ revision: UInt64, on client: Client, users: inout UserNames) throws(ClientError)
    -> UInt64
  {
    let reply = try client.request("HISTORY FROM \(revision)")
    if case .error("GONE", let message) = reply.status {
      let oldest = UInt64(message.prefix { $0 != " " }) ?? revision
      if !json { output.diagnose("changes \(revision + 1) to \(oldest - 1) are no longer kept") }
      return try showSince(max(revision, oldest - 1), on: client, users: &users)
    }
    let history = try reply.succeeded().history
    for entry in history { show(entry, users: &users) }
    return history.last?.revision ?? revision
  }

  private func show(_ entry: HistoryEntry, users: inout UserNames) {
    if json {
      output.print(HistoryLog.json(entry, users: &users))
    } else {
      output.print(HistoryLog.text(entry, users: &users))
    }
  }

  /// `20:41:07  alice (waybar, 4242)  opened net`: today's times alone, older ones with their
  /// date; the name and pid when known; what happened in words.
  static func text(_ entry: HistoryEntry, users: inout UserNames) -> String {
    var when = entry.time
    if let seconds = HistoryClock.seconds(of: entry.time) {
      let time = ProcessInfo.localTime(seconds)
      let today = ProcessInfo.localTime(wallClockSeconds())
      func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
      when = "\(two(time[3])):\(two(time[4])):\(two(time[5]))"
      if time[0..<3] != today[0..<3] { when = "\(time[0])-\(two(time[1]))-\(two(time[2])) " + when }
    }
    var who = entry.uid.map { users.name(of: $0) } ?? "-"
    let client = [entry.name, entry.pid.map(String.init)].compactMap { $0 }
    if !client.isEmpty { who += " (\(client.joined(separator: ", ")))" }
    if entry.via != "socket" { who += " via \(entry.via)" }
    return VisibleText.escape("\(when)  \(who)  \(words(entry.event))") + "\n"
  }

  /// What a change did, in words.
  static func words(_ event: Event) -> String {
    switch event {
    case .opened(_, _, let id): "opened \(id)"
    case .closed(_, _, let id): "closed \(id)"
    case .mode(_, let mode): "switched to \(mode.rawValue) mode"
    case .reload: "reloaded the config"
    case .edited(let edit, _, _, let id): "\(edit.rawValue) \(id)"
    case .moved(_, let from, let to, let id): "moved \(id) from \(from) to \(to)"
    case .items(_, _, let id, let count): "changed the items of \(id) (now \(count))"
    case .state, .bye: ""
    case .other(let text): text
    }
  }

  static func json(_ entry: HistoryEntry, users: inout UserNames) -> JSON {
    func optional<T: BinaryInteger>(_ value: T?) -> JSON { value.map { .integer(Int64($0)) } ?? .null }
    return .object([
      ("revision", .integer(Int64(entry.revision))), ("time", .string(entry.time)),
      ("via", .string(entry.via)),
      ("uid", optional(entry.uid)), ("pid", optional(entry.pid)),
      ("user", entry.uid.map { .string(users.name(of: $0)) } ?? .null),
      ("name", entry.name.map { .string($0) } ?? .null), ("event", JSONRenderer.event(entry.event)),
    ])
  }
}

/// Users' names by uid, each looked up once.
struct UserNames {
  private var known: [UInt32: String] = [:]

  mutating func name(of uid: UInt32) -> String {
    if let name = known[uid] { return name }
    let name = ProcessInfo.userName(of: uid) ?? String(uid)
    known[uid] = name
    return name
  }
}
