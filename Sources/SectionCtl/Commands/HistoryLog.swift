import Posix
import SectionClient

/// `sectionctl log`: the daemon's history as a person reads it, `42  20:41:07  alice (waybar,
/// 4242)  opened net`, or as JSON; with `--follow`, each new change as it is saved.
///
/// Following subscribes as `watch` does (`Subscriber`, on the socket `watch` chooses: a user
/// outside the daemon's group follows through the read-only socket), and on that connection
/// asks `HISTORY FROM` the last revision shown whenever an event tells of a newer one, since an
/// event does not say who made it. A daemon that restarts is waited for and caught up with; one
/// that came back at a lower revision (its state file removed or set aside, `--no-state`) has
/// a new history, which is said, and followed from there.
struct HistoryLog {
  let runner: Runner
  let request: LogRequest

  private var output: Output { runner.output }
  private var json: Bool { runner.invocation.json }

  /// `HISTORY FROM` asked again at most this often for one catch-up: each GONE either moves
  /// past changes no longer kept or finds the history restarted, so two suffice for a daemon;
  /// one that keeps answering GONE is not followed for ever.
  static let catchUpAttempts = 4

  func run() throws(ClientError) -> ExitStatus {
    if request.follow { return try follow() }
    let client = try runner.connect()
    let (changes, revision) = try listing(on: client)
    var users = UserNames()
    if json {
      output.print(
        JSON.object([
          ("revision", .integer(Int64(clamping: revision))),
          ("changes", .array(changes.map { HistoryLog.json($0, users: &users) })),
        ]))
    } else {
      for entry in changes { output.print(HistoryLog.text(entry, users: &users)) }
    }
    return .success
  }

  /// The first changes to print, as `-n`, `--from` and `--since` pick them, and the revision
  /// they reach. An empty history is explained (no changes yet, or none kept: `--history 0`).
  private func listing(on client: Client) throws(ClientError) -> (changes: [HistoryEntry], revision: UInt64) {
    var changes: [HistoryEntry]
    let revision: UInt64
    if let from = request.from {
      (changes, revision) = try catchUp(after: from, on: client, following: request.follow)
    } else {
      let count = request.since == nil ? request.count ?? LogRequest.defaultCount : HistoryLog.everything
      let reply = try client.perform(Request<[HistoryEntry]>.history(last: count).asReply).succeeded()
      (changes, revision) = (reply.history, reply.revision ?? 0)
      if let since = request.since {
        changes = changes.filter { (HistoryTime.seconds(of: $0.time) ?? Int.max) >= since }
      } else if changes.isEmpty && !json {
        explainEmpty(revision: revision)
      }
    }
    if let count = request.count, changes.count > count { changes.removeFirst(changes.count - count) }
    return (changes, revision)
  }

  /// `HISTORY <n>` for every change the daemon keeps: `-n`'s and `sectiond --history`'s limit.
  static let everything = 100_000

  /// An empty history at revision 0 is a daemon no one changed yet; past it, one that keeps no
  /// changes, which a person would otherwise take for a log that is broken.
  private func explainEmpty(revision: UInt64) {
    if revision == 0 {
      output.diagnose("no changes yet: the daemon is at revision 0")
    } else {
      output.diagnose(
        "the daemon keeps no changes (it is at revision \(revision)): it was started with --history 0, "
          + "or restarted since by a sectiond that kept none; start it with --history N (1000 by default) to keep them"
      )
    }
  }

  /// Lists the changes as `run` does, then each new one, until interrupted (status 0).
  private func follow() throws(ClientError) -> ExitStatus {
    ProcessInfo.exitSuccessfullyOnInterrupt()
    var users = UserNames()
    var shown = request.from
    let path = runner.readingPath()
    try Subscriber(path: path, name: runner.clientName, after: request.from).run(
      news: { Watcher.report($0, path: path, to: output) },
      handle: { update, client throws(ClientError) in
        let changes: [HistoryEntry]
        switch update {
        case .subscribed(let snapshot):
          guard let last = shown else {
            // The first subscription: the listing `log` alone prints.
            let listing = try listing(on: client)
            changes = listing.changes
            shown = listing.revision
            break
          }
          if snapshot.revision < last {
            restarted(at: snapshot.revision, shown: last)
            shown = snapshot.revision
            return false
          }
          let caught = try catchUp(after: last, on: client, following: true)
          changes = caught.changes
          shown = caught.revision
        case .event(let event):
          guard let revision = event.revision, let last = shown, revision > last else { return false }
          let caught = try catchUp(after: last, on: client, following: true)
          changes = caught.changes
          shown = caught.revision
        }
        for entry in changes { show(entry, users: &users) }
        return false
      })
    return .success
  }

