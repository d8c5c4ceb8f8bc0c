import Glibc

extension FileSystem {
  /// The names in a directory, without `.` and `..`, sorted; nil when it does not exist.
  /// `sectionctl lists` reads the socket directories with it.
  public static func entries(of directory: String) throws -> [String]? {
    guard let stream = opendir(directory) else {
      if Errno.current == .noEntry { return nil }
      throw PosixError("opendir", directory)
    }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
  }
}
