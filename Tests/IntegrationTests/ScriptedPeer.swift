import Foundation
import Glibc
import Posix

/// A peer on a Unix socket that answers as a script says: a daemon that misbehaves on cue (goes
/// away mid-request) or speaks what this tree's daemon does not yet. `CLIENT NAME` lines are
/// answered `OK` by the peer itself; every other line goes to `script` with the lines the
/// connection sent so far.
final class ScriptedPeer: @unchecked Sendable {
  enum Action: Sendable {
    /// No answer yet.
    case wait
    case answer(String)
    /// Answers, then closes the connection.
    case answerAndClose(String)
    /// Closes the connection without answering.
    case close
  }

  let directory = TemporaryDirectory()
  let path: String
  private let listener: FileDescriptor
  private let lock = NSLock()
  private var _script: @Sendable (_ connection: Int, _ lines: [String]) -> Action = { _, _ in .wait }
  private var _received: [[String]] = []
  private var open: [Int32] = []

  var script: @Sendable (_ connection: Int, _ lines: [String]) -> Action {
    get { lock.withLock { _script } }
    set { lock.withLock { _script = newValue } }
  }

  /// The lines each connection sent, by connection in the order they came.
  var received: [[String]] { lock.withLock { _received } }
  var connections: Int { received.count }

  init() throws {
    path = directory.file("peer.sock")
    listener = try UnixSocket.make(nonBlocking: false)
    try UnixSocket.listen(listener, path: path)
    let listener = listener
    Foundation.Thread.detachNewThread { [weak self] in
      while true {
        let fd = Glibc.accept(listener.rawValue, nil, nil)
        guard fd >= 0, let self else { return }
        let index = self.lock.withLock {
          self._received.append([])
          self.open.append(fd)
          return self._received.count - 1
        }
        Foundation.Thread.detachNewThread { self.serve(fd, index) }
      }
    }
  }

  /// Closes every connection open now, as a daemon that stopped would.
  func dropConnections() {
    lock.withLock { for fd in open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) } }
  }

  deinit {
    Glibc.shutdown(listener.rawValue, Int32(SHUT_RDWR))
    dropConnections()
  }

  private func serve(_ fd: Int32, _ index: Int) {
    defer {
      lock.withLock { open.removeAll { $0 == fd } }
      Glibc.close(fd)
    }
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { return }
      buffer += chunk[..<count]
      while let newline = buffer.firstIndex(of: 0x0A) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        let (lines, script) = lock.withLock {
          _received[index].append(line)
          return (_received[index], _script)
        }
        let action: Action = line.hasPrefix("CLIENT NAME ") ? .answer("OK\n") : script(index, lines)
        switch action {
        case .wait: continue
        case .answer(let text): write(fd, text)
        case .answerAndClose(let text):
          write(fd, text)
          return
        case .close: return
        }
      }
    }
  }

  private func write(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      // send, not write: a client that hung up (as one refusing a flood does) must not SIGPIPE the tests.
      let written = bytes[offset...].withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      guard written > 0 else { return }
      offset += written
    }
  }
}
