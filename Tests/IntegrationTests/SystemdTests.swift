import Foundation
import Glibc
import Posix
import Testing

/// sd_notify, watchdog, reload, the read-only socket and socket activation, without systemd as PID 1.
@Suite struct SystemdTests {
  @Test func readinessStatusReloadAndStoppingAreReported() throws {
    let directory = TemporaryDirectory()
    let notify = try NotifyRecorder(directory: directory)
    let daemon = try TestDaemon(
      config: #"{"sections":[{"title":"A"}]}"#, environment: ["NOTIFY_SOCKET": notify.path],
      directory: directory,
      start: false)
    try daemon.start()
    let ready = try notify.waitFor("READY=1")
    #expect(ready.contains("STATUS=1 section (0 open)"))
    // READY=1 came only once the socket accepted: the daemon answered right after it.
    #expect(try daemon.connect().request("TOGGLE a") == ["section 0 a open 0 A", "OK 1"])
    try notify.waitFor("STATUS=1 section (1 open)")

    _ = directory.write("sections.json", #"{"sections":[{"title":"A"},{"title":"B"}]}"#)
    kill(daemon.process!.processIdentifier, SIGHUP)
    let reloading = try notify.waitFor("RELOADING=1")
    let stamp = reloading.split(separator: "\n").first { $0.hasPrefix("MONOTONIC_USEC=") }
    let microseconds = UInt64(stamp?.dropFirst("MONOTONIC_USEC=".count) ?? "") ?? 0
    #expect(microseconds > 0 && microseconds <= monotonicMicroseconds())
    let readyCount = { notify.messages.filter { $0.text.contains("READY=1") }.count }
    notify.receive(timeout: 0.5)
    #expect(readyCount() == 2)
    #expect(try daemon.connect().request("LIST").count == 3)

    let client = try daemon.connect()
    #expect(try client.request("RELOAD") == ["OK 2"])
    notify.receive(timeout: 0.5)
    #expect(notify.messages.filter { $0.text.contains("RELOADING=1") }.count == 2)
    #expect(readyCount() == 3)

    kill(daemon.process!.processIdentifier, SIGTERM)
    try notify.waitFor("STOPPING=1")
  }

  /// Pings at a third of the interval, well inside it: measured by the median gap between the
  /// kernel's arrival stamps, which a few late wake-ups on a loaded machine do not move (a 0.48 s
  /// gap at load 6 failed the old check of every gap against 100 ms; how fast belongs in bench).
  @Test func watchdogPingsEveryThirdOfTheInterval() throws {
    let directory = TemporaryDirectory()
    let notify = try NotifyRecorder(directory: directory)
    let interval = 1.5
    let daemon = try TestDaemon(
      environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": String(Int(interval * 1_000_000))],
      directory: directory, start: false)
    // WATCHDOG_PID must name the daemon itself, which is only known once it runs: a wrapper
    // shell sets it to its own pid and then execs the daemon, which keeps that pid.
    try daemon.start(wrappedForWatchdog: true)
    try notify.waitFor("READY=1")
    let start = Date()
    while Date().timeIntervalSince(start) < 2 * interval { notify.receive(timeout: 0.3) }
    // When each ping arrived, as the kernel stamped it.
    let pings = notify.messages.filter { $0.text.contains("WATCHDOG=1") }.map(\.time)
    #expect(pings.count >= 3, "only \(pings.count) pings in \(2 * interval) s")
    let gaps = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }.sorted()
    // A third of the interval (0.5 s); half of it tells that apart from pinging at the interval.
    #expect(gaps.isEmpty || gaps[gaps.count / 2] < interval / 2, "gaps \(gaps)")
  }

