@testable import SectionClient
import Posix
import Testing

@testable import SectionCtl

@Suite struct HistoryLogTests {
  @Test func historyLinesParse() throws {
    let line = "history 42 2026-12-03T20:41:07.123Z socket 1000 4242 waybar opened 42 3 net"
    #expect(
      try ProtocolLine.parse(line)
        == .data(
          .history(
            HistoryEntry(
              revision: 42, time: "2026-12-03T20:41:07.123Z", via: "socket", uid: 1000, pid: 4242,
              name: "waybar", event: .opened(revision: 42, index: 3, id: "net")))))
    guard case .data(.history(let blank)) = try ProtocolLine.parse("history 7 t bus - - - mode 7 exclusive")
    else {
      Issue.record("not a history line")
      return
    }
    #expect(blank.uid == nil && blank.pid == nil && blank.name == nil)
    #expect(blank.event == .mode(revision: 7, mode: .exclusive))
    for bad in [
      "history 1 t socket 1 2 x", "history x t socket 1 2 x opened 1 0 a", "history 1 t socket 1 2 x opened",
    ] {
      #expect(throws: ClientError.malformedReply(bad)) { try ProtocolLine.parse(bad) }
    }
  }

  @Test func theLogParsesItsOptions() throws {
    func log(_ arguments: String...) throws(CommandLineError) -> Command {
      try ArgumentParser.parse(arguments).command
    }
    #expect(try log("log") == .log(LogRequest()))
    #expect(try log("log", "-n", "5", "-f") == .log(LogRequest(count: 5, follow: true)))
    #expect(try log("log", "-n50", "--follow") == .log(LogRequest(count: 50, follow: true)))
    #expect(try log("--json", "log", "--lines=3") == .log(LogRequest(count: 3)))
    #expect(try log("log", "--from", "41", "-f") == .log(LogRequest(follow: true, from: 41)))
    #expect(try log("log", "--from=9223372036854775807") == .log(LogRequest(from: UInt64(Int64.max))))
    #expect(try log("watch", "--from", "7") == .watch(count: nil, view: false, from: 7))
    #expect(try ArgumentParser.parse(["--name", "backup.sh", "open", "1"]).name == "backup.sh")
    guard case .log(let since) = try log("log", "--since", "-5min", "-n", "2") else {
      Issue.record("not a log")
      return
    }
    #expect(since.count == 2 && since.since != nil)
    for bad in [
      ["list", "-f"], ["log", "-n", "x"], ["log", "extra"], ["log", "-f", "--timeout", "3"],
      ["log", "--from", "-1"], ["log", "--from", "9223372036854775808"], ["log", "--from", "x"],
      ["log", "--from", "1", "--since", "today"], ["log", "--since", "tomorrowish"], ["list", "--from", "1"],
      ["list", "--since", "today"], ["watch", "--view", "--from", "1"], ["--name", "my panel", "list"],
      ["--name", "", "list"], ["--name", String(repeating: "a", count: 65), "list"],
    ] {
      #expect(throws: CommandLineError.self, "\(bad)") { try ArgumentParser.parse(bad) }
    }
  }

  /// `--since`: the forms journalctl takes that a person types most; others refused.
  @Test func sinceTakesDatesTimesAndTimesAgo() throws {
    let now = 1_800_000_000
    #expect(SinceTime.parse("now", now: now) == now)
    #expect(SinceTime.parse("-5min", now: now) == now - 300)
    #expect(SinceTime.parse("1h ago", now: now) == now - 3600)
    #expect(SinceTime.parse("2 days ago", now: now) == now - 2 * 86400)
    #expect(SinceTime.parse("-30s", now: now) == now - 30)
    let midnight = try #require(SinceTime.parse("today", now: now))
    #expect(ProcessInfo.localTime(midnight)[3...] == [0, 0, 0] && midnight <= now && now - midnight < 86400)
    let yesterday = try #require(SinceTime.parse("yesterday", now: now))
    #expect(ProcessInfo.localTime(yesterday)[3...] == [0, 0, 0] && midnight - yesterday >= 82800)
    let date = try #require(SinceTime.parse("2026-12-03", now: now))
    #expect(ProcessInfo.localTime(date) == [2026, 12, 3, 0, 0, 0])
    let time = try #require(SinceTime.parse("2026-12-03 20:41", now: now))
    #expect(ProcessInfo.localTime(time) == [2026, 12, 3, 20, 41, 0])
    let seconds = try #require(SinceTime.parse("2026-12-03T20:41:07", now: now))
    #expect(ProcessInfo.localTime(seconds) == [2026, 12, 3, 20, 41, 7])
    let clock = try #require(SinceTime.parse("08:15", now: now))
    #expect(Array(ProcessInfo.localTime(clock)[..<3]) == Array(ProcessInfo.localTime(now)[..<3]))
    for bad in [
      "", "tomorrow", "2026-02-30", "2026-13-01", "26-12-03", "24:00", "12:60", "-5 fortnights", "5min",
    ] {
      #expect(SinceTime.parse(bad, now: now) == nil, "\(bad)")
    }
  }

  @Test func eachChangeIsALineInWords() {
    var users = UserNames()
    let entry = HistoryEntry(
      revision: 42, time: "2001-02-03T04:05:06.789Z", via: "socket", uid: 0, pid: 4242, name: "waybar",
      event: .opened(revision: 42, index: 3, id: "net"))
    let line = HistoryLog.text(entry, users: &users)
    // Local time, with the date: it is not today.
    #expect(line.hasSuffix("  root (waybar, 4242)  opened net\n"), "\(line)")
    #expect(line.hasPrefix("42  2001-02-0"), "\(line)")
    let blank = HistoryEntry(
      revision: 1, time: "x", via: "reload", uid: nil, pid: nil, name: nil, event: .reload(revision: 1))
    #expect(HistoryLog.text(blank, users: &users) == "1  x  - via reload  reloaded the config\n")
    let escaped = HistoryEntry(
      revision: 1, time: "x", via: "socket", uid: nil, pid: nil, name: nil, event: .other("weird \u{1B}[2J"))
    #expect(!HistoryLog.text(escaped, users: &users).contains("\u{1B}"))
  }
}
