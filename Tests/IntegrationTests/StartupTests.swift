import Foundation
import Glibc
import Posix
import Testing

/// Start-up: bad configs, socket paths, another daemon, stale sockets, command-line errors.
@Suite struct StartupTests {
  @Test func badConfigIsRefusedNamingFileSectionAndRule() throws {
    let directory = TemporaryDirectory()
    let config = directory.write("bad.json", #"{"sections":[{"title":"Fine"},{"title":"All"}]}"#)
    let result = try runCommand(
      Built.sectiond, ["--config", config, "--socket", directory.file("s"), "--no-state"])
    #expect(result.status == 1)
    #expect(result.standardError.contains(config))
    #expect(result.standardError.contains("section 1 (\"All\")"))
    #expect(result.standardError.contains("reserved"))
    #expect(!FileManager.default.fileExists(atPath: directory.file("s")))
  }

  @Test func checkConfigValidatesWithoutStarting() throws {
    let directory = TemporaryDirectory()
    let good = directory.write("good.json", #"{"mode":"exclusive","sections":[{"title":"A","items":["x"]}]}"#)
    let ok = try runCommand(Built.sectiond, ["--check-config", "--config", good])
    #expect(ok.status == 0)
    #expect(ok.standardOutput.contains("1 section, mode exclusive"))
    let bad = directory.write("bad.json", #"{"sections":[{"title":"A","items":[""]}]}"#)
    let refused = try runCommand(Built.sectiond, ["--check-config", "--config", bad])
    #expect(refused.status == 1)
    #expect(refused.standardError.contains("item 0 is empty"))
  }

  /// The default config is found like the state file: systemd's ConfigurationDirectory= when set
  /// (the units), /etc/sectiond for root, else the user's $XDG_CONFIG_HOME (default ~/.config).
  @Test func defaultConfigFollowsConfigurationDirectoryThenXDG() throws {
    let directory = TemporaryDirectory()
    #expect(chmod(directory.path, 0o755) == 0)  // readable by nobody below
    for subdirectory in ["etc", "config/sectiond", "home/.config/sectiond"] {
      try FileManager.default.createDirectory(
        atPath: directory.file(subdirectory), withIntermediateDirectories: true)
    }
    let bad = #"{"sections":[{"title":"Mine","items":[""]}]}"#
    let fromSystemd = directory.write("etc/sections.json", bad)
    let fromXDG = directory.write("config/sectiond/sections.json", bad)
    let fromHome = directory.write("home/.config/sectiond/sections.json", bad)

    let systemd = try runCommand(
      Built.sectiond, ["--check-config"], environment: ["CONFIGURATION_DIRECTORY": directory.file("etc")])
    #expect(systemd.status == 1)
    #expect(systemd.standardError.contains(fromSystemd))

    func asNobody(_ environment: [String: String]) throws -> CommandResult {
      try runCommand(
        "/usr/bin/setpriv",
        ["--reuid=nobody", "--regid=nogroup", "--clear-groups", Built.sectiond, "--check-config"],
        environment: environment)
    }
    let xdg = try asNobody(["HOME": directory.file("home"), "XDG_CONFIG_HOME": directory.file("config")])
    #expect(xdg.status == 1)
    #expect(xdg.standardError.contains(fromXDG))
    let home = try asNobody(["HOME": directory.file("home")])
    #expect(home.status == 1)
    #expect(home.standardError.contains(fromHome))
    let none = try asNobody(["HOME": "/nonexistent"])
    #expect(none.status == 0)
    #expect(none.standardOutput.contains("built-in demo config"))
  }

  @Test func usageErrorsExitWithTwo() throws {
    let result = try runCommand(Built.sectiond, ["--frobnicate"])
    #expect(result.status == 2)
    #expect(result.standardError.contains("unknown option \"--frobnicate\""))
    #expect(try runCommand(Built.sectiond, ["--help"]).standardOutput.contains("--max-clients"))
    #expect(try runCommand(Built.sectiond, ["--version"]).standardOutput == "sectiond 0.1.0 (protocol 1)\n")
  }

  @Test func socketPathTooLongIsExplained() throws {
    let path = "/tmp/" + String(repeating: "d", count: 120) + "/control.sock"
    let result = try runCommand(Built.sectiond, ["--socket", path, "--no-state"])
    #expect(result.status == 1)
    #expect(result.standardError.contains("holds at most 107"))
  }

  @Test func missingSocketDirectoryIsCreated() throws {
    let directory = TemporaryDirectory()
    let socket = directory.file("a/b/c.sock")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Built.sectiond)
    process.arguments = ["--socket", socket, "--no-state"]
    try process.run()
    defer {
      process.terminate()
      process.waitUntilExit()
    }
    var answered = false
    for _ in 0..<200 where !answered {
      if let client = try? LineClient(path: socket), (try? client.request("PING")) == ["OK"] {
        answered = true
      }
      usleep(20_000)
    }
    #expect(answered)
    #expect(try FileSystem.status(socket)?.mode == 0o140660)
    #expect(try FileSystem.status(directory.file("a/b/c.readonly.sock"))?.mode == 0o140666)
  }

  @Test func secondDaemonOnTheSamePathIsRefused() throws {
    let daemon = try TestDaemon()
    let result = try runCommand(Built.sectiond, ["--socket", daemon.socketPath, "--no-state"])
    #expect(result.status == 1)
    #expect(result.standardError.contains("already listening on \(daemon.socketPath)"))
    #expect(try daemon.connect().request("PING") == ["OK"])
  }

  /// Daemons started on one path at once: never two serving, one of them on a socket file the
  /// other removed. The file appears only once its socket listens (`UnixSocket.listen`);
  /// before, a start that found it bound but not listening yet took it for a dead daemon's
  /// and removed it: both ran in 4-7 of 200 double starts.
  @Test func daemonsStartedTogetherOnOnePathNeverBothServe() throws {
    let directory = TemporaryDirectory()
    let socket = directory.file("c.sock")
    var bothRan = 0
    for round in 0..<150 {
      let daemons = try (0..<3).map { index in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Built.sectiond)
        process.arguments = [
          "--socket", socket, "--readonly-socket", directory.file("r\(round).\(index).sock"), "--no-state",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
      }
      // One serves; the others exit once they find it (a loaded machine: up to 5 s).
      for _ in 0..<250 where daemons.filter(\.isRunning).count > 1 { usleep(20_000) }
      if daemons.filter(\.isRunning).count > 1 { bothRan += 1 }
      for daemon in daemons where daemon.isRunning { daemon.terminate() }
      for daemon in daemons { daemon.waitUntilExit() }
    }
    #expect(bothRan == 0, "two daemons served on one path in \(bothRan) of 150 starts")
  }

  @Test func staleSocketOfADeadDaemonIsReplaced() throws {
    let daemon = try TestDaemon()
    daemon.stop(signal: SIGKILL)
    #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
    try daemon.start()
    #expect(try daemon.connect().request("PING") == ["OK"])
  }

  @Test func orderlyStopRemovesTheSocketsAndSaysGoodbye() throws {
    let daemon = try TestDaemon()
    let subscriber = try daemon.connect()
    _ = try subscriber.request("SUBSCRIBE")
    #expect(daemon.stop(signal: SIGTERM) == 0)
    #expect(try subscriber.readEvent() == "!bye shutdown")
    #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    #expect(!FileManager.default.fileExists(atPath: daemon.directory.file("readonly.sock")))
  }

  @Test func stoppingNeverRemovesASocketFileThatIsNoLongerOurs() throws {
    let directory = TemporaryDirectory()
    let old = try TestDaemon(directory: directory)
    // Someone removes the live daemon's sockets and starts another daemon on the same socket
    // paths (with a state file of its own: one on the same state would be refused).
    try FileManager.default.removeItem(atPath: old.socketPath)
    try FileManager.default.removeItem(atPath: directory.file("readonly.sock"))
    let new = try TestDaemon(arguments: ["--state", directory.file("new.json")], directory: directory)
    #expect(old.stop() == 0)
    #expect(FileManager.default.fileExists(atPath: new.socketPath))
    #expect(try new.connect().request("PING") == ["OK"])
  }
}
