import Foundation
import Glibc
import Posix
import Synchronization
import Testing

/// A listening socket gets the mode asked for without touching the process's umask: the test
/// process binds sockets (ScriptedPeer) while other tests write the daemon's files, and a umask
/// changed for a moment once made those files group-writable, so a root daemon refused them.
@Suite(.timeLimit(.minutes(1)))
struct SocketModeTests {
  @Test func aSocketHasTheModeAskedFor() throws {
    let directory = TemporaryDirectory()
    for permissions: mode_t in [0o600, 0o660, 0o666] {
      let path = directory.file("m\(permissions).sock")
      let fd = try UnixSocket.make(nonBlocking: false)
      defer { fd.close() }
      try UnixSocket.listen(fd, path: path, permissions: permissions)
      let mode = try #require(try FileSystem.status(path)?.mode)
      #expect(mode == S_IFSOCK | permissions, "umask \(Self.umaskNow())")
    }
  }

  /// Binds sockets on one thread while another reads the umask from /proc; the umask must
  /// never be seen changed.
  @Test func bindingLeavesTheUmaskAlone() throws {
    let directory = TemporaryDirectory()
    let before = Self.umaskNow()
    let done = Atomic(false)
    let seen = Mutex<Set<mode_t>>([])
    let watcher = Thread {
      while !done.load(ordering: .acquiring) {
        let now = Self.umaskNow()
        seen.withLock { _ = $0.insert(now) }
      }
    }
    watcher.start()
    for index in 0..<400 {
      let fd = try UnixSocket.make(nonBlocking: false)
      try UnixSocket.listen(fd, path: directory.file("\(index).sock"), permissions: 0o600)
      fd.close()
    }
    done.store(true, ordering: .releasing)
    while !watcher.isFinished { usleep(1000) }
    #expect(seen.withLock { $0 } == [before])
  }

  /// The umask as /proc/self/status shows it; reading it through umask(2) would change it.
  static func umaskNow() -> mode_t {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") } ?? ""
    return mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) ?? 0
  }
}
