import Glibc
import Testing

@testable import Posix

/// Reading and replacing files: what a caller that must not hang or read a planted file is
/// told, and the save that names a whole file at every moment.
@Suite struct FileSystemTests {
  @Test func aFileIsReadWhole() throws {
    let scratch = Scratch()
    let path = try scratch.write("a", "hello")
    #expect(try FileSystem.readFile(path) == Array("hello".utf8))
  }

  @Test func aMissingFileNamesOpenAndThePath() {
    let scratch = Scratch()
    let error = thrown(PosixError.self) { _ = try FileSystem.readFile(scratch.file("none")) }
    #expect(error?.call == "open")
    #expect(error?.subject == scratch.file("none"))
    #expect(error?.errno == .noEntry)
  }

  @Test func aFileAboveTheLimitIsRefusedBeforeItIsRead() throws {
    let scratch = Scratch()
    let path = try scratch.write("big", String(repeating: "x", count: 100))
    let error = thrown(PosixError.self) { _ = try FileSystem.readFile(path, limit: 99) }
    #expect(error?.errno == Errno(EFBIG))
    #expect(error?.subject == path)
    #expect(try FileSystem.readFile(path, limit: 100).count == 100)
  }

  /// A FIFO planted where a file is expected is refused at once: opening it blocking would
  /// wait for a writer forever.
  @Test(arguments: [("directory", "a directory"), ("fifo", "a FIFO")])
  func anythingButAFileIsNamedForWhatItIs(_ kind: String, _ words: String) throws {
    let scratch = Scratch()
    let path = scratch.file(kind)
    if kind == "fifo" { #expect(mkfifo(path, 0o600) == 0) } else { try FileSystem.makeDirectories(path) }
    let error = thrown(FileSystem.NotARegularFile.self) { _ = try FileSystem.readFile(path) }
    #expect(error?.description == "\(path) is \(words), not a regular file")
  }

  @Test func aLinkIsNotFollowedWhenAskedNotTo() throws {
    let scratch = Scratch()
    let target = try scratch.write("target", "secret")
    #expect(symlink(target, scratch.file("link")) == 0)
    #expect(try FileSystem.readFile(scratch.file("link")) == Array("secret".utf8))
    let error = thrown(PosixError.self) {
      _ = try FileSystem.readFile(scratch.file("link"), followingLinks: false)
    }
    #expect(error?.errno == Errno(ELOOP))
    #expect(try FileSystem.status(scratch.file("link"))?.isSymbolicLink == true)
    #expect(try FileSystem.status(scratch.file("link"), followingLinks: true)?.isRegularFile == true)
  }

  /// A stream without a size (a pipe) is cut at the limit as it is read.
  @Test func readingAStreamStopsAtTheLimit() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    let (reader, writer) = (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    defer { reader.close() }
    try writer.writeAll(Array("0123456789".utf8))
    writer.close()
    let error = thrown(PosixError.self) { _ = try reader.readAll(subject: "pipe", limit: 5) }
    #expect(error?.errno == Errno(EFBIG))
    #expect(error?.subject == "pipe")
  }

  /// The spare keeps the version before the last save, and is private to its owner.
  @Test func aReplacedFileLeavesItsPreviousVersionInTheSpare() throws {
    let scratch = Scratch()
    let path = try scratch.write("state", "one")
    try FileSystem.replaceAtomically(path, with: Array("two".utf8), sync: true)
    #expect(try FileSystem.readFile(path) == Array("two".utf8))
    #expect(try FileSystem.readFile(path + ".tmp") == Array("one".utf8))
    try FileSystem.replaceAtomically(path, with: Array("3".utf8))
    #expect(try FileSystem.readFile(path) == Array("3".utf8))
    #expect(try FileSystem.readFile(path + ".tmp") == Array("two".utf8))
    #expect((try FileSystem.status(path)?.mode ?? 0) & 0o777 == 0o600)
  }

  @Test func directoriesAreMadeWithTheirParentsAndAMissingFileIsRemovedQuietly() throws {
    let scratch = Scratch()
    try FileSystem.makeDirectories(scratch.file("a/b/c"))
    try FileSystem.makeDirectories(scratch.file("a/b/c"))
    #expect(try FileSystem.status(scratch.file("a/b/c"))?.isDirectory == true)
    try FileSystem.remove(scratch.file("none"))
    let error = thrown(PosixError.self) { try FileSystem.remove(scratch.file("a")) }
    #expect(error?.call == "unlink")
  }

  @Test(arguments: [("a", "."), ("/a", "/"), ("/a/b", "/a"), ("a/b/c", "a/b"), ("/", "/")])
  func theDirectoryOfAPath(_ path: String, _ directory: String) {
    #expect(directoryName(of: path) == directory)
  }
}
