import Foundation
import Glibc
import Testing

/// The history over real sockets: who made each change, kept across restarts and crashes,
/// bounded, blank on the read-only socket, and `SUBSCRIBE FROM` catching a client up.
@Suite struct HistoryTests {
  /// `<via> <uid> <pid> <name> <event>` of a history line: what follows its revision and time.
  func who(_ line: String) -> String {
    line.split(separator: " ", maxSplits: 3).last.map(String.init) ?? ""
  }

  var me: String { "\(getuid()) \(getpid())" }

  /// This process's name as the kernel keeps it, as a history names a client without one.
  var comm: String {
    let name = (try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8)) ?? ""
    return String(name.dropLast().map { $0.isLetter || $0.isNumber || "._:@-".contains($0) ? $0 : "_" })
  }

  @Test func socketChangesCarryThePeerAndItsName() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    _ = try client.request("TOGGLE first")
    #expect(try client.request("CLIENT NAME waybar") == ["OK"])
    _ = try client.request("MODE exclusive")
    #expect(try client.request("CLIENT NAME bad/name").first?.hasPrefix("ERR SYNTAX ") == true)
    let lines = try client.request("HISTORY")
    #expect(lines.count == 3)
    #expect(who(lines[0]) == "socket \(me) \(comm) opened 1 0 first")
    #expect(who(lines[1]) == "socket \(me) waybar mode 2 exclusive")
    #expect(lines[2] == "OK 2")
    let time = lines[0].split(separator: " ")[2]
    #expect(time.count == 24 && time.hasSuffix("Z") && time.contains("T"), "\(time)")
  }

  /// `--log-changes` without journald wrote nowhere and said nothing. It
  /// says so once, at the start, naming the flag; with journald there it says nothing.
  @Test func logChangesWithoutAJournalSaysSo() throws {
    let daemon = try TestDaemon(arguments: ["--log-changes"])
    #expect(try daemon.connect().request("TOGGLE 0").last == "OK 1")
    daemon.stop()
    let warnings = daemon.standardError().split(separator: "\n").filter { $0.contains("--log-changes") }
    if FileManager.default.fileExists(atPath: "/run/systemd/journal/socket") {
      #expect(warnings.isEmpty, "\(warnings)")
    } else {
      #expect(
        warnings.count == 1 && warnings[0].contains("/run/systemd/journal/socket is missing"), "\(warnings)")
    }
  }

  @Test func theReadOnlySocketSeesNoOne() throws {
    let daemon = try TestDaemon()
    _ = try daemon.connect().request("TOGGLE first")
    let viewer = try LineClient(path: daemon.directory.file("readonly.sock"))
    #expect(try viewer.request("CLIENT NAME viewer") == ["OK"])
    let lines = try viewer.request("HISTORY 1")
    #expect(lines.count == 2 && who(lines[0]) == "socket - - - opened 1 0 first", "\(lines)")
  }

  @Test func reloadsAreTheirRequesters() throws {
    let daemon = try TestDaemon(config: #"{"sections":[{"title":"A"}]}"#)
    let client = try daemon.connect()
    _ = try client.request("CLIENT NAME admin")
    _ = daemon.directory.write("sections.json", #"{"sections":[{"title":"A"},{"title":"B"}]}"#)
    #expect(try client.request("RELOAD") == ["OK 1"])
    _ = daemon.directory.write("sections.json", #"{"sections":[{"title":"C"}]}"#)
    kill(daemon.process!.processIdentifier, SIGHUP)
    var lines: [String] = []
    for _ in 0..<100 where lines.count < 3 {
      lines = try client.request("HISTORY")
      usleep(20_000)
    }
    #expect(lines.dropLast().map(who) == ["reload \(me) admin reload 1", "reload - - SIGHUP reload 2"])
    #expect(lines.last == "OK 2")
  }

  /// The server hands the service a client's author once for each run of its requests: a name
  /// given and a reload asked for in the middle of one pipelined run must still change who the
  /// run's later changes are.
  @Test func aPipelinedRunKeepsItsNamesAndReloads() throws {
    let daemon = try TestDaemon(config: #"{"sections":[{"title":"A"}]}"#)
    let client = try daemon.connect()
    _ = daemon.directory.write("sections.json", #"{"sections":[{"title":"A"},{"title":"B"}]}"#)
    try client.send("TOGGLE a\nCLIENT NAME admin\nRELOAD\nTOGGLE b\nCLIENT NAME late\nTOGGLE a\n")
    let replies = try (0..<6).map { _ in try client.readReply().last ?? "" }
    #expect(replies == ["OK 1", "OK", "OK 2", "OK 3", "OK", "OK 4"])
    let lines = try client.request("HISTORY")
    #expect(
      lines.dropLast().map(who) == [
        "socket \(me) \(comm) opened 1 0 a", "reload \(me) admin reload 2", "socket \(me) admin opened 3 1 b",
        "socket \(me) late closed 4 0 a",
      ])
  }

  @Test func goneAndTheBound() throws {
    let daemon = try TestDaemon(arguments: ["--history", "3"])
    let client = try daemon.connect()
    for _ in 0..<5 { _ = try client.request("TOGGLE first") }
    #expect(try client.request("HISTORY 10").count == 4)
    #expect(
      try client.request("HISTORY FROM 2").map { $0.prefix(9) } == [
        "history 3", "history 4", "history 5", "OK 5",
      ])
    #expect(try client.request("HISTORY FROM 1").first?.hasPrefix("ERR GONE 3 ") == true)
    #expect(try client.request("HISTORY FROM 6").first?.hasPrefix("ERR GONE 3 ") == true)
    let off = try TestDaemon(arguments: ["--history", "0"])
    let other = try off.connect()
    _ = try other.request("TOGGLE first")
    #expect(try other.request("HISTORY") == ["OK 1"])
    #expect(try other.request("SUBSCRIBE FROM 0") == ["state 1 multi first", "OK 1"])
  }

  @Test(arguments: [["--sync"], []])
  func everyAcknowledgedChangeIsInTheHistoryAfterSIGKILL(_ options: [String]) throws {
    let daemon = try TestDaemon(arguments: options)
    let client = try daemon.connect()
    _ = try client.request("CLIENT NAME before")
    for _ in 0..<20 { _ = try client.request("TOGGLE second") }
    let before = try client.request("HISTORY 100")
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    let again = try daemon.connect()
    #expect(try again.request("HISTORY 100") == before)
    #expect(before.count == 21)
  }

  @Test func compactionKeepsTheNewest() throws {
    let daemon = try TestDaemon(arguments: ["--sync", "--history", "200"])
    let client = try daemon.connect()
    // 300 renames of 4,000 bytes pass the journal's MiB: the state file is written whole.
    for round in 0..<300 {
      _ = try client.request("RENAME first \(String(repeating: round % 2 == 0 ? "t" : "u", count: 4000))")
    }
    let before = try client.request("HISTORY 1000")
    #expect(before.count == 201 && before[0].hasPrefix("history 101 "))
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("HISTORY 1000") == before)
    let state = try String(contentsOfFile: daemon.statePath, encoding: .utf8)
    #expect(state.contains("\"history\":["))
  }

  @Test func subscribeFromCatchesUpAcrossARestart() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    #expect(try client.request("OPEN first").last == "OK 1")
    #expect(daemon.stop() == 0)
    try daemon.start()
    let again = try daemon.connect()
    _ = try again.request("OPEN second")
    _ = try again.request("CLOSE first")
    let watcher = try daemon.connect()
    #expect(try watcher.request("SUBSCRIBE FROM 1") == ["OK 1"])
    #expect(try watcher.readEvent() == "!opened 2 1 second")
    #expect(try watcher.readEvent() == "!closed 3 0 first")
    _ = try again.request("OPEN third")
    #expect(try watcher.readEvent() == "!opened 4 2 third")
    #expect(try daemon.connect().request("SUBSCRIBE FROM 9") == ["state 4 multi second,third", "OK 4"])
  }

  @Test func sectionctlNamesItselfAndLogsInTextAndJSON() throws {
    let daemon = try TestDaemon()
    let socket = ["--socket", daemon.socketPath]
    #expect(try SectionctlRun.run(socket + ["open", "first"]).status == 0)
    let piped = try SectionctlRun.run(
      socket + ["pipe"], environment: ["REMOTE_ADDR": "192.0.2.7"], standardInput: "TOGGLE second\n")
    #expect(piped.lines == ["section 1 second open 8 Second", "OK 2"], "the name's OK is not passed on")
    let text = try SectionctlRun.run(socket + ["log"])
    #expect(text.status == 0)
    let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
    #expect(text.lines.count == 2)
    #expect(
      text.lines[0].contains("  \(user) (sectionctl, ") && text.lines[0].hasSuffix(")  opened first"),
      "\(text.lines)")
    #expect(
      text.lines[1].contains("  \(user) (web:192.0.2.7, ") && text.lines[1].hasSuffix(")  opened second"))
    let json = try SectionctlRun.run(socket + ["--json", "log", "-n", "1"]).json()
    #expect(json["revision"] as? Int == 2)
    let changes = try #require(json["changes"] as? [[String: Any]])
    #expect(changes.count == 1)
    #expect(changes[0]["name"] as? String == "web:192.0.2.7" && changes[0]["via"] as? String == "socket")
    #expect(changes[0]["uid"] as? Int == Int(getuid()) && changes[0]["user"] as? String == user)
    #expect((changes[0]["event"] as? [String: Any])?["id"] as? String == "second")
    let viewer = try SectionctlRun.run(socket + ["--readonly", "log", "-n", "1"])
    #expect(viewer.lines.count == 1 && viewer.lines[0].hasSuffix("  -  opened second"), "\(viewer.lines)")
  }

  @Test func followingPrintsEachNewChange() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    _ = try client.request("OPEN first")
    let follower = SectionctlProcess(["--socket", daemon.socketPath, "log", "-f", "-n", "1"])
    try follower.start()
    defer { follower.interrupt(SIGKILL) }
    #expect(try follower.waitForLines(1).last?.hasSuffix("opened first") == true)
    _ = try client.request("CLIENT NAME late")
    _ = try client.request("OPEN second")
    let lines = try follower.waitForLines(2)
    #expect(
      lines.last?.contains("(late, ") == true && lines.last?.hasSuffix("opened second") == true, "\(lines)")
    // A restart is waited for, and what was made meanwhile caught up.
    #expect(daemon.stop() == 0)
    try daemon.start()
    _ = try daemon.connect().request("CLOSE first")
    #expect(try follower.waitForLines(3).last?.hasSuffix("closed first") == true)
  }

  /// A start whose config brought a section (and opened none) changed the list: a reload with a
  /// revision of its own, so that a client catching up hears `!reload` rather than nothing.
  @Test func aStartThatChangedTheListIsAReload() throws {
    let directory = TemporaryDirectory()
    let daemon = try TestDaemon(config: #"{"sections":[{"title":"A"}]}"#, directory: directory)
    #expect(try daemon.connect().request("OPEN a").last == "OK 1")
    #expect(daemon.stop() == 0)
    _ = directory.write("sections.json", #"{"sections":[{"title":"A"},{"title":"B"}]}"#)
    try daemon.start()
    let watcher = try daemon.connect()
    #expect(try watcher.request("SUBSCRIBE FROM 1") == ["OK 1"])
    #expect(try watcher.readEvent() == "!reload 2")
    let last = try daemon.connect().request("HISTORY 1")
    #expect(last.count == 2 && who(last[0]).hasSuffix(" sectiond reload 2"), "\(last)")
  }
}
