import Foundation
import Glibc
import Posix
import SectionClient
import Testing

/// `sectionctl log` as a review found it: following a daemon whose history restarted or that
/// answers numbers out of range, resuming with `--from` and `--since`, telling runs apart with
/// `--name`, and the other commands that name their connections (the shell) or meet a busy daemon.
@Suite(.timeLimit(.minutes(2)))
struct LogTests {
  /// The daemon comes back at a lower revision (its state removed): a new history, said once,
  /// and followed from there; before, 13,773 lines of "no longer kept" and SIGSEGV.
  @Test func aHistoryThatRestartsLowerIsSaidAndFollowed() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    for _ in 0..<6 { _ = try client.request("TOGGLE first") }
    let follower = SectionctlProcess(["--socket", daemon.socketPath, "log", "-f", "-n", "1"])
    try follower.start()
    defer { follower.interrupt(SIGKILL) }
    #expect(try follower.waitForLines(1).last?.hasPrefix("6  ") == true)
    #expect(daemon.stop() == 0)
    for name in try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path)
    where name.hasPrefix("state") {
      try FileManager.default.removeItem(atPath: daemon.directory.file(name))
    }
    try daemon.start()
    try follower.waitFor("the restart said") { $0.stderr.contains("history restarted at revision 0") }
    _ = try daemon.connect().request("OPEN second")
    let lines = try follower.waitForLines(2)
    try #require(lines.count == 2, "\(lines)")
    #expect(lines[1].hasPrefix("1  ") && lines[1].hasSuffix("opened second"), "\(lines)")
    #expect(follower.isRunning)
    #expect(!follower.stderr.contains("no longer kept"), "\(follower.stderr)")
  }

  /// A server answering numbers no daemon sends (a GONE of 0, a revision of 2^64-1) or a GONE
  /// that never moves: a protocol error (status 1), never a trap or endless recursion.
  @Test func outOfRangeNumbersAndAStuckGoneAreProtocolErrors() throws {
    for (gone, expected) in [
      ("ERR GONE 0 nothing\n", "ERR GONE 0 nothing"),
      ("ERR GONE 18446744073709551615 x\n", "ERR GONE 18446744073709551615"),
      ("OK 6\nhistory 18446744073709551615 t socket - - - reload 1\nOK 6\n", "history 18446744073709551615"),
      ("ERR GONE 7 stuck\n", "asked 4 times"),
    ] {
      let peer = try ScriptedPeer()
      peer.script = { _, lines in
        switch lines.last {
        case "HISTORY 20": .answer("OK 6\n")
        case "HISTORY 0": .answer("OK 6\n")
        case "SUBSCRIBE": .answer("state 6 multi -\nOK 6\n!opened 7 0 a\n")
        case "SUBSCRIBE FROM 6": .answer("OK 6\n!opened 7 0 a\n")
        case "HISTORY FROM 6": .answer(gone)
        default: .wait
        }
      }
      let run = try SectionctlRun.run(["--socket", peer.path, "log", "-f"], timeout: 15)
      #expect(run.status == 1, "\(gone): \(run.stderr)")
      #expect(run.stderr.contains(expected), "\(run.stderr)")
      #expect(run.stderr.split(separator: "\n").count < 5, "\(run.stderr)")
    }
    let peer = try ScriptedPeer()
    peer.script = { _, lines in lines.last == "HISTORY 20" ? .answer("OK 18446744073709551615\n") : .wait }
    let json = try SectionctlRun.run(["--socket", peer.path, "--json", "log"])
    #expect(json.status == 1 && json.stderr.contains("PROTOCOL"), "\(json)")
  }

  /// Revisions on every line, `--from` and `--since` to resume, `--name` to tell runs apart.
  @Test func theLogResumesFromARevisionOrATimeAndNamesRuns() throws {
    let daemon = try TestDaemon()
    let socket = ["--socket", daemon.socketPath]
    #expect(try SectionctlRun.run(socket + ["--name", "backup.sh", "open", "first"]).status == 0)
    #expect(try SectionctlRun.run(socket + ["open", "second"]).status == 0)
    #expect(try SectionctlRun.run(socket + ["close", "first", "--name=cron:nightly"]).status == 0)
    let all = try SectionctlRun.run(socket + ["log"])
    try #require(all.lines.count == 3, "\(all)")
    #expect(all.lines.map { $0.prefix(3) } == ["1  ", "2  ", "3  "], "\(all.lines)")
    #expect(
      all.lines[0].contains(" (backup.sh, ") && all.lines[2].contains(" (cron:nightly, "), "\(all.lines)")
    #expect(all.lines[1].contains(" (sectionctl, "), "\(all.lines)")
    let from = try SectionctlRun.run(socket + ["log", "--from", "1"])
    #expect(from.status == 0 && from.lines.map { $0.prefix(3) } == ["2  ", "3  "], "\(from)")
    #expect(try SectionctlRun.run(socket + ["log", "--from", "3"]).lines.isEmpty)
    let ahead = try SectionctlRun.run(socket + ["log", "--from", "9"])
    #expect(ahead.status == 1 && ahead.stderr.contains("at revision 3"), "\(ahead)")
    let json = try SectionctlRun.run(socket + ["--json", "log", "--from", "2"]).json()
    #expect((json["changes"] as? [[String: Any]])?.map { $0["revision"] as? Int } == [3])
    #expect(try SectionctlRun.run(socket + ["log", "--since", "-1h"]).lines.count == 3)
    #expect(try SectionctlRun.run(socket + ["log", "--since", "today", "-n", "1"]).lines.count == 1)
    #expect(try SectionctlRun.run(socket + ["log", "--since", "2999-01-01"]).lines.isEmpty)
    let bad = try SectionctlRun.run(socket + ["log", "--since", "soon"])
    #expect(bad.status == 2 && bad.stderr.contains("YYYY-MM-DD"), "\(bad)")

    let follower = SectionctlProcess(socket + ["log", "-f", "--from", "2", "--name", "tail"])
    try follower.start()
    defer { follower.interrupt(SIGKILL) }
    #expect(try follower.waitForLines(1) == [all.lines[2]])
    _ = try daemon.connect().request("OPEN third")
    #expect(try follower.waitForLines(2)[1].hasPrefix("4  "))

    let watch = try SectionctlRun.run(socket + ["watch", "--from", "1", "--count", "2"])
    #expect(watch.lines == ["opened 2 1 second", "closed 3 0 first"], "\(watch)")
  }

  /// `--history 0`: log says that the daemon keeps no changes and how to keep them.
  @Test func aDaemonThatKeepsNoHistoryIsExplained() throws {
    let daemon = try TestDaemon(arguments: ["--history", "0"])
    let socket = ["--socket", daemon.socketPath]
    let fresh = try SectionctlRun.run(socket + ["log"])
    #expect(fresh.status == 0 && fresh.stdout.isEmpty && fresh.stderr.contains("no changes yet"), "\(fresh)")
    _ = try daemon.connect().request("OPEN first")
    let none = try SectionctlRun.run(socket + ["log"])
    #expect(none.status == 0 && none.stdout.isEmpty, "\(none)")
    #expect(none.stderr.contains("keeps no changes") && none.stderr.contains("--history N"), "\(none)")
  }

  /// The shell's lines are its own (`sectionctl-shell`), and a typed CLIENT NAME names the
  /// ones after it, as one connection would keep it.
  @Test func theShellNamesItsLinesAndTakesATypedName() throws {
    let daemon = try TestDaemon()
    let shell = try SectionctlRun.run(
      ["--socket", daemon.socketPath, "shell"],
      standardInput: "OPEN first\nopen second\nCLIENT NAME mine\nCLOSE first\nclose second\n")
    #expect(shell.status == 0, "\(shell)")
    let log = try SectionctlRun.run(["--socket", daemon.socketPath, "--json", "log"]).json()
    let names = (log["changes"] as? [[String: Any]])?.map { $0["name"] as? String }
    #expect(names == ["sectionctl-shell", "sectionctl-shell", "mine", "mine"], "\(log)")
  }

  /// At --max-clients, what the preamble's reply would have swallowed: `list` says the daemon
  /// is busy (status 5), `pipe` passes the ERR BUSY line on (the web page shows it).
  @Test func aBusyDaemonIsReportedAsBusy() throws {
    let daemon = try TestDaemon(arguments: ["--max-clients", "2"])
    let held = try (0..<2).map { _ in try daemon.connect() }
    for client in held { #expect(try client.request("PING") == ["OK"]) }
    let socket = ["--socket", daemon.socketPath]
    for command in [["list"], ["send", "PING"], ["--json", "status"]] {
      let run = try SectionctlRun.run(socket + command)
      #expect(run.status == 5, "\(command): \(run)")
      #expect(run.stderr.contains("busy"), "\(command): \(run)")
    }
    let piped = try SectionctlRun.run(socket + ["pipe"], standardInput: "LIST\n")
    #expect(piped.status == 5 && piped.lines == ["ERR BUSY too many clients"], "\(piped)")
    #expect(piped.stderr.contains("busy"), "\(piped)")
    // The library's blocking client, named or not.
    for name in ["library", nil] {
      #expect(throws: ClientError.busy(path: daemon.socketPath)) {
        try Client(path: daemon.socketPath, name: name).request("PING")
      }
    }
  }

  /// The async client too: a request on a connection the daemon will not serve fails as busy.
  @Test func aBusyDaemonIsBusyToTheAsyncClient() async throws {
    let daemon = try TestDaemon(arguments: ["--max-clients", "1"])
    let held = try daemon.connect()
    #expect(try held.request("PING") == ["OK"])
    let client = try AsyncClient(path: daemon.socketPath)
    await #expect(throws: ClientError.busy(path: daemon.socketPath)) { try await client.ping() }
  }

  /// A user outside the daemon's group follows through the read-only socket, as watch does,
  /// instead of retrying the control socket with EACCES for ever.
  @Test(.enabled(if: getuid() == 0, "switching users needs root"))
  func anotherUserFollowsThroughTheReadOnlySocket() throws {
    let directory = TemporaryDirectory()
    #expect(chmod(directory.path, 0o755) == 0)
    let daemon = try TestDaemon(directory: directory)
    _ = try daemon.connect().request("OPEN first")
    let output = directory.file("nobody.out")
    #expect(FileManager.default.createFile(atPath: output, contents: nil))
    #expect(chown(output, 65534, 65534) == 0)
    let follower = Process()
    follower.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    follower.arguments = [
      "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/sh", "-c",
      "exec \"$0\" --socket \"$1\" log -f -n 1 >\"$2\" 2>&1", Built.sectionctl, daemon.socketPath, output,
    ]
    follower.environment = ["HOME": "/", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"]
    try follower.run()
    defer {
      kill(follower.processIdentifier, SIGKILL)
      follower.waitUntilExit()
    }
    func printed() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
    let deadline = Date().addingTimeInterval(10)
    while !printed().contains("opened first") && Date() < deadline { usleep(20_000) }
    _ = try daemon.connect().request("OPEN second")
    while !printed().contains("opened second") && Date() < deadline { usleep(20_000) }
    #expect(printed().contains("1  ") && printed().contains("2  "), "\(printed())")
    #expect(
      printed().contains("  -  opened second"), "who is not shown on the read-only socket: \(printed())")
  }
}
