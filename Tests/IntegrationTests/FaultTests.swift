import Foundation
import Glibc
import Posix
import Testing

/// The state file's file system fails (full, read-only): changes are refused with
/// `ERR INTERNAL state not saved: <reason>` and undone, nobody hears of them, reading goes on,
/// and changes work again once the file system recovers. Mounting a tmpfs needs root.
/// (SIGKILL bursts, descriptor exhaustion and bad clients are in Tests/System/suites/faults.py.)
@Suite(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"), .timeLimit(.minutes(1)))
struct FaultTests {
  @Test func fullFileSystemRefusesChangesUntilSpaceReturns() throws {
    let directory = TemporaryDirectory()
    let tmpfs = try MountedTmpfs(in: directory, size: "64k")
    let daemon = try TestDaemon(arguments: ["--state", tmpfs.file("state.json")], directory: directory)
    var client = try daemon.connect()
    #expect(try client.request("TOGGLE 1") == ["section 1 second open 8 Second", "OK 1"])

    // A start that replayed the journal saves the whole state and empties the journal: the
    // first change after it needs a page the full file system does not have.
    daemon.stop()
    try daemon.start()
    let subscriber = try daemon.connect()
    #expect(try subscriber.request("SUBSCRIBE") == ["state 1 multi second", "OK 1"])
    client = try daemon.connect()
    try FileSystem.remove(tmpfs.file("state.json.tmp"))
    let filler = try tmpfs.fill()
    try expectChangesRefused(client, reason: "No space left on device")
    try expectStateStillAtRevisionOne(daemon, client, statePath: tmpfs.file("state.json"))

    try FileSystem.remove(filler)
    #expect(try client.request("TOGGLE 0") == ["section 0 first open 10 First", "OK 2"])
    // The first event after the refusals is rev 2: none was sent for the refused changes.
    #expect(try subscriber.readEvent() == "!opened 2 0 first")
    #expect(try savedRevision(tmpfs.file("state.json")) == 2)
    daemon.stop()
    #expect(daemon.standardError().contains("state not saved, changes refused"))
  }

  /// The journal is held open for writing, which keeps a file system from being remounted
  /// read-only under a running daemon (EBUSY): it becomes read-only between two runs.
  @Test func readOnlyFileSystemRefusesChangesUntilWritableAgain() throws {
    let directory = TemporaryDirectory()
    let tmpfs = try MountedTmpfs(in: directory, size: "1m")
    let daemon = try TestDaemon(arguments: ["--state", tmpfs.file("state.json")], directory: directory)
    #expect(try daemon.connect().request("TOGGLE 1") == ["section 1 second open 8 Second", "OK 1"])
    daemon.stop()
    try tmpfs.remount("ro")
    try daemon.start()
    let subscriber = try LineClient(path: directory.file("readonly.sock"))
    #expect(try subscriber.request("SUBSCRIBE") == ["state 1 multi second", "OK 1"])
    let client = try daemon.connect()
    try expectChangesRefused(client, reason: "Read-only file system")
    try expectStateStillAtRevisionOne(daemon, client, statePath: tmpfs.file("state.json"))

    try tmpfs.remount("rw")
    #expect(try client.request("MODE exclusive") == ["mode exclusive", "OK 2"])
    #expect(try subscriber.readEvent() == "!mode 2 exclusive")
    #expect(try savedRevision(tmpfs.file("state.json")) == 2)
  }

  /// Every kind of change is refused with the reason, pipelined or not, and the connection stays usable.
  private func expectChangesRefused(_ client: LineClient, reason: String) throws {
    for request in ["TOGGLE 0", "OPEN ALL", "CLOSE ALL", "MODE exclusive", "CLOSE second", "OPEN third"] {
      let reply = try client.request(request)
      #expect(reply.count == 1, "\(request): \(reply)")
      #expect(reply.first?.hasPrefix("ERR INTERNAL state not saved: ") == true, "\(request): \(reply)")
      #expect(reply.first?.contains(reason) == true, "\(request): \(reply)")
    }
    try client.send("TOGGLE 2\nPING\nTOGGLE 0\n")
    #expect(try client.readReply().first?.hasPrefix("ERR INTERNAL state not saved: ") == true)
    #expect(try client.readReply() == ["OK"])
    #expect(try client.readReply().first?.hasPrefix("ERR INTERNAL state not saved: ") == true)
  }

  /// Reading works and shows the state before the refused changes; so does the state file.
  private func expectStateStillAtRevisionOne(_ daemon: TestDaemon, _ client: LineClient, statePath: String)
    throws
  {
    #expect(
      try client.request("LIST") == [
        "section 0 first closed 10 First", "section 1 second open 8 Second", "section 2 third closed 6 Third",
        "OK 1",
      ])
    #expect(try client.request("MODE") == ["mode multi", "OK 1"])
    #expect(try client.request("VIEW").last == "OK 1")
    #expect(try client.request("ITEMS 2").last == "OK 1")
    #expect(try client.request("PING") == ["OK"])
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 1 multi second", "OK 1"])
    #expect(try savedRevision(statePath) == 1)
  }

  /// The revision saved at `path`: the state file's, or that of the last group of changes its
  /// journal holds (`commit <rev>` ends each group).
  private func savedRevision(_ path: String) throws -> Int? {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let journal = (try? String(contentsOfFile: path + ".journal", encoding: .utf8)) ?? ""
    let committed = journal.split(separator: "\n").last { $0.hasPrefix("commit ") }
    return committed.flatMap { Int($0.split(separator: " ")[1]) } ?? object?["revision"] as? Int
  }
}

/// A tmpfs mounted on a fresh directory inside `directory`, lazily unmounted at the end.
final class MountedTmpfs {
  let path: String
  /// Kept so the directory is removed only after the unmount.
  private let directory: TemporaryDirectory

  init(in directory: TemporaryDirectory, size: String) throws {
    self.directory = directory
    path = directory.file("fs")
    guard mkdir(path, 0o700) == 0 else { throw TestFailure("mkdir \(path): \(Errno.current)") }
    let result = try runCommand(
      "/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "sectiond-test", path])
    guard result.status == 0 else {
      throw TestFailure(
        "cannot mount a tmpfs on \(path) (is mounting allowed here?): \(result.standardError)")
    }
  }

  func file(_ name: String) -> String { path + "/" + name }

  func remount(_ option: String) throws {
    let result = try runCommand("/bin/mount", ["-o", "remount,\(option)", path])
    guard result.status == 0 else { throw TestFailure("remount,\(option) \(path): \(result.standardError)") }
  }

  /// Writes a file until the file system has no space left; returns its path.
  func fill() throws -> String {
    let filler = file("filler")
    let fd = try FileDescriptor.open(filler, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o600)
    defer { fd.close() }
    let chunk = [UInt8](repeating: 0x78, count: 4096)
    while true {
      let written = chunk.withUnsafeBytes { Glibc.write(fd.rawValue, $0.baseAddress, $0.count) }
      if written < 0 {
        guard Errno.current == Errno(ENOSPC) else { throw TestFailure("filling \(filler): \(Errno.current)") }
        return filler
      }
    }
  }

  deinit { _ = try? runCommand("/bin/umount", ["-l", path]) }
}
