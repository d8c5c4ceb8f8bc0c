import Posix

/// A connection to the daemon's socket that sends lines and reads them back one at a time,
/// waiting for the daemon at most until its deadline (`--timeout`), if it has one. `Client` is
/// built on it; a program uses it itself to pass protocol text on as it is, without parsing it
/// into replies (`sectionctl send` prints the daemon's lines as they came).
public final class Connection {
  /// The socket's path, for messages.
  public let path: String
  let fd: FileDescriptor
  private var lines: LineReader
  private var atEnd = false
  /// `timeout` as given, for the message when it passes.
  private let timeout: Double?
  /// When waiting ends, in `monotonicMicroseconds()`; nil waits for ever (watch).
  private let deadline: UInt64?

  /// Connects to `path`; every wait on this connection from now on ends `timeout` seconds from now.
  public init(path: String, timeout: Double? = nil) throws(ClientError) {
    self.path = path
    lines = LineReader(path: path)
    self.timeout = timeout
    deadline = timeout.map { monotonicMicroseconds() + UInt64($0 * 1_000_000) }
    fd = try Connection.socket(path: path, timeout: timeout, deadline: deadline)
  }

  /// Whether the user named the socket (`--socket`, `--readonly-socket`, `SECTIOND_SOCKET`):
  /// set once from the command line; a named socket's owner is trusted with its directory
  /// (`SocketDirectory.clientProblem`).
  public nonisolated(unsafe) static var socketIsNamed = false

  /// A non-blocking socket connected to `path`, once its directory is known to be safe (see
  /// `SocketDirectory`); a failure says why, for `ClientError`'s advice. A listener whose backlog
  /// is full refuses non-blocking connections with EAGAIN: tried again until `deadline` (which
  /// `timeout` seconds gave).
  public static func socket(path: String, timeout: Double? = nil, deadline: UInt64? = nil)
    throws(ClientError)
    -> FileDescriptor
  {
    if let problem = SocketDirectory.clientProblem(socket: path, named: socketIsNamed)
      ?? ownDirectoryProblem(socket: path)
    {
      throw .untrustedSocket(problem)
    }
    let fd: FileDescriptor
    do {
      fd = try UnixSocket.make(nonBlocking: true)
    } catch {
      throw .cannotConnect(path: path, errno: (error as? PosixError)?.errno ?? Errno(0))
    }
    while true {
      do {
        try UnixSocket.connect(fd, path: path)
        return fd
      } catch let error as PosixError where error.errno == .wouldBlock {
        // The listener's backlog is full: it is not accepting.
        if let deadline, monotonicMicroseconds() >= deadline {
          fd.close()
          throw .timedOut(path: path, seconds: timeout ?? 0)
        }
        ProcessInfo.sleep(milliseconds: 10)
      } catch let error as PosixError {
        fd.close()
        throw ClientError.connectFailure(path: path, errno: error.errno)
      } catch {
        fd.close()
        throw .cannotConnect(path: path, errno: Errno(0))
      }
    }
  }

  /// Why a socket in the user's own daemons' directory (`SocketLocation.ownDirectory`) is not
  /// to be trusted as their own daemon's: that directory is not theirs as it stands
  /// (`SocketDirectory.ownDirectoryProblem`). Nil for any other socket, and for one the user
  /// named, whose owner's daemon is the one asked for.
  static func ownDirectoryProblem(socket path: String) -> String? {
    guard !socketIsNamed, let own = SocketLocation.ownDirectory(environment: .current),
      path.hasPrefix(own + "/")
    else { return nil }
    return SocketDirectory.ownDirectoryProblem(own)
  }

  deinit { fd.close() }

  /// Sends each line with its LF. A daemon that went away shows up as `connectionLost`, never as SIGPIPE.
  public func send(_ lines: [String]) throws(ClientError) {
    try Connection.write(Array(lines.map { $0 + "\n" }.joined().utf8), to: fd, path: path) {
      () throws(ClientError) in try wait(for: .writable)
    }
  }

  /// Writes every byte to the non-blocking `fd`, calling `wait` whenever the socket takes no
  /// more for now; `connectionLost` once it takes nothing.
  static func write(
    _ bytes: [UInt8], to fd: FileDescriptor, path: String, wait: () throws(ClientError) -> Void
  ) throws(ClientError) {
    var offset = 0
    while offset < bytes.count {
      let result = try? bytes.withUnsafeBytes {
        try fd.write(UnsafeRawBufferPointer(rebasing: $0[offset...]))
      }
      switch result {
      case .done(let written): offset += written
      case .wouldBlock: try wait()
      case nil: throw .connectionLost(path: path)
      }
    }
  }

  /// Whether bytes were read and not yet taken as lines: under load, the next event is already here.
  var hasReadAhead: Bool { !lines.isEmpty }

  /// The next line without its LF (and CR); nil once the daemon has closed the connection.
  public func readLine() throws(ClientError) -> String? {
    while true {
      if let line = try lines.nextLine() { return line }
      if atEnd { return nil }
      try fill()
    }
  }

  /// Whether `line`, as `readLine` returns it, ends a reply (`OK`, `ERR`): for a program that
  /// passes replies on as they come (`sectionctl send`) and must know where each one ends.
  public static func endsReply(_ line: String) -> Bool { ProtocolLine.isStatus(line) }

  /// Reads what has arrived, waiting for it; a reset connection counts as the end, like an orderly close.
  private func fill() throws(ClientError) {
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let result = try? chunk.withUnsafeMutableBytes { try fd.read(into: $0) }
      switch result {
      case .done(let count) where count > 0:
        lines.append(chunk[..<count])
        return
      case .wouldBlock: try wait(for: .readable)
      default:
        atEnd = true
        return
      }
    }
  }

  /// Waits until the socket is ready for `events`, or fails once the deadline has passed.
  private func wait(for events: IOEvents) throws(ClientError) {
    var milliseconds = -1
    if let deadline {
      let now = monotonicMicroseconds()
      guard now < deadline else { throw .timedOut(path: path, seconds: timeout ?? 0) }
      milliseconds = Int((deadline - now + 999) / 1000)
    }
    let ready = try? Poll.wait([(fd, events)], milliseconds: milliseconds)
    guard ready != nil else { throw .connectionLost(path: path) }
  }
}
