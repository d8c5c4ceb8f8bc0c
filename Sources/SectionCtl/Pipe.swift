import Posix

/// `sectionctl pipe`: relays bytes between standard input/output and the daemon's socket, so that
/// anything that speaks through a process's standard streams (websocketd, a coprocess, a script)
/// speaks protocol 1. Whatever arrives is passed on at once, so every line goes on as soon as it is
/// complete, in both directions; nothing waits for a buffer to fill.
///
/// One poll loop, so that neither direction can block the other: the socket is non-blocking and
/// what the daemon cannot take yet waits here (and standard input is not read while more than
/// `pendingLimit` bytes wait), because a daemon whose replies to us are piling up stops reading
/// our requests until we read them. Writes to standard output block: its reader depends on nothing
/// we do. End of input half-closes the socket, and the daemon ends the connection once every reply
/// is out, so the relay exits after the last reply; the daemon closing first, or the reader of
/// standard output going away, ends it too.
struct Pipe {
  let path: String
  /// Standard output is a terminal: control characters from the socket are shown as U+FFFD.
  let outputIsTerminal: Bool

  /// Bytes read from standard input that the socket has not taken yet, past which input waits.
  static let pendingLimit = 1 << 16

  func run() throws(ClientError) -> ExitStatus {
    let socket = try Connection.socket(path: path)
    defer { socket.close() }
    do {
      try socket.setNonBlocking()
    } catch {
      throw .cannotConnect(path: path, errno: (error as? PosixError)?.errno ?? Errno(0))
    }
    var relay = Relay(socket: socket, filter: outputIsTerminal ? TerminalFilter() : nil)
    return try relay.run(path: path)
  }
}

/// The loop's state: what is still open and what waits to be written.
private struct Relay {
  let socket: FileDescriptor
  var filter: TerminalFilter?
  var inputOpen = true
  var socketWriteOpen = true
  var toSocket: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 16)

  init(socket: FileDescriptor, filter: TerminalFilter?) {
    self.socket = socket
    self.filter = filter
  }

  mutating func run(path: String) throws(ClientError) -> ExitStatus {
    let input = FileDescriptor.standardInput
    let output = FileDescriptor.standardOutput
    while true {
      var watched: [(FileDescriptor, IOEvents)] = [
        (socket, toSocket.isEmpty ? .readable : [.readable, .writable])
      ]
      // Standard output with no events asked: poll still reports it once its reader has gone
      // (or when it is not open at all), and any report ends the relay.
      watched.append((output, []))
      let readsInput = inputOpen && toSocket.count < Pipe.pendingLimit
      if readsInput { watched.append((input, .readable)) }
      let ready: [IOEvents]
      do {
        ready = try Poll.wait(watched, milliseconds: -1)
      } catch {
        throw .connectionLost(path: path)
      }
      if !ready[1].isEmpty { return .success }
      // Replies first: a daemon that answered and closed (QUIT) has its last lines passed on.
      if !ready[0].intersection([.readable, .hangUp]).isEmpty {
        switch readSocket(into: output) {
        case .more: break
        case .daemonClosed, .readerGone: return .success
        case .failed: throw .connectionLost(path: path)
        }
      }
      if readsInput && !ready[2].isEmpty { readInput(input) }
      if !toSocket.isEmpty && !ready[0].intersection([.writable, .hangUp]).isEmpty && !writeSocket() {
        // The daemon takes no more; reading tells whether it closed (0) or failed (3).
        toSocket = []
        inputOpen = false
        socketWriteOpen = false
      }
      if !inputOpen && toSocket.isEmpty && socketWriteOpen {
        UnixSocket.shutdownWrite(socket)
        socketWriteOpen = false
      }
    }
  }

  /// Reads what standard input has; end of input (or a failure to read it) ends the sending side.
  private mutating func readInput(_ input: FileDescriptor) {
    let result = try? chunk.withUnsafeMutableBytes { try input.read(into: $0) }
    switch result {
    case .done(let count) where count > 0: toSocket += chunk[..<count]
    case .wouldBlock: break
    default: inputOpen = false
    }
  }

  /// Writes what the socket takes now; false when the daemon can no longer receive.
  private mutating func writeSocket() -> Bool {
    let result = try? toSocket.withUnsafeBytes { try socket.write($0) }
    switch result {
    case .done(let count):
      toSocket.removeFirst(count)
      return true
    case .wouldBlock: return true
    case nil: return false
    }
  }

  private enum ReadOutcome { case more, daemonClosed, readerGone, failed }

  /// Passes on what the daemon sent.
  private mutating func readSocket(into output: FileDescriptor) -> ReadOutcome {
    let result: IOResult<Int>
    do {
      result = try chunk.withUnsafeMutableBytes { try socket.read(into: $0) }
    } catch {
      return .failed
    }
    guard case .done(let count) = result else { return .more }
    guard count > 0 else {
      return flush(filter?.finish() ?? [], to: output) ? .daemonClosed : .readerGone
    }
    let bytes = filter?.filter(chunk[..<count]) ?? Array(chunk[..<count])
    return flush(bytes, to: output) ? .more : .readerGone
  }

  /// Writes every byte to standard output; false when it can take no more (its reader has gone).
  private func flush(_ bytes: [UInt8], to output: FileDescriptor) -> Bool {
    (try? output.writeAll(bytes, subject: "standard output")) != nil
  }
}

/// Makes the daemon's bytes safe for a terminal: C0 controls other than tab and newline, DEL and
/// the C1 controls (U+0080 to U+009F, two bytes in UTF-8) become U+FFFD, so nothing read from the
/// socket reaches the terminal as a control sequence. A lead byte at the end of one read waits for
/// the next, since its control may be split across the two.
struct TerminalFilter {
  private var heldLead = false

  static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

  mutating func filter(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(bytes.count + 1)
    for byte in bytes {
      if heldLead {
        heldLead = false
        if (0x80...0x9F).contains(byte) {
          result += Self.replacement
          continue
        }
        result.append(0xC2)
      }
      switch byte {
      case 0xC2: heldLead = true
      case 0x09, 0x0A: result.append(byte)
      case 0x00..<0x20, 0x7F: result += Self.replacement
      default: result.append(byte)
      }
    }
    return result
  }

  /// What is held back once the input has ended.
  mutating func finish() -> [UInt8] {
    defer { heldLead = false }
    return heldLead ? [0xC2] : []
  }
}