  /// The changes after `revision` (`HISTORY FROM`) and the revision they reach. A GONE is
  /// answered by going on without what is no longer kept (saying so), or, when the daemon is
  /// behind `revision`, by following its new history from where it is (`following`), which
  /// without --follow is an error. A loop, asking at most `catchUpAttempts` times: a server
  /// whose GONE never moves ends it with a protocol error.
  private func catchUp(after revision: UInt64, on client: Client, following: Bool) throws(ClientError)
    -> (changes: [HistoryEntry], revision: UInt64)
  {
    var after = revision
    for _ in 0..<HistoryLog.catchUpAttempts {
      let reply = try client.perform(Request<[HistoryEntry]>.history(after: after).asReply)
      guard let oldest = reply.oldestKept else {
        let succeeded = try reply.succeeded()
        return (succeeded.history, max(after, succeeded.revision ?? after))
      }
      if oldest - 1 > after {
        // `oldest` is at least 1 and at most 2^63 (checked as the line was read): no overflow.
        output.diagnose(
          oldest - 1 == after + 1
            ? "change \(after + 1) is no longer kept"
            : "changes \(after + 1) to \(oldest - 1) are no longer kept")
        after = oldest - 1
        continue
      }
      let current =
        try client.perform(Request<[HistoryEntry]>.history(last: 0).asReply).succeeded().revision ?? 0
      if current >= after {
        // The daemon keeps no record of the changes after `after` (its history does not reach its state).
        if current > after {
          output.diagnose("changes \(after + 1) to \(current) are not in the daemon's history")
        }
        after = current
        continue
      }
      guard following else {
        throw .daemon(
          code: "GONE",
          message: "the daemon is at revision \(current): there are no changes after \(after) yet; "
            + "'sectionctl log' shows the last ones")
      }
      restarted(at: current, shown: after)
      after = current
    }
    throw .malformedReply(
      "ERR GONE to HISTORY FROM \(after), asked \(HistoryLog.catchUpAttempts) times without getting further")
  }

  /// A daemon back at a lower revision than the one shown last has a history of its own.
  private func restarted(at revision: UInt64, shown: UInt64) {
    output.diagnose(
      "the daemon's history restarted at revision \(revision) (revision \(shown) was shown last: "
        + "its state was removed or set aside, or it runs without one); following from there")
  }

  private func show(_ entry: HistoryEntry, users: inout UserNames) {
    if json {
      output.print(HistoryLog.json(entry, users: &users))
    } else {
      output.print(HistoryLog.text(entry, users: &users))
    }
  }

  /// `42  20:41:07  alice (waybar, 4242)  opened net`: the revision (where `--from` resumes);
  /// today's times alone, older ones with their date; the name and pid when known; what
  /// happened in words.
  static func text(_ entry: HistoryEntry, users: inout UserNames) -> String {
    var when = entry.time
    if let seconds = HistoryTime.seconds(of: entry.time) {
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
    return VisibleText.escape("\(entry.revision)  \(when)  \(who)  \(words(entry.event))") + "\n"
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
      ("revision", .integer(Int64(clamping: entry.revision))), ("time", .string(entry.time)),
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

extension CommandSpec {
  /// `sectionctl log`.
  static let log = CommandSpec(
    usage: ["log [--json] [-n N] [--from REV|--since TIME] [-f|--follow]"],
    summary: "who changed what, and when: the last changes the daemon keeps",
    details: """
      The daemon keeps its last changes (sectiond --history, 1000 by default) with when each was
      made, how (socket, bus, reload) and by whom; log prints them oldest first:
        42  20:41:07  alice (waybar, 4242)  opened net
      the revision, the time in local time (with the date when not today), the user and the
      client's name (CLIENT NAME or --name, else its process name) and pid, and the change in
      words. On the read-only socket who is not shown. For what is older, ask
      journalctl -u sectiond (--log-changes).
      Options:
        -n, --lines N  how many changes (default 20; with --from or --since, the last N of them)
        --from REV     the changes after revision REV (where the last line read left off)
        --since TIME   the changes made since TIME: 2026-12-03, '2026-12-03 20:41[:07]',
                       20:41 (today), today, yesterday, now, -5min, '1h ago', -2d
        -f, --follow   then print each change as it is made, until interrupted; a daemon
                       back at a lower revision (its state removed) is said, and followed
      With --json: {\"revision\", \"changes\": [{\"revision\", \"time\", \"via\", \"uid\", \"pid\",
      \"user\", \"name\", \"event\": {as watch --json}}]}; with --follow one change object per line.
      """,
    example: "sectionctl log -n 50 --json | jq -r '.changes[] | select(.name == \"waybar\") | .time'",
    check: { (options) throws(CommandLineError) in
      if options.timeout != nil && options.follow {
        throw .usage("--timeout applies to one-shot commands; log waits for the daemon by design")
      }
    },
    parse: { (arguments, options) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .log)
      if options.from != nil && options.since != nil {
        throw .usage("--from and --since each say where log starts; give one")
      }
      return .log(
        LogRequest(count: options.lines, follow: options.follow, from: options.from, since: options.since))
    },
    run: { (runner) throws(CommandLineError) in
      guard case .log(let request) = runner.invocation.command else { preconditionFailure("log runs .log") }
      return try runner.lifting(HistoryLog(runner: runner, request: request).run)
    })
}
