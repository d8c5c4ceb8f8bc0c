import Foundation
import Glibc
import Posix
import Testing

/// What the daemon does with state files it did not write as they are: damaged, of a newer
/// format, planted by someone else. Power cuts are in
/// Tests/System/suites/powerloss.py.
@Suite struct RecoveryTests {
  /// A daemon that made three changes, each journaled, and was killed: the state file is at
  /// revision 0 (the start saved it), the journal holds groups 1 to 3 (each its `by` line,
  /// its change and its commit line).
  func killedAfterThreeChanges() throws -> TestDaemon {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    for (revision, request) in ["TOGGLE 0", "INSERT end mine Mine", "TOGGLE 2"].enumerated() {
      #expect(try client.request(request).last == "OK \(revision + 1)")
    }
    daemon.stop(signal: SIGKILL)
    return daemon
  }

  func names(_ daemon: TestDaemon) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path).sorted()
  }

  func journalLines(_ daemon: TestDaemon) throws -> [String] {
    try String(contentsOfFile: daemon.statePath + ".journal", encoding: .utf8).split(separator: "\n").map(
      String.init)
  }

  /// Why `daemon` refused to start.
  func refusal(_ daemon: TestDaemon) -> String {
    do {
      try daemon.start()
      return "it started"
    } catch {
      return "\(error)"
    }
  }

  /// Stops and starts `daemon` once more: a start that replayed the journal saved the whole
  /// state, so the journal and the spare hold nothing needed any more.
  func compact(_ daemon: TestDaemon) throws {
    daemon.stop()
    try daemon.start()
    daemon.stop()
  }

  func write(_ path: String, _ lines: [String]) throws {
    try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
  }

  @Test func aDamagedLastGroupKeepsTheIntactGroupsBeforeIt() throws {
    let daemon = try killedAfterThreeChanges()
    var lines = try journalLines(daemon)
    #expect(lines.count == 9 && lines[7] == "open 3 2" && lines[6].hasPrefix("by "), "\(lines)")
    lines[7] = "open 3 2 and something else"
    try write(daemon.statePath + ".journal", lines)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 2 multi first", "OK 2"])
    #expect(try daemon.connect().request("LIST").contains("section 3 mine closed 0 Mine"))
    daemon.stop()
    #expect(daemon.standardError().contains("dropped the torn last group"))
    #expect(try !names(daemon).contains { $0.contains(".corrupt-") })
  }

  /// Damage before intact groups: the state loads up to the damage, and the journal, which
  /// holds acknowledged groups that could not be applied, is kept for a person to look at.
  @Test func damageInTheMiddleKeepsTheJournalAside() throws {
    let daemon = try killedAfterThreeChanges()
    var lines = try journalLines(daemon)
    #expect(lines[4] == "insert 2 3 mine Mine", "\(lines)")
    lines[4] = "insert 2 3 mine Mone"
    try write(daemon.statePath + ".journal", lines)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 1 multi first", "OK 1"])
    daemon.stop()
    let log = daemon.standardError()
    #expect(log.contains("the groups after it were not replayed"), "\(log)")
    let aside = try names(daemon).filter { $0.hasPrefix("state.json.journal.corrupt-") }
    #expect(aside.count == 1)
    let kept = try String(contentsOfFile: daemon.directory.file(aside[0]), encoding: .utf8)
    #expect(kept.contains("open 3 2\ncommit 3 "), "the intact group is kept: \(kept)")
  }

  /// A damaged state file: the previous one (the spare) and the journal are tried, and every
  /// file of the state is set aside together, so that the next saves overwrite none of them.
  @Test func aDamagedStateFileIsRecoveredFromTheSpareAndEverythingIsSetAside() throws {
    let daemon = try killedAfterThreeChanges()
    try FileManager.default.copyItem(atPath: daemon.statePath, toPath: daemon.statePath + ".tmp")
    try write(daemon.statePath, ["{\"format\":2,\"revis"])
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 3 multi first,third", "OK 3"])
    #expect(try daemon.connect().request("TOGGLE 0").last == "OK 4")
    daemon.stop()
    let log = daemon.standardError()
    #expect(log.contains("recovered revision 3 from \(daemon.statePath).tmp and the journal"), "\(log)")
    let aside = try names(daemon).filter { $0.contains(".corrupt-") }
    #expect(aside.count == 3, "\(aside)")
    for name in ["state.json.corrupt-", "state.json.tmp.corrupt-", "state.json.journal.corrupt-"] {
      #expect(aside.contains { $0.hasPrefix(name) }, "\(name) in \(aside)")
    }
    #expect(Set(aside.map { $0.split(separator: "-").last! }).count == 1, "one suffix for all: \(aside)")
  }

  /// A damaged state set aside twice within one second (a restart loop)
  /// lost the second: its `link` met the first's name, the daemon only warned, and the bytes
  /// stayed in the save's own spare. Every name of the coming seconds is taken beforehand, so
  /// both set-asides meet taken names however slow the machine: each is kept, whole, under a
  /// name of its own, and the files already there are untouched.
  @Test func twoSetAsidesInTheSameSecondAreBothKept() throws {
    let daemon = try TestDaemon()
    daemon.stop()
    let now = Int(Date().timeIntervalSince1970)
    let taken = (now - 1...now + 60).map { "state.json.corrupt-\($0)" }
    for name in taken { try write(daemon.directory.file(name), ["planted \(name)"]) }
    var damaged: [String] = []
    for attempt in 1...2 {
      let bytes = "{\"format\":2,\"revis damaged \(attempt)"
      try write(daemon.statePath, [bytes])
      damaged.append(bytes + "\n")
      try daemon.start()
      #expect(try daemon.connect().request("PING") == ["OK"])
      daemon.stop()
    }
    let aside = try names(daemon).filter { $0.hasPrefix("state.json.corrupt-") && !taken.contains($0) }
    let kept = try aside.map { try String(contentsOfFile: daemon.directory.file($0), encoding: .utf8) }
    #expect(Set(kept) == Set(damaged), "\(aside): \(kept)")
    for name in taken {
      #expect(try String(contentsOfFile: daemon.directory.file(name), encoding: .utf8) == "planted \(name)\n")
    }
  }

  @Test func aNewerFormatRefusesTheStartAndTouchesNothing() throws {
    let directory = TemporaryDirectory()
    let newer = #"{"format":3,"revision":9,"mode":"multi","sections":{},"shape":"new"}"#
    let state = directory.write("state.json", newer)
    let daemon = try TestDaemon(directory: directory, start: false)
    let log = refusal(daemon)
    #expect(log.contains("format 3, written by a newer sectiond"), "\(log)")
    #expect(log.contains("move the file away"), "\(log)")
    #expect(try String(contentsOfFile: state, encoding: .utf8) == newer)
    // The lock is taken before anything is read (it names no state: see StateStore+Lock).
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("state") }
        .sorted()
        == ["state.json", "state.json.lock"])
  }

  /// Item 10: whoever can write the state directory could put a FIFO or a link in place of
  /// the daemon's files: such a directory is refused, with the fix in the message.
  @Test func aStateDirectoryOthersCanWriteIsRefused() throws {
    let directory = TemporaryDirectory()
    chmod(directory.path, 0o777)
    let daemon = try TestDaemon(directory: directory, start: false)
    let log = refusal(daemon)
    #expect(log.contains("can be written by other users"), "\(log)")
    #expect(log.contains("chmod go-w \(directory.path)"), "\(log)")
    #expect(!FileManager.default.fileExists(atPath: daemon.statePath))
    let allowed = try TestDaemon(arguments: ["--allow-insecure"], directory: directory)
    #expect(try allowed.connect().request("TOGGLE 0").last == "OK 1")
  }

  /// A FIFO put in place of the journal while the daemon runs (a directory others could write,
  /// started with --allow-insecure): the next change neither hangs nor writes into it.
  @Test func aFIFOInPlaceOfTheJournalNeverHangsTheDaemon() throws {
    let daemon = try TestDaemon(arguments: ["--allow-insecure"])
    let client = try daemon.connect()
    #expect(try client.request("TOGGLE 0").last == "OK 1")
    let fifo = daemon.directory.file("fifo")
    #expect(mkfifo(fifo, 0o666) == 0)
    try FileSystem.rename(fifo, to: daemon.statePath + ".journal")
    #expect(try client.request("TOGGLE 1").last == "OK 2")
    #expect(try client.request("TOGGLE 2").last == "OK 3")
    #expect(try FileSystem.status(daemon.statePath + ".journal").map { $0.mode & S_IFMT } == S_IFREG)
    try compact(daemon)
    // Planted while it is stopped: read without blocking, set aside, the state kept.
    try FileSystem.remove(daemon.statePath + ".journal")
    #expect(mkfifo(daemon.statePath + ".journal", 0o666) == 0)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE").last == "OK 3")
  }

  /// The journal is held open: moved away by someone (the directory's owner), it is found
  /// replaced by its name within a second, and the whole state saved, so that nothing
  /// acknowledged stays only in the moved file.
  @Test func aJournalMovedAwayIsFoundAndTheWholeStateSaved() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    #expect(try client.request("TOGGLE 0").last == "OK 1")
    try FileSystem.rename(daemon.statePath + ".journal", to: daemon.directory.file("moved"))
    usleep(1_100_000)
    #expect(try client.request("TOGGLE 1").last == "OK 2")
    #expect(try client.request("TOGGLE 2").last == "OK 3")
    daemon.stop(signal: SIGKILL)
    try FileSystem.remove(daemon.directory.file("moved"))
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 3 multi first,second,third", "OK 3"])
  }

  /// Hard links planted at the spare and at the journal: the daemon writes its own files,
  /// never the file they name.
  @Test func hardLinksAtTheSpareOrTheJournalNeverWriteAnotherFile() throws {
    let daemon = try TestDaemon(arguments: ["--allow-insecure"])
    #expect(try daemon.connect().request("TOGGLE 0").last == "OK 1")
    try compact(daemon)
    let victims = [
      daemon.directory.write("victim-spare", "precious\n"),
      daemon.directory.write("victim-journal", "also\n"),
    ]
    for (victim, name) in zip(victims, [".tmp", ".journal"]) {
      try? FileSystem.remove(daemon.statePath + name)
      #expect(link(victim, daemon.statePath + name) == 0)
    }
    try daemon.start()
    let client = try daemon.connect()
    for revision in 2...4 { #expect(try client.request("TOGGLE 1").last == "OK \(revision)") }
    #expect(try String(contentsOfFile: victims[0], encoding: .utf8) == "precious\n")
    #expect(try String(contentsOfFile: victims[1], encoding: .utf8) == "also\n")
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE").last == "OK 4")
  }
}

