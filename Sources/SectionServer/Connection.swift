import Posix
import SectionCore

/// One client: its socket, the input not yet handled and the output not yet written.
final class Connection {
  /// Replies waiting beyond this stop the reading of requests until the client catches up.
  static let outputLimit = 1 << 20
  /// Events waiting beyond this are dropped for one `!state` snapshot once the client catches up.
  static let eventLimit = 64 << 10

  let fd: FileDescriptor
  let access: SectionService.Access
  /// What the server's epoll set watches this socket for.
  var watchedEvents: IOEvents = .readable

  var framer = LineFramer()
  /// Input read but not handled yet: a partial line, or lines left while a change is saved.
  var pending: [UInt8] = []
  /// Bytes to write; `output[written...]` has not been sent yet.
  var output: [UInt8] = []
  var written = 0

  var isSubscribed = false
  /// Index in the server's subscriber list, for O(1) removal.
  var subscriberSlot = -1
  /// Events were dropped for this subscriber; it is owed a `!state` snapshot.
  var missedEvents = false
  /// Where the reply to an unsaved change starts in `output`; nil when none is waiting.
  var unsavedReplyStart: Int?
  /// The client sent end of input; answer what it sent, then close.
  var inputEnded = false
  /// QUIT was received: write what is queued, then close.
  var quitting = false
  var isClosed = false
  /// Queued in the server's list of connections to flush this iteration.
  var flushQueued = false
  /// Reading is paused because too much output is waiting.
  var readPaused = false

  init(fd: FileDescriptor, access: SectionService.Access) {
    self.fd = fd
    self.access = access
  }

  var unsentCount: Int { output.count - written }

  /// Whether requests may be taken from this connection now.
  var canHandleRequests: Bool {
    !isClosed && !quitting && unsavedReplyStart == nil && unsentCount < Connection.outputLimit
  }

  /// Whether there is nothing left to do but close: the client is done and so are we.
  var isFinished: Bool {
    (quitting || (inputEnded && pending.isEmpty)) && unsavedReplyStart == nil && unsentCount == 0
  }

  /// Writes as much of the output as the socket takes, but never the reply to a change that
  /// is not saved yet. False when the peer is gone.
  func flush() -> Bool {
    let end = unsavedReplyStart ?? output.count
    while written < end {
      let result = output.withUnsafeBytes { bytes in
        Result { try fd.write(UnsafeRawBufferPointer(rebasing: bytes[written..<end])) }
      }
      switch result {
      case .success(.done(let count)): written += count
      case .success(.wouldBlock):
        compact()
        return true
      case .failure: return false
      }
    }
    if written == output.count {
      output.removeAll(keepingCapacity: output.capacity <= 64 << 10)
      written = 0
    }
    return true
  }

  /// Queues `bytes` behind the output, sending what the socket takes at once when nothing is
  /// waiting ahead of them: a broadcast then reaches the first subscribers before it is copied
  /// for the last. Returns whether output is left to flush (failures included: the flush
  /// meets them again and closes the connection).
  func enqueue(_ bytes: [UInt8]) -> Bool {
    var sent = 0
    if output.isEmpty,
      case .success(.done(let count)) = bytes.withUnsafeBytes({ b in Result { try fd.write(b) } })
    {
      sent = count
    }
    if sent < bytes.count { output.append(contentsOf: bytes[sent...]) }
    return unsentCount > 0
  }

  /// Drops the written prefix once it is most of the buffer, so a slow reader's buffer stays bounded.
  private func compact() {
    guard written >= 64 << 10, written * 2 >= output.count else { return }
    output.removeFirst(written)
    if let start = unsavedReplyStart { unsavedReplyStart = start - written }
    written = 0
  }
}
