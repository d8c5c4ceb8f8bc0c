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
        "section 0 c open 0 C", "section 1 d open 0 D", "section 2 b open 0 B", "OK 2",
      ])
  }

  @Test func corruptStateFileIsSetAsideAndTheDaemonStartsFromTheConfig() throws {
    let directory = TemporaryDirectory()
    _ = directory.write("state.json", "{\"format\":1,\"revis")
    let daemon = try TestDaemon(directory: directory)
    #expect(try daemon.connect().request("LIST").last == "OK 0")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(names.contains { $0.hasPrefix("state.json.corrupt-") })
  }

  @Test func saveInterruptedBetweenRemoveAndRenameIsCompletedAtStart() throws {
    let directory = TemporaryDirectory()
    // What a crash leaves between removing state.json and renaming the complete new file.
    _ = directory.write(
      "state.json.tmp",
      #"{"format":1,"revision":5,"mode":"multi","sections":{"first":null,"second":4,"third":null}}"#)
    let daemon = try TestDaemon(directory: directory)
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 5 multi second", "OK 5"])
    #expect(FileManager.default.fileExists(atPath: daemon.statePath))
  }
}
