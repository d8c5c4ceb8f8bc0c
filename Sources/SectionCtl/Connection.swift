import Posix

/// A blocking connection to the daemon's socket that sends lines and reads them back one at a time.
final class Connection {
  let path: String
  private let fd: FileDescriptor
  /// Bytes read but not yet returned as lines start at `start`, so taking a line never moves the rest.
  private var buffer: [UInt8] = []
  private var start = 0
  private var atEnd = false

  init(path: String) throws(ClientError) {
    self.path = path
    fd = try Connection.socket(path: path)
  }

  /// A blocking socket connected to `path`; a failure says why, for `ClientError`'s advice.
  static func socket(path: String) throws(ClientError) -> FileDescriptor {
    do {
      return try UnixSocket.connect(path: path)
    } catch let error as PosixError {
      throw ClientError.connectFailure(path: path, errno: error.errno)
    } catch {
      throw .cannotConnect(path: path, errno: Errno(0))
    }
  }

  deinit { fd.close() }

  /// Sends each line with its LF. A daemon that went away shows up as `connectionLost`, never as SIGPIPE.
  func send(_ lines: [String]) throws(ClientError) {
    let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
    var offset = 0
    while offset < bytes.count {
      let result = try? bytes.withUnsafeBytes {
        try fd.write(UnsafeRawBufferPointer(rebasing: $0[offset...]))
      }
      guard case .done(let written) = result else { throw .connectionLost(path: path) }
      offset += written
    }
  }

  /// The next line without its LF (and CR); nil once the daemon has closed the connection.
  func readLine() -> String? {
    while true {
      if let newline = buffer[start...].firstIndex(of: 0x0A) {
        var line = buffer[start..<newline]
        if line.last == 0x0D { line = line.dropLast() }
        start = newline + 1
        return String(decoding: line, as: UTF8.self)
      }
      if atEnd { return nil }
      fill()
    }
  }

  /// Reads what has arrived; a reset connection counts as the end, like an orderly close.
  private func fill() {
    buffer.removeFirst(start)
    start = 0
    var chunk = [UInt8](repeating: 0, count: 65536)
    let result = try? chunk.withUnsafeMutableBytes { try fd.read(into: $0) }
    guard case .done(let count) = result, count > 0 else {
      atEnd = true
      return
    }
    buffer += chunk[..<count]
  }
}
