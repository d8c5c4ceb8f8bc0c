import Foundation
import Glibc
import Posix
import Testing

/// The built `sectionctl` against a real `sectiond` on a temporary socket, as people and scripts use it.
@Suite(.serialized) final class SectionctlTests {
  let daemon: TestDaemon

  init() throws {
    daemon = try TestDaemon()
  }

  /// `sectionctl --socket <daemon> arguments...`
  private func ctl(_ arguments: String..., environment: [String: String] = [:]) throws -> SectionctlRun {
    try SectionctlRun.run(["--socket", daemon.socketPath] + arguments, environment: environment)
  }

  /// The open/closed column of LIST, asked over a raw connection so sectionctl is not checking itself.
  private func openStates() throws -> [Bool] {
    try daemon.connect().request("LIST").dropLast().map { $0.split(separator: " ")[3] == "open" }
  }

  private func sections(_ json: [String: Any]) -> [[String: Any]] {
    json["sections"] as? [[String: Any]] ?? []
  }

  // MARK: editing

  @Test func editsBuildAList() throws {
    #expect(try ctl("add", "--at", "0", "news", "Latest", "news").status == 0)
    #expect(try ctl("--json", "item", "add", "news", "Call Bob").json()["revision"] as? Int == 2)
    #expect(try ctl("item", "add", "--at", "0", "news", "Pay rent").status == 0)
    #expect(try ctl("item", "mv", "news", "1", "0").status == 0)
    #expect(try ctl("item", "set", "news", "1", "Pay the rent").status == 0)
    #expect(try ctl("rename", "news", "News").status == 0)
    #expect(try ctl("mv", "news", "3").status == 0)
    #expect(try ctl("rm", "second").status == 0)
    #expect(try ctl("item", "rm", "news", "0").status == 0)
    #expect(
      try daemon.connect().request("LIST") == [
        "section 0 first closed 10 First", "section 1 third closed 6 Third", "section 2 news closed 1 News",
        "OK 9",
      ])
    #expect(try daemon.connect().request("ITEMS news") == ["item 2 0 Pay the rent", "OK 9"])
    let refused = try ctl("rm", "nothing")
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("no section \"nothing\""))
  }

  @Test func batchSendsStandardInputAsOneChange() throws {
    let input = "INSERT end todo To do\n\nITEM INSERT todo end Buy milk\nOPEN todo\n"
    let run = try SectionctlRun.run(
      ["--socket", daemon.socketPath, "--json", "batch"], standardInput: input)
    #expect(run.status == 0)
    #expect(try run.json()["revision"] as? Int == 3)
    let failed = try SectionctlRun.run(
      ["--socket", daemon.socketPath, "batch"], standardInput: "DELETE todo\nDELETE nothing\n")
    #expect(failed.status == 1)
    #expect(failed.stderr.contains("line 2: no section \"nothing\""))
    #expect(try daemon.connect().request("LIST").count == 5)
  }

  @Test func watchPrintsEditEvents() throws {
    let watch = SectionctlProcess(["--socket", daemon.socketPath, "watch", "--count", "2"])
    try watch.start()
    try watch.waitForLines(1)
    #expect(try ctl("add", "n", "N").status == 0)
    #expect(try ctl("item", "add", "n", "x").status == 0)
    #expect(try watch.waitForLines(3) == ["state 0 multi -", "inserted 1 3 n", "items 2 3 n 1"])
  }

  // MARK: reading

  @Test func listPrintsATable() throws {
    let run = try ctl("list")
    #expect(run.status == 0)
    #expect(run.stderr == "")
    #expect(run.lines.count == 4)
    #expect(run.lines[0].split(separator: " ") == ["INDEX", "ID", "STATE", "ITEMS", "TITLE"])
    #expect(run.lines[1].split(separator: " ") == ["0", "first", "closed", "10", "First"])
    #expect(run.lines[3].split(separator: " ") == ["2", "third", "closed", "6", "Third"])
    #expect(!run.stdout.contains("\u{1B}"), "no colour when stdout is not a terminal")
  }

  @Test func noCommandMeansList() throws {
    #expect(try ctl().stdout == (try ctl("list")).stdout)
  }

  @Test func listJSON() throws {
    let run = try ctl("--json", "list")
    #expect(run.status == 0)
    let json = try run.json()
    #expect(json["revision"] as? Int == 0)
    let sections = sections(json)
    #expect(sections.map { $0["id"] as? String } == ["first", "second", "third"])
    #expect(sections.map { $0["title"] as? String } == ["First", "Second", "Third"])
    #expect(sections.map { $0["index"] as? Int } == [0, 1, 2])
    #expect(sections.map { $0["open"] as? Bool } == [false, false, false])
    #expect(sections.map { $0["item_count"] as? Int } == [10, 8, 6])
  }

  @Test func viewShowsTheAccordion() throws {
    _ = try daemon.connect().request("OPEN third")
    let run = try ctl("view")
    #expect(run.status == 0)
    #expect(run.lines.count == 3 + 6)
    #expect(run.lines[0].hasPrefix("▸ First"))
    #expect(run.lines[2].hasPrefix("▾ Third"))
    #expect(run.lines[3...].allSatisfy { $0.hasPrefix("    ") })
    #expect(run.lines.last == "    6")
    let plain = try ctl("view", environment: ["LANG": "C"])
    #expect(plain.lines[0].hasPrefix("+ First"))
    #expect(plain.lines[2].hasPrefix("- Third"))
  }

  @Test func viewJSON() throws {
    _ = try daemon.connect().request("OPEN 1")
    let json = try ctl("view", "--json").json()
    #expect(json["revision"] as? Int == 1)
    let sections = sections(json)
    #expect(sections.map { $0["open"] as? Bool } == [false, true, false])
    #expect(sections[1]["items"] as? [String] == ["1", "2", "3", "4", "5", "6", "7", "8"])
    #expect(sections[0]["items"] as? [String] == [])
  }

  @Test func items() throws {
    let run = try ctl("items", "second")
    #expect(run.status == 0)
    #expect(run.lines == ["1", "2", "3", "4", "5", "6", "7", "8"])
    let json = try ctl("--json", "items", "0").json()
    let items = json["items"] as? [[String: Any]] ?? []
    #expect(items.count == 10)
    #expect(items.first?["section"] as? Int == 0)
    #expect(items.map { $0["position"] as? Int } == Array(0..<10))
    #expect(items.map { $0["text"] as? String } == ["1", "2", "3", "4", "5", "6", "1", "2", "3", "4"])
  }

  @Test func status() throws {
    _ = try daemon.connect().request("OPEN first")
    let run = try ctl("status")
    #expect(run.status == 0)
    #expect(run.stdout.contains("socket:    \(daemon.socketPath)"))
    #expect(run.stdout.contains("revision:  1"))
    #expect(run.stdout.contains("mode:      multi"))
    #expect(run.stdout.contains("sections:  3, 1 open (first)"))
    #expect(run.stdout.contains("items:     24, 10 visible"))
    let json = try ctl("status", "--json").json()
    #expect(json["protocol"] as? String == "1")
    #expect((json["daemon_version"] as? String)?.isEmpty == false)
    #expect(json["socket"] as? String == daemon.socketPath)
    #expect(json["revision"] as? Int == 1)
    #expect(json["mode"] as? String == "multi")
    #expect(json["sections"] as? Int == 3)
    #expect(json["open"] as? Int == 1)
    #expect(json["open_ids"] as? [String] == ["first"])
    #expect(json["items"] as? Int == 24)
    #expect(json["visible_items"] as? Int == 10)
  }

  @Test func ping() throws {
    let run = try ctl("ping")
    #expect(run.status == 0)
    #expect(run.stdout.hasPrefix("sectiond on \(daemon.socketPath) answered in "))
    let json = try ctl("--json", "ping").json()
    #expect(json["socket"] as? String == daemon.socketPath)
    #expect((json["milliseconds"] as? Double ?? -1) >= 0)
  }

  // MARK: changing

  @Test func openCloseAndToggleByIndexAndId() throws {
    let open = try ctl("open", "0", "third")
    #expect(open.status == 0)
    #expect(open.lines.count == 2)
    #expect(open.lines[0].split(separator: " ") == ["0", "first", "open", "10", "First"])
    #expect(try openStates() == [true, false, true])
    #expect(try ctl("close", "first").status == 0)
    #expect(try openStates() == [false, false, true])
    #expect(try ctl("toggle", "1", "2").status == 0)
    #expect(try openStates() == [false, true, false])
  }

  @Test func changesInJSON() throws {
    let json = try ctl("--json", "toggle", "second").json()
    #expect(json["revision"] as? Int == 1)
    let sections = sections(json)
    #expect(sections.count == 1)
    #expect(sections.first?["id"] as? String == "second")
    #expect(sections.first?["open"] as? Bool == true)
  }

  /// In exclusive mode opening 2 closes 0: what is printed for several sections is their state
  /// after the last change, as LIST shows it then.
  @Test func severalChangesPrintTheStateAfterTheLast() throws {
    #expect(try ctl("mode", "exclusive").status == 0)
    let text = try ctl("open", "0", "2")
    #expect(text.status == 0, "\(text.stderr)")
    #expect(
      text.lines.map { Array($0.split(separator: " ").prefix(3)) } == [
        ["0", "first", "closed"], ["2", "third", "open"],
      ])
    #expect(try openStates() == [false, false, true])

    let json = try ctl("--json", "open", "1", "0").json()
    #expect(sections(json).map { $0["id"] as? String } == ["second", "first"])
    #expect(sections(json).map { $0["open"] as? Bool } == [false, true])
    #expect(json["revision"] as? Int == Int(try daemon.connect().request("LIST").last!.dropFirst(3)))
  }

  @Test func openAllAndCloseAll() throws {
    let all = try ctl("open", "--all", "--json")
    #expect(all.status == 0)
    #expect(try all.json()["revision"] as? Int == 3)
    #expect(try openStates() == [true, true, true])
    #expect(try ctl("close", "--all").status == 0)
    #expect(try openStates() == [false, false, false])
  }

  @Test func modeShowAndSwitch() throws {
    let shown = try ctl("mode")
    #expect(shown.status == 0)
    #expect(shown.stdout == "multi\n")
    _ = try ctl("open", "0", "1")
    let switched = try ctl("mode", "exclusive", "--json").json()
    #expect(switched["mode"] as? String == "exclusive")
    #expect(try openStates() == [false, true, false])
    #expect(try ctl("open", "2").status == 0)
    #expect(try openStates() == [false, false, true], "exclusive: opening one closes the other")
    let refused = try ctl("open", "--all")
    #expect(refused.status == 1, "OPEN ALL is refused in exclusive mode")
    #expect(refused.stderr.hasPrefix("sectionctl: "))
    #expect(try ctl("--json", "mode").json()["mode"] as? String == "exclusive")
  }

  @Test func reloadReadsTheNewConfig() throws {
    let configured = try TestDaemon(config: #"{"sections":[{"title":"Fruit","items":["apple"]}]}"#)
    _ = configured.directory.write(
      "sections.json",
      #"{"sections":[{"title":"Fruit","items":["apple"]},{"title":"Nuts","items":["pecan"]}]}"#)
    let run = try SectionctlRun.run(["--socket", configured.socketPath, "reload"])
    #expect(run.status == 0, "\(run.stderr)")
    let list = try SectionctlRun.run(["--socket", configured.socketPath, "--json", "list"]).json()
    #expect(sections(list).map { $0["id"] as? String } == ["fruit", "nuts"])

    _ = configured.directory.write("sections.json", #"{"sections":[{"title":"","items":[]}]}"#)
    let refused = try SectionctlRun.run(["--socket", configured.socketPath, "reload"])
    #expect(refused.status == 1)
    #expect(refused.stderr.hasPrefix("sectionctl: "))
    #expect(refused.stderr.count > "sectionctl: \n".count, "the daemon's reason is printed")
  }

  /// Replies much larger than one read, so lines straddle reads and the buffer must carry them over.
  @Test func largeRepliesArriveWhole() throws {
    let items = (0..<5000).map { "\"item number \($0) with some padding text\"" }.joined(separator: ",")
    let large = try TestDaemon(
      config: #"{"sections":[{"id":"big","title":"Big","items":["# + items + #"]}]}"#)
    let run = try SectionctlRun.run(["--socket", large.socketPath, "items", "big"])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.lines.count == 5000)
    #expect(run.lines.last == "item number 4999 with some padding text")
    _ = try large.connect().request("OPEN big")
    let view = try SectionctlRun.run(["--socket", large.socketPath, "--json", "view"]).json()
    #expect((sections(view).first?["items"] as? [String])?.count == 5000)
  }

  @Test func sendPrintsRawReplies() throws {
    let run = try ctl("send", "PING", "TOGGLE 1")
    #expect(run.status == 0)
    #expect(run.lines == ["OK", "section 1 second open 8 Second", "OK 1"])
    let refused = try ctl("send", "OPEN 9", "PING")
    #expect(refused.status == 1)
    #expect(refused.lines.count == 2)
    #expect(refused.lines[0].hasPrefix("ERR NOSECTION "))
    #expect(refused.lines[1] == "OK")
  }

  // MARK: exit statuses and diagnostics

  @Test func daemonErrorExitsOne() throws {
    let run = try ctl("open", "7")
    #expect(run.status == 1)
    #expect(run.stdout == "")
    #expect(run.stderr.hasPrefix("sectionctl: "))
    #expect(run.stderr.contains("7"))
    let partly = try ctl("open", "7", "first")
    #expect(partly.status == 1, "one refusal fails the run")
    #expect(try openStates() == [true, false, false], "the other section still opened")
    #expect(try ctl("items", "nothing").status == 1)
  }

  @Test func usageErrorExitsTwoWithoutContactingTheDaemon() throws {
    for arguments in [
      ["frobnicate"], ["open"], ["items"], ["--bogus"], ["mode", "sideways"], ["toggle", "--all"],
    ] {
      let run = try SectionctlRun.run(["--socket", "/nonexistent/x.sock"] + arguments)
      #expect(run.status == 2, "\(arguments)")
      #expect(run.stdout == "")
      #expect(run.stderr.hasPrefix("sectionctl: "), "\(arguments)")
      #expect(run.stderr.contains("--help"))
    }
  }

  @Test func noDaemonExitsThreeAndSaysSo() throws {
    let directory = TemporaryDirectory()
    let missing = directory.file("control.sock")
    let run = try SectionctlRun.run(["--socket", missing, "list"])
    #expect(run.status == 3)
    #expect(run.stdout == "")
    #expect(run.stderr.hasPrefix("sectionctl: no daemon is listening on \(missing)"))
    #expect(run.stderr.contains("start one with 'sectiond --socket'"))

    // A socket file left behind by a daemon that died: connect is refused.
    let stale = directory.file("stale.sock")
    let listener = try UnixSocket.make()
    try UnixSocket.listen(listener, path: stale)
    listener.close()
    let refused = try SectionctlRun.run(["--socket", stale, "ping"])
    #expect(refused.status == 3)
    #expect(refused.stderr.hasPrefix("sectionctl: no daemon is listening on \(stale)"))

    // Anything else at the path is refused like a stale socket: the message says what it is.
    for (path, kind) in [(directory.write("file", "x"), "a regular file"), (directory.path, "a directory")] {
      let run = try SectionctlRun.run(["--socket", path, "ping"])
      #expect(run.status == 3)
      #expect(
        run.stderr.hasPrefix("sectionctl: cannot connect to \(path): it is \(kind), not a socket"),
        "\(run.stderr)")
    }

    let watch = try SectionctlRun.run(["--socket", missing, "watch"])
    #expect(watch.status == 3, "watch gives up at once when there was never a daemon")
  }

  @Test func socketFromTheEnvironment() throws {
    let run = try SectionctlRun.run(["ping"], environment: ["SECTIOND_SOCKET": daemon.socketPath])
    #expect(run.status == 0, "\(run.stderr)")
    let flagWins = try SectionctlRun.run(
      ["--socket", daemon.socketPath, "ping"], environment: ["SECTIOND_SOCKET": "/nonexistent/x.sock"])
    #expect(flagWins.status == 0)
  }

  @Test func readonlySocketReadsButDoesNotChange() throws {
    let list = try ctl("--readonly", "--json", "list")
    #expect(list.status == 0, "\(list.stderr)")
    #expect(sections(try list.json()).count == 3)
    let change = try ctl("--readonly", "toggle", "0")
    #expect(change.status == 1)
    #expect(change.stderr.hasPrefix("sectionctl: "))
    #expect(try openStates() == [false, false, false])
  }

  @Test func readonlySocketAnywhere() throws {
    let directory = TemporaryDirectory()
    let elsewhere = directory.file("ro.sock")
    let other = try TestDaemon(arguments: ["--readonly-socket", elsewhere])
    let list = try SectionctlRun.run(["--readonly-socket", elsewhere, "--json", "list"])
    #expect(list.status == 0, "\(list.stderr)")
    #expect(sections(try list.json()).count == 3)
    let change = try SectionctlRun.run(["--readonly-socket", elsewhere, "open", "0"])
    #expect(change.status == 1, "the read-only socket refuses changes")
    #expect(change.stderr.contains("control socket"), "\(change.stderr)")
    let both = try SectionctlRun.run(["--socket", other.socketPath, "--readonly-socket", elsewhere, "list"])
    #expect(both.status == 2)
  }

  // MARK: help

  @Test func helpForTheToolAndEveryCommand() throws {
    let commands = [
      "list", "view", "items", "open", "close", "toggle", "mode", "status", "reload", "ping", "watch", "send",
      "help",
    ]
    let general = try SectionctlRun.run(["--help"])
    #expect(general.status == 0)
    #expect(general.stdout.hasPrefix("Usage: sectionctl"))
    for command in commands {
      #expect(general.stdout.contains("\n  \(command) "), "\(command) is listed")
      for form in [[command, "--help"], [command, "-h"], ["help", command]] {
        let run = try SectionctlRun.run(form)
        #expect(run.status == 0, "\(form)")
        #expect(run.stdout.hasPrefix("Usage: sectionctl \(command)"), "\(form)")
        #expect(run.stdout.contains("Example:"), "\(form)")
        #expect(run.stderr == "")
      }
    }
    let version = try SectionctlRun.run(["--version"])
    #expect(version.status == 0)
    #expect(version.stdout.hasPrefix("sectionctl "))
  }

  // MARK: watch

  @Test func watchCountsChangesMadeByAnotherClient() throws {
    let watch = SectionctlProcess(["--socket", daemon.socketPath, "watch", "--count", "3"])
    try watch.start()
    #expect(try watch.waitForLines(1) == ["state 0 multi -"])
    let other = try daemon.connect()
    _ = try other.request("TOGGLE 0")
    _ = try other.request("OPEN second")
    _ = try other.request("CLOSE 0")
    try #require(watch.waitForExit(timeout: 10))
    #expect(watch.status == 0)
    #expect(watch.lines == ["state 0 multi -", "opened 1 0 first", "opened 2 1 second", "closed 3 0 first"])
  }

  @Test func watchJSONIsOneObjectPerLine() throws {
    let watch = SectionctlProcess(["--socket", daemon.socketPath, "--json", "watch", "--count", "2"])
    try watch.start()
    try watch.waitForLines(1)
    let other = try daemon.connect()
    _ = try other.request("MODE exclusive")
    _ = try other.request("TOGGLE third")
    try #require(watch.waitForExit(timeout: 10))
    #expect(watch.status == 0)
    let objects = try watch.lines.map { line in
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
    }
    #expect(objects.map { $0["event"] as? String } == ["state", "mode", "opened"])
    #expect(objects[0]["open"] as? [String] == [])
    #expect(objects[1]["mode"] as? String == "exclusive")
    #expect(objects[2]["revision"] as? Int == 2)
    #expect(objects[2]["id"] as? String == "third")
    #expect(objects[2]["index"] as? Int == 2)
  }

  @Test func watchViewRedrawsTheAccordion() throws {
    let watch = SectionctlProcess(["--socket", daemon.socketPath, "watch", "--view", "--count", "1"])
    try watch.start()
    try watch.waitForLines(3)
    _ = try daemon.connect().request("OPEN third")
    try #require(watch.waitForExit(timeout: 10))
    #expect(watch.status == 0)
    let lines = watch.lines
    #expect(lines.filter { $0.hasPrefix("▸ First") }.count == 2, "drawn before and after the change")
    #expect(lines.contains { $0.hasPrefix("▾ Third") })
    #expect(lines.last == "", "each drawing ends with a blank line when not on a terminal")
  }

  /// A `watch --count 2` that saw one change (`opened 1 0 first`) and then lost its daemon.
  private func watchThatLostItsDaemon() throws -> SectionctlProcess {
    let watch = SectionctlProcess(["--socket", daemon.socketPath, "watch", "--count", "2"])
    try watch.start()
    try watch.waitForLines(1)
    _ = try daemon.connect().request("OPEN 0")
    try watch.waitForLines(2)
    #expect(daemon.stop() == 0)
    try watch.waitFor("lost-connection message") { $0.stderr.contains("reconnecting") }
    return watch
  }

  @Test func watchSurvivesADaemonRestart() throws {
    let watch = try watchThatLostItsDaemon()
    #expect(watch.isRunning, "watch waits for the daemon instead of dying")
    try daemon.start()
    // Made before watch is back (it waits at least 0.1 s between attempts) or after: either
    // way it resumes (SUBSCRIBE FROM 1) and prints the change, and no snapshot.
    _ = try daemon.connect().request("OPEN 2")
    try #require(watch.waitForExit(timeout: 10))
    #expect(watch.status == 0)
    #expect(watch.lines == ["state 0 multi -", "opened 1 0 first", "opened 2 2 third"])
    #expect(watch.stderr.contains("reconnected"))
  }

  @Test func watchPrintsTheStateAfreshWhenTheMissedChangesAreGone() throws {
    let watch = try watchThatLostItsDaemon()
    // The same state and socket, served by a daemon that keeps no history and whose config
    // adds a section at its start (revision 2): watch cannot resume after 1.
    let forgetful = try TestDaemon(
      arguments: ["--history", "0"],
      config:
        #"{"sections":[{"id":"first","title":"First"},{"id":"second","title":"Second"},{"id":"third","title":"Third"},{"id":"fourth","title":"Fourth"}]}"#,
      directory: daemon.directory)
    #expect(try watch.waitForLines(3)[2] == "state 2 multi first")
    _ = try forgetful.connect().request("CLOSE 0")
    try #require(watch.waitForExit(timeout: 10))
    #expect(
      watch.lines == ["state 0 multi -", "opened 1 0 first", "state 2 multi first", "closed 3 0 first"])
  }

  @Test(arguments: [SIGINT, SIGTERM])
  func watchExitsZeroWhenInterrupted(_ signal: Int32) throws {
    let watch = SectionctlProcess(["--socket", daemon.socketPath, "watch"])
    try watch.start()
    try watch.waitForLines(1)
    watch.interrupt(signal)
    try #require(watch.waitForExit(timeout: 5))
    #expect(watch.status == 0)
  }
}
