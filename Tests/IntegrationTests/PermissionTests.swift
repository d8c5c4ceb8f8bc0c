import Foundation
import Glibc
import Posix
import Testing

/// Who may do what: socket modes, another user on each socket, a root daemon's refusal of
/// files others could have written, and symbolic links planted where the state file goes.
/// Running as another user and the root-only checks need root.
@Suite(
  .enabled(if: getuid() == 0, "switching users and the root-only checks need root"), .timeLimit(.minutes(1)))
struct PermissionTests {
  @Test func anotherUserCanReadAndSubscribeButNotChangeAnything() throws {
    let directory = TemporaryDirectory()
    #expect(chmod(directory.path, 0o755) == 0)  // traversable by nobody, as /run/sectiond is
    let daemon = try TestDaemon(directory: directory)
    let control = daemon.socketPath
    let readOnly = directory.file("readonly.sock")
    #expect(try FileSystem.status(control)?.mode == 0o140660)
    #expect(try FileSystem.status(readOnly)?.mode == 0o140666)

    let who = try runAsNobody("id -u")
    #expect(who.standardOutput == "65534\n", "\(who)")

    let refused = try runAsNobody("printf 'TOGGLE 0\\n' | socat -t 2 - UNIX-CONNECT:\(control)")
    #expect(refused.status != 0)
    #expect(refused.standardError.contains("Permission denied"), "\(refused)")
    #expect(refused.standardOutput.isEmpty)

    // While nobody is subscribed on the read-only socket, root changes section 2 from outside.
    let changer = Process()
    changer.executableURL = URL(fileURLWithPath: "/bin/sh")
    changer.arguments = [
      "-c",
      "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.15; printf 'TOGGLE 2\\n' | socat -t 1 - UNIX-CONNECT:\(control); done",
    ]
    changer.standardOutput = FileHandle.nullDevice
    try changer.run()
    defer { changer.waitUntilExit() }
    let reader = try runAsNobody(
      "(printf 'LIST\\nSUBSCRIBE\\nTOGGLE 0\\nMODE exclusive\\nRELOAD\\nPING\\n'; sleep 1) | socat -t 1 - UNIX-CONNECT:\(readOnly)"
    )
    #expect(reader.status == 0, "\(reader)")
    let lines = reader.standardOutput.split(separator: "\n").map(String.init)
    #expect(
      lines.starts(with: ["section 0 first closed 10 First", "section 1 second closed 8 Second"]), "\(lines)")
    #expect(lines.contains { $0.hasPrefix("state ") })
    #expect(lines.contains("ERR READONLY TOGGLE changes state; use the control socket"))
    #expect(lines.contains("ERR READONLY MODE changes state; use the control socket"))
    #expect(lines.contains { $0.hasPrefix("ERR READONLY RELOAD") })
    #expect(
      lines.contains { $0.hasPrefix("!opened ") && $0.hasSuffix(" 2 third") }, "no event seen: \(lines)")
    changer.waitUntilExit()
    // Nothing nobody asked for happened: only section 2 ever changed.
    let list = try daemon.connect().request("LIST")
    #expect(list[0] == "section 0 first closed 10 First")
    #expect(try daemon.connect().request("MODE").first == "mode multi")
  }

  /// Every local user may ask STATUS on the read-only socket, and must not learn from it who
  /// else is connected or when, nor the process and paths the unit hides.
  @Test func readOnlyStatusTellsNothingAboutOtherClients() throws {
    let directory = TemporaryDirectory()
    let daemon = try TestDaemon(directory: directory)
    let viewer = try LineClient(path: directory.file("readonly.sock"))
    let withoutUptime = { (reply: [String]) in reply.filter { !$0.hasPrefix("status uptime ") } }
    let before = try viewer.request("STATUS")
    #expect(
      before.dropLast().map { $0.split(separator: " ")[1] } == ["list", "systemd", "uptime"], "\(before)")
    let admin = try daemon.connect()
    #expect(try admin.request("SUBSCRIBE").last == "OK 0")
    let after = try viewer.request("STATUS")
    #expect(withoutUptime(after) == withoutUptime(before), "\(before) then \(after)")
    let control = try daemon.connect().request("STATUS")
    #expect(control.contains { $0.hasPrefix("status pid ") }, "\(control)")
    #expect(control.contains("status subscribers 1"), "\(control)")
  }

  /// SECURITY.md's row for the read-only socket left out HISTORY and CLIENT
  /// NAME, and its sentence on a read-only STATUS `list`. Every verb HELP lists is tried on the
  /// read-only socket: the row names exactly those it answers without ERR READONLY, and the
  /// sentence exactly the fields a read-only STATUS has.
  @Test func securityMdSaysWhatTheReadOnlySocketAllows() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let security = try String(contentsOf: root.appendingPathComponent("docs/SECURITY.md"), encoding: .utf8)
    let row = try #require(
      security.split(separator: "\n").first { $0.hasPrefix("| `/run/sectiond/readonly.sock`") })
    let named = Set(row.split(separator: "|")[3].split { !$0.isUppercase }.map(String.init))
    let samples = [
      "CLIENT": "CLIENT NAME viewer", "ITEMS": "ITEMS 0", "OPEN": "OPEN 0", "CLOSE": "CLOSE 0",
      "TOGGLE": "TOGGLE 0",
      "INSERT": "INSERT end x X", "DELETE": "DELETE 0", "MOVE": "MOVE 0 1", "RENAME": "RENAME 0 X",
      "ITEM": "ITEM INSERT 0 end x",
    ]
    let directory = TemporaryDirectory()
    let daemon = try TestDaemon(directory: directory)
    let readOnly = directory.file("readonly.sock")
    let verbs = try LineClient(path: readOnly).request("HELP").dropLast().map {
      String($0.split(separator: " ")[1])
    }
    #expect(verbs.count > 20, "\(verbs)")
    for verb in verbs {
      let reply = try LineClient(path: readOnly).request(samples[verb] ?? verb)
      let allowed = !reply.last!.hasPrefix("ERR READONLY")
      #expect(allowed == named.contains(verb), "\(verb): \(reply.last!); the row names \(named.sorted())")
    }
    let text = security.replacingOccurrences(of: "\n", with: " ")
    let sentence = try #require(text.range(of: "read-only socket it tells only ")).upperBound
    let fields = text[sentence...].prefix { $0 != "." }.split(
      separator: "`", omittingEmptySubsequences: false
    ).enumerated().filter { $0.offset % 2 == 1 }
      .map { String($0.element) }
    let status = try LineClient(path: readOnly).request("STATUS").dropLast().map {
      String($0.split(separator: " ")[1])
    }
    #expect(fields == status, "SECURITY.md: \(fields); STATUS: \(status)")
    _ = daemon
  }

  @Test func rootRefusesAConfigOthersCanWriteUnlessAllowed() throws {
    let directory = TemporaryDirectory()
    let config = directory.write("sections.json", #"{"sections":[{"title":"A"},{"title":"B"}]}"#)
    #expect(chmod(config, 0o666) == 0)
    let arguments = ["--config", config, "--socket", directory.file("c.sock"), "--no-state"]
    let refused = try runBounded(Built.sectiond, arguments)
    #expect(refused.status == 1)
    #expect(
      refused.standardError.contains("\(config) is writable by users other than root"),
      "\(refused.standardError)")
    #expect(refused.standardError.contains("--allow-insecure"))
    #expect(!FileManager.default.fileExists(atPath: directory.file("c.sock")))

    // Group-writable, or owned by another user, is just as bad.
    #expect(chmod(config, 0o664) == 0)
    #expect(try runBounded(Built.sectiond, arguments).status == 1)
    #expect(chmod(config, 0o644) == 0 && chown(config, 65534, 65534) == 0)
    #expect(try runBounded(Built.sectiond, arguments).standardError.contains("not owned by root"))

    let allowed = try TestDaemon(
      arguments: ["--config", config, "--allow-insecure"], directory: directory)
    #expect(
      try allowed.connect().request("LIST") == ["section 0 a closed 0 A", "section 1 b closed 0 B", "OK 0"])
  }

  @Test func rootRefusesAStateFileOthersCanWriteUnlessAllowed() throws {
    let directory = TemporaryDirectory()
    let state = directory.write(
      "state.json",
      #"{"format":1,"revision":4,"mode":"multi","sections":{"first":3,"second":null,"third":null}}"#)
    #expect(chmod(state, 0o646) == 0)
    let refused = try runBounded(Built.sectiond, ["--socket", directory.file("c.sock"), "--state", state])
    #expect(refused.status == 1)
    #expect(
      refused.standardError.contains("\(state) is writable by users other than root"),
      "\(refused.standardError)")
    #expect(refused.standardError.contains("chmod go-w"))
    // Refused, not repaired or set aside: the file is as it was.
    #expect(try String(contentsOfFile: state, encoding: .utf8).contains(#""revision":4"#))

    let allowed = try TestDaemon(arguments: ["--allow-insecure"], directory: directory)
    #expect(try allowed.connect().request("SUBSCRIBE") == ["state 4 multi first", "OK 4"])
  }

  /// A socket directory another user could write, or that another user owns, is refused by
  /// the daemon before it binds and by sectionctl before it connects: whoever can
  /// write it could put their own socket in place of sectiond's.
  @Test func neitherSideUsesASocketDirectoryAnotherUserCouldWrite() throws {
    let directory = TemporaryDirectory()
    let sockets = directory.file("sockets")
    #expect(mkdir(sockets, 0o700) == 0 && chmod(sockets, 0o777) == 0)
    let socket = sockets + "/c.sock"
    let refused = try runBounded(Built.sectiond, ["--socket", socket, "--no-state"])
    #expect(refused.status == 1)
    #expect(
      refused.standardError.contains("\(sockets) (mode 777, owner uid 0) can be written by other users")
        && refused.standardError.contains("chmod go-w \(sockets)"), "\(refused.standardError)")
    #expect(try FileSystem.status(socket) == nil)
    let client = try SectionctlRun.run(["--socket", socket, "ping"])
    #expect(
      client.status == 3 && client.stderr.contains("refusing to connect: \(sockets) (mode 777"))

    #expect(chmod(sockets, 0o755) == 0 && chown(sockets, 65534, 65534) == 0)
    let owned = try runBounded(Built.sectiond, ["--socket", socket, "--no-state"])
    #expect(owned.status == 1)
    #expect(owned.standardError.contains("\(sockets) (mode 755, owner uid 65534)"), "\(owned.standardError)")
    let ownedClient = try SectionctlRun.run(["--socket", socket, "ping"])
    #expect(ownedClient.status == 3 && ownedClient.stderr.contains("owner uid 65534"))
  }

  /// The refusal of a linked state file says what to do with the link: chown and chmod would
  /// follow it and change the file it points to, and the start would still be refused.
  @Test func rootRefusesALinkedStateFileSayingWhatToDoWithTheLink() throws {
    let directory = TemporaryDirectory()
    let target = directory.write(
      "real-state.json", #"{"format":1,"revision":4,"mode":"multi","sections":{}}"#)
    let link = directory.file("state.json")
    #expect(symlink(target, link) == 0)
    let refused = try runBounded(Built.sectiond, ["--socket", directory.file("c.sock"), "--state", link])
    #expect(refused.status == 1)
    #expect(refused.standardError.contains("\(link) is a symbolic link"), "\(refused.standardError)")
    #expect(refused.standardError.contains("give --state the file's own path"), "\(refused.standardError)")
    #expect(!refused.standardError.contains("chmod go-w"), "\(refused.standardError)")
    #expect(try FileSystem.status(link)?.isSymbolicLink == true)
  }

  @Test func symbolicLinksAtTheStatePathsAreReplacedNeverFollowed() throws {
    let directory = TemporaryDirectory()
    let outside = TemporaryDirectory()
    let victimOfTemporary = outside.write("passwd-like", "precious: do not touch\n")
    let victimOfState = outside.write("shadow-like", "also precious\n")
    let wouldBeCreated = outside.file("created-by-following")
    // --allow-insecure: as root, a start refuses a state path that is a link (its mode reads
    // as writable by all), and this test is about what the saves do with one.
    let daemon = try TestDaemon(arguments: ["--allow-insecure"], directory: directory)
    let temporary = daemon.statePath + ".tmp"
    // Links planted where the next start reads the state and its first save writes it whole
    // (later saves append to the journal). The link at the state path is not read through but
    // set aside, and the start-up save writes a real file in its place.
    daemon.stop()
    for file in [daemon.statePath, temporary, daemon.statePath + ".journal"] { try FileSystem.remove(file) }
    #expect(symlink(victimOfState, daemon.statePath) == 0)
    #expect(symlink(victimOfTemporary, temporary) == 0)
    try daemon.start()
    #expect(try daemon.connect().request("TOGGLE 0").last == "OK 1")
    try expectUntouched(victimOfTemporary, "precious: do not touch\n")
    try expectUntouched(victimOfState, "also precious\n")
    #expect(try FileSystem.status(daemon.statePath)?.isSymbolicLink == false)
    #expect(try String(contentsOfFile: daemon.statePath, encoding: .utf8).contains(#""revision":0"#))

    // A dangling link would be created through by O_CREAT if it were followed. (The spare the
    // last save left at that name, the link to victimOfState, goes first.)
    daemon.stop()
    try FileSystem.remove(temporary)
    #expect(symlink(wouldBeCreated, temporary) == 0)
    try daemon.start()
    let client = try daemon.connect()
    #expect(try client.request("TOGGLE 1").last == "OK 2")
    #expect(!FileManager.default.fileExists(atPath: wouldBeCreated))
    #expect(try FileSystem.status(temporary)?.isSymbolicLink != true)
    #expect(try client.request("TOGGLE 2").last == "OK 3")

    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try daemon.connect().request("SUBSCRIBE") == ["state 3 multi first,second,third", "OK 3"])
  }

  private func expectUntouched(_ path: String, _ contents: String) throws {
    #expect(try String(contentsOfFile: path, encoding: .utf8) == contents)
    #expect(try FileSystem.status(path)?.owner == 0)
  }

  /// Runs a command that should refuse to start; one that starts anyway is stopped after 5 s.
  private func runBounded(_ executable: String, _ arguments: [String]) throws -> CommandResult {
    try runCommand("/usr/bin/timeout", ["5", executable] + arguments)
  }

  /// Runs `script` with /bin/sh as user nobody, group nogroup, no supplementary groups.
  private func runAsNobody(_ script: String) throws -> CommandResult {
    try runCommand(
      "/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/sh", "-c", script],
      environment: ["HOME": "/"])
  }
}