/// Saves that fail half-way through a client's pipeline (the file system fills up): the
/// part of a group that reached the journal is taken back, so that the journal stays
/// readable, the groups saved once there is space again follow on from the last acknowledged
/// one, and a restart finds exactly what was acknowledged. Mounting a tmpfs needs root.
@Suite(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"), .timeLimit(.minutes(1)))
struct FailedSaveTests {
  @Test func aFileSystemFillingUpMidPipelineKeepsEveryAcknowledgedChangeAndNoOther() throws {
    let directory = TemporaryDirectory()
    let tmpfs = try MountedTmpfs(in: directory, size: "256k")
    let daemon = try TestDaemon(arguments: ["--state", tmpfs.file("state.json")], directory: directory)
    let filler = tmpfs.file("filler")
    #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: 128 << 10)))
    let client = try daemon.connect()
    let title = String(repeating: "t", count: 201)
    // About 230 KB of journal: the file system is full about half-way through.
    try client.send((0..<1000).map { "INSERT end n\($0) \(title)\n" }.joined())
    // A connection's pipelined changes are saved in groups: a group the file system refuses is
    // refused whole, and a later, smaller one may still fit in the journal's last page.
    var acknowledged = 0
    var refused = 0
    for _ in 0..<1000 {
      let reply = try client.readReply()
      if reply.last?.hasPrefix("OK ") == true {
        acknowledged += 1
        #expect(reply.last == "OK \(acknowledged)", "revisions of refused changes are used again")
      } else {
        #expect(reply.last?.hasPrefix("ERR INTERNAL state not saved: ") == true, "\(reply)")
        #expect(reply.last?.contains("No space left on device") == true, "\(reply)")
        refused += 1
      }
    }
    #expect(refused > 100 && acknowledged > 100, "\(acknowledged) acknowledged, \(refused) refused")
    #expect(try client.request("LIST").last == "OK \(acknowledged)")
    try FileSystem.remove(filler)
    for number in 0..<10 {
      #expect(try client.request("INSERT end again\(number) \(title)") == ["OK \(acknowledged + number + 1)"])
    }
    let list = try client.request("LIST")
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("LIST") == list)
  }
}