  @Test func badConfigOnReloadKeepsServingTheOldSections() throws {
    let directory = TemporaryDirectory()
    let daemon = try TestDaemon(config: #"{"sections":[{"title":"A"}]}"#, directory: directory)
    let subscriber = try daemon.connect()
    _ = try subscriber.request("SUBSCRIBE")
    _ = directory.write("sections.json", #"{"sections":[{"title":"A"},{"title":"A"}]}"#)
    let client = try daemon.connect()
    let refused = try client.request("RELOAD")
    #expect(refused.count == 1 && refused[0].hasPrefix("ERR CONFIG "))
    #expect(refused[0].contains("must be unique"))
    #expect(try client.request("LIST") == ["section 0 a closed 0 A", "OK 0"])
    _ = directory.write("sections.json", #"{"sections":[{"title":"A"},{"title":"B","open":true}]}"#)
    #expect(try client.request("RELOAD") == ["OK 1"])
    #expect(try subscriber.readEvent() == "!reload 1")
  }

  @Test func readOnlySocketServesReadersAndRefusesChanges() throws {
    let daemon = try TestDaemon()
    let reader = try LineClient(path: daemon.directory.file("readonly.sock"))
    #expect(try reader.request("LIST").last == "OK 0")
    #expect(try reader.request("SUBSCRIBE") == ["state 0 multi -", "OK 0"])
    #expect(try reader.request("TOGGLE 0") == ["ERR READONLY TOGGLE changes state; use the control socket"])
    #expect(try reader.request("mode multi") == ["ERR READONLY MODE changes state; use the control socket"])
    #expect(try reader.request("RELOAD").first?.hasPrefix("ERR READONLY") == true)
    #expect(try reader.request("MODE") == ["mode multi", "OK 0"])
    _ = try daemon.connect().request("OPEN 2")
    #expect(try reader.readEvent() == "!opened 1 2 third")
  }

  @Test func socketActivationServesOnInheritedSockets() throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate") else {
      Issue.record("systemd-socket-activate is missing: scripts/deps.sh --test installs the systemd package")
      return
    }
    let directory = TemporaryDirectory()
    let control = directory.file("c.sock")
    let readOnly = directory.file("r.sock")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
    process.arguments = [
      "-l", control, "--fdname=control", "-l", readOnly, "--fdname=readonly",
      Built.sectiond, "--no-state",
    ]
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
      process.terminate()
      process.waitUntilExit()
    }
    var writer: LineClient?
    for _ in 0..<250 where writer == nil {
      writer = try? LineClient(path: control)
      if writer == nil { usleep(20_000) }
    }
    let controlClient = try #require(writer)
    let reader = try LineClient(path: readOnly)
    #expect(try reader.request("SUBSCRIBE") == ["state 0 multi -", "OK 0"])
    #expect(try reader.request("TOGGLE 1") == ["ERR READONLY TOGGLE changes state; use the control socket"])
    #expect(try controlClient.request("TOGGLE 1") == ["section 1 second open 8 Second", "OK 1"])
    #expect(try reader.readEvent() == "!opened 1 1 second")
    // Socket files belong to systemd: the daemon must not remove them when it stops.
    kill(process.processIdentifier, SIGTERM)
    process.waitUntilExit()
    #expect(FileManager.default.fileExists(atPath: control))
  }

  @Test func failureToStartIsReportedToSystemd() throws {
    let directory = TemporaryDirectory()
    let notify = try NotifyRecorder(directory: directory)
    let config = directory.write("bad.json", #"{"sections":[{"title":"A"},{"title":"A"}]}"#)
    let result = try runCommand(
      Built.sectiond, ["--config", config, "--socket", directory.file("c.sock"), "--no-state"],
      environment: ["NOTIFY_SOCKET": notify.path])
    #expect(result.status == 1)
    let status = try notify.waitFor("STATUS=")
    #expect(status.contains("\(config): ") && status.contains("must be unique"))
    #expect(!notify.messages.contains { $0.text.contains("READY=1") })

    let missing = try runCommand(
      Built.sectiond, ["--config", directory.file("nope.json"), "--socket", directory.file("c.sock")],
      environment: ["NOTIFY_SOCKET": notify.path])
    #expect(missing.status == 1)
    #expect(try notify.waitFor("ERRNO=").contains("ERRNO=2"))
  }

  @Test func logLinesCarryTheirPriorityWhenStderrIsTheJournal() throws {
    let directory = TemporaryDirectory()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Built.sectiond)
    process.arguments = ["--socket", directory.file("c.sock"), "--no-state", "--verbose"]
    let pipe = Pipe()
    var info = stat()
    #expect(fstat(pipe.fileHandleForWriting.fileDescriptor, &info) == 0)
    // What systemd sets when it connects stderr to the journal: the stream's device:inode.
    process.environment = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]
    process.standardError = pipe
    try process.run()
    var client: LineClient?
    for _ in 0..<250 where client == nil {
      client = try? LineClient(path: directory.file("c.sock"))
      if client == nil { usleep(20_000) }
    }
    #expect(try #require(client).request("PING") == ["OK"])
    client = nil
    usleep(100_000)
    process.terminate()
    process.waitUntilExit()
    try pipe.fileHandleForWriting.close()
    let lines = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      .split(separator: "\n")
    #expect(lines.contains { $0.hasPrefix("<5>serving 3 sections") }, "\(lines)")
    // The peer's credentials, at debug level.
    #expect(
      lines.contains { $0.hasPrefix("<7>client connected on the control socket: uid \(getuid()), pid ") })
    #expect(!lines.contains { !$0.hasPrefix("<") })
  }
}
