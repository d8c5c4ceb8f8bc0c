import Foundation
import Glibc
import Testing

/// The state file: acknowledged changes survive SIGKILL; damaged files are set aside.
@Suite struct DurabilityTests {
  @Test func acknowledgedChangeSurvivesSigkill() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    #expect(try client.request("TOGGLE second") == ["section 1 second open 8 Second", "OK 1"])
    #expect(try client.request("MODE exclusive") == ["mode exclusive", "OK 2"])
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    let again = try daemon.connect()
    #expect(try again.request("LIST")[1] == "section 1 second open 8 Second")
    #expect(try again.request("MODE") == ["mode exclusive", "OK 2"])
  }

  /// Two daemons on one state file would each save their own list, and a restart would keep
  /// one of them: changes the other acknowledged would be gone. The second refuses to start,
  /// names the first, and touches neither the state nor a socket; the lock goes with the
  /// first's process, so a start right after it was killed takes it.
  @Test func aSecondDaemonOnTheSameStateFileRefusesToStart() throws {
    let first = try TestDaemon()
    #expect(try first.connect().request("INSERT end mine Mine").last == "OK 1")
    let files = [first.statePath, first.statePath + ".journal"]
    let before = try files.map { try String(contentsOfFile: $0, encoding: .utf8) }
    let otherSocket = first.directory.file("other.sock")
    let second = try runCommand(Built.sectiond, ["--socket", otherSocket, "--state", first.statePath])
    #expect(second.status == 1)
    let pid = first.process!.processIdentifier
    #expect(
      second.standardError.contains(
        "another sectiond (pid \(pid)) is using the state file \(first.statePath)"),
      "\(second.standardError)")
    #expect(second.standardError.contains("--state"), "the message names the fix")
    #expect(!FileManager.default.fileExists(atPath: otherSocket))
    #expect(try files.map { try String(contentsOfFile: $0, encoding: .utf8) } == before)
    #expect(try first.connect().request("INSERT end more More").last == "OK 2")

    first.stop(signal: SIGKILL)
    let again = try TestDaemon(directory: first.directory)
    #expect(
      try again.connect().request("LIST").suffix(3) == [
        "section 3 mine closed 0 Mine", "section 4 more closed 0 More", "OK 2",
      ])
  }

  @Test func stateIsKeptAcrossAnOrderlyRestart() throws {
    let daemon = try TestDaemon()
    _ = try daemon.connect().request("OPEN third")
    #expect(daemon.stop() == 0)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 1 multi third", "OK 1"])
  }

  @Test func savedStateIsReconciledWithAChangedConfigById() throws {
    let directory = TemporaryDirectory()
    let daemon = try TestDaemon(
      config: #"{"sections":[{"title":"A"},{"title":"B"},{"title":"C"}]}"#, directory: directory)
    let client = try daemon.connect()
    _ = try client.request("OPEN b")
    _ = try client.request("OPEN c")
    daemon.stop()
    _ = directory.write(
      "sections.json", #"{"sections":[{"title":"C"},{"title":"D","open":true},{"title":"B"}]}"#)
    try daemon.start()
    #expect(
      try daemon.connect().request("LIST") == [
        "section 0 c open 0 C", "section 1 d open 0 D", "section 2 b open 0 B", "OK 3",
      ],
      "d, opened by the config at start-up, is a change: one revision")
  }

  /// A state file at the top of the revision range loads, refuses the changes that would pass
  /// it, and is still readable after a restart: nothing is lost.
  @Test func stateAtTheTopOfTheRevisionRangeIsKept() throws {
    let directory = TemporaryDirectory()
    let last = Int64.max - 4
    _ = directory.write(
      "state.json", #"{"format":1,"revision":\#(last),"mode":"multi","sections":{"first":\#(last)}}"#)
    let daemon = try TestDaemon(directory: directory)
    let client = try daemon.connect()
    #expect(try client.request("TOGGLE second").last == "OK \(last + 1)")
    // Unchecked, these four would take the revision to Int64.max + 1, which the reader refuses.
    for _ in 0..<4 {
      let refused = try client.request("TOGGLE third").last ?? ""
      #expect(refused.hasPrefix("ERR INTERNAL the revision is at its limit"), "\(refused)")
    }
    // A reload would take a revision too: refused, and logged as refused, not as done.
    let reload = try client.request("RELOAD").last ?? ""
    #expect(reload.hasPrefix("ERR INTERNAL the revision is at its limit"), "\(reload)")
    kill(daemon.process!.processIdentifier, SIGHUP)
    usleep(300_000)  // the signal is handled at the next loop turn
    #expect(try client.request("PING") == ["OK"])
    #expect(daemon.stop() == 0)
    let log = daemon.standardError()
    #expect(!log.contains("reloaded the config"), "\(log)")
    #expect(
      log.components(
        separatedBy: "reload refused, still serving the previous config: the revision is at its limit"
      )
      .count == 3, "RELOAD and SIGHUP: \(log)")
    try daemon.start()
    #expect(
      try daemon.connect().request("SUBSCRIBE") == ["state \(last + 1) multi first,second", "OK \(last + 1)"])
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(!names.contains { $0.hasPrefix("state.json.corrupt-") })
  }

  @Test func corruptStateFileIsSetAsideAndTheDaemonStartsFromTheConfig() throws {
    let directory = TemporaryDirectory()
    _ = directory.write("state.json", "{\"format\":1,\"revis")
    let daemon = try TestDaemon(directory: directory)
    #expect(try daemon.connect().request("LIST").last == "OK 0")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(names.contains { $0.hasPrefix("state.json.corrupt-") })
  }

  @Test func aLeftoverSpareIsNeverTakenForAMissingStateFile() throws {
    let directory = TemporaryDirectory()
    let daemon = try TestDaemon(directory: directory)
    #expect(try daemon.connect().request("OPEN first").last == "OK 1")
    // The first save after a start writes the whole state (later ones append to the journal);
    // each whole save swaps names with the spare, which keeps the file before: here the one
    // the first start saved (revision 0; revision 1 went to the journal).
    daemon.stop()
    try daemon.start()
    #expect(try daemon.connect().request("OPEN second").last == "OK 2")
    let spare = daemon.statePath + ".tmp"
    #expect(try String(contentsOfFile: spare, encoding: .utf8).contains(#""revision":0"#))
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 2 multi first,second", "OK 2"])

    // Without a state file a leftover spare is not taken for one: the config decides.
    daemon.stop()
    try FileManager.default.removeItem(atPath: daemon.statePath)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 0 multi -", "OK 0"])
  }

  @Test func syncSavesAreAcknowledgedAndSurviveSigkill() throws {
    let daemon = try TestDaemon(arguments: ["--sync"])
    let client = try daemon.connect()
    for (revision, request) in ["OPEN first", "TOGGLE third", "CLOSE first"].enumerated() {
      #expect(try client.request(request).last == "OK \(revision + 1)")
    }
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 3 multi third", "OK 3"])
  }
}
