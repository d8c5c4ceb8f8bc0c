@testable import SectionClient
import SectionCore
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
    #expect(try ArgumentParser.parse(["log"]).command == .log(count: 20, follow: false))
    #expect(try ArgumentParser.parse(["log", "-n", "5", "-f"]).command == .log(count: 5, follow: true))
    #expect(try ArgumentParser.parse(["log", "-n50", "--follow"]).command == .log(count: 50, follow: true))
    #expect(
      try ArgumentParser.parse(["--json", "log", "--lines=3"]).command == .log(count: 3, follow: false))
    #expect(throws: ClientError.self) { try ArgumentParser.parse(["list", "-f"]) }
    #expect(throws: ClientError.self) { try ArgumentParser.parse(["log", "-n", "x"]) }
    #expect(throws: ClientError.self) { try ArgumentParser.parse(["log", "extra"]) }
    #expect(throws: ClientError.self) { try ArgumentParser.parse(["log", "-f", "--timeout", "3"]) }
  }

  @Test func eachChangeIsALineInWords() {
    var users = UserNames()
    let entry = HistoryEntry(
      revision: 42, time: "2001-02-03T04:05:06.789Z", via: "socket", uid: 0, pid: 4242, name: "waybar",
      event: .opened(revision: 42, index: 3, id: "net"))
    let line = HistoryLog.text(entry, users: &users)
    // Local time, with the date: it is not today.
    #expect(line.hasSuffix("  root (waybar, 4242)  opened net\n"), "\(line)")
    #expect(line.hasPrefix("2001-02-0"), "\(line)")
    let blank = HistoryEntry(
      revision: 1, time: "x", via: "reload", uid: nil, pid: nil, name: nil, event: .reload(revision: 1))
    #expect(HistoryLog.text(blank, users: &users) == "x  - via reload  reloaded the config\n")
    let escaped = HistoryEntry(
      revision: 1, time: "x", via: "socket", uid: nil, pid: nil, name: nil, event: .other("weird \u{1B}[2J"))
    #expect(!HistoryLog.text(escaped, users: &users).contains("\u{1B}"))
  }
}
