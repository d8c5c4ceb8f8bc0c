import Glibc
import Testing

@testable import Posix

/// Whether a socket's or a state file's directory may be trusted: one others can write, or a
/// link someone planted, is refused with the path and the fix.
@Suite struct SocketDirectoryTests {
  @Test func aPrivateDirectoryPasses() throws {
    let scratch = Scratch()
    #expect(FileSystem.privateDirectoryProblem(scratch.path) == nil)
    #expect(SocketDirectory.problem(socket: scratch.file("control.sock")) == nil)
    #expect(SocketDirectory.ownDirectoryProblem(scratch.path) == nil)
    #expect(SocketDirectory.ownDirectoryProblem(scratch.file("not-yet")) == nil)
  }

  @Test func aDirectoryOthersCanWriteIsRefusedWithTheFix() throws {
    let scratch = Scratch()
    try FileSystem.makeDirectories(scratch.file("open"))
    try FileSystem.changeMode(scratch.file("open"), 0o777)
    let problem = FileSystem.privateDirectoryProblem(scratch.file("open"))
    #expect(problem?.contains("chmod go-w \(scratch.file("open"))") == true)
    #expect(
      SocketDirectory.problem(socket: scratch.file("open/c.sock"))?.contains("could replace the socket")
        == true)
    #expect(SocketDirectory.ownDirectoryProblem(scratch.file("open"))?.contains("(mode 777)") == true)
  }

  /// Sticky, as /tmp is: nobody moves what is not theirs there.
  @Test func aStickyDirectoryOthersCanWriteHoldsASocket() throws {
    let scratch = Scratch()
    try FileSystem.makeDirectories(scratch.file("sticky"))
    try FileSystem.changeMode(scratch.file("sticky"), 0o1777)
    #expect(SocketDirectory.problem(socket: scratch.file("sticky/c.sock")) == nil)
  }

  @Test func aLinkOrAFileIsNotTheUsersOwnDirectory() throws {
    let scratch = Scratch()
    #expect(symlink(scratch.path, scratch.file("link")) == 0)
    #expect(SocketDirectory.ownDirectoryProblem(scratch.file("link"))?.contains("is a symbolic link") == true)
    let file = try scratch.write("file", "")
    #expect(SocketDirectory.ownDirectoryProblem(file)?.contains("is not a directory") == true)
  }

  /// sun_path's 108 bytes: a longer path is refused before the call, naming it.
  @Test func aSocketPathTooLongIsNamed() {
    let path = "/tmp/" + String(repeating: "s", count: UnixSocket.maximumPathLength)
    let error = thrown(PosixError.self) { _ = try UnixSocket.connect(path: path) }
    #expect(error?.call == "connect")
    #expect(error?.subject == path)
    #expect(error?.errno == .nameTooLong)
    #expect(UnixSocket.maximumPathLength == 107)
  }

  @Test func aListenedSocketIsConnectedTo() throws {
    let scratch = Scratch()
    let listener = try UnixSocket.make()
    defer { listener.close() }
    try UnixSocket.listen(listener, path: scratch.file("s"))
    let client = try UnixSocket.connect(path: scratch.file("s"))
    defer { client.close() }
    guard case .done(let accepted) = try UnixSocket.accept(listener) else {
      Issue.record("nothing to accept")
      return
    }
    defer { accepted.close() }
    #expect(UnixSocket.peerCredentials(accepted)?.pid == getpid())
    let error = thrown(PosixError.self) { _ = try UnixSocket.connect(path: scratch.file("none")) }
    #expect(error?.errno == .noEntry)
    // A second daemon on the same path is told the path is taken; the first keeps it.
    let second = try UnixSocket.make()
    defer { second.close() }
    let taken = thrown(PosixError.self) { try UnixSocket.listen(second, path: scratch.file("s")) }
    #expect(taken?.errno == .exists)
    #expect(try FileSystem.status(scratch.file("s"))?.isSocket == true)
  }
}
