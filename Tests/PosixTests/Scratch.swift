import Glibc
import Posix

/// A directory of the test's own under /tmp (short, for socket paths), removed with what is in it.
final class Scratch {
  let path: String

  init() {
    var template = Array("/tmp/px-XXXXXX".utf8CString)
    path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
  }

  deinit {
    _ = path.withCString { system("rm -rf '\(String(cString: $0))'") }
  }

  /// `name` inside the directory.
  func file(_ name: String) -> String { path + "/" + name }

  /// Writes `text` to `name` and returns its path.
  @discardableResult
  func write(_ name: String, _ text: String) throws -> String {
    try FileSystem.replaceAtomically(file(name), with: Array(text.utf8))
    return file(name)
  }
}

/// The error `body` throws, if it is the type asked for.
func thrown<E: Error>(_ type: E.Type, _ body: () throws -> Void) -> E? {
  do {
    try body()
    return nil
  } catch {
    return error as? E
  }
}
