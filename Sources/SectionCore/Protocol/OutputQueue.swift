/// What is waiting to be sent on one connection: its own bytes, and large blocks it shares.
///
/// Replies and events are rendered into `tail`. A large reply (a LIST, VIEW or ITEMS of
/// thousands of lines) is not copied there: the block the service keeps rendered is queued by
/// reference (an `ArraySlice` retains the array's storage, which is never written again), so a
/// thousand clients asking for a 6 MB reply cost one copy of it, not a thousand. Small blocks
/// are copied, which is cheaper than a second write for them.
public struct OutputQueue {
  /// Blocks at least this large are shared rather than copied.
  public static let sharingThreshold = 32 << 10

  // The members the request path uses are inlinable: called from the server's module through
  // a class property, an opaque call made the caller retain and release both arrays around
  // it (callgrind: about 40 instructions a request).

  /// Shared blocks, oldest first, waiting to be sent before `tail`; the first may be partly sent.
  @usableFromInline var blocks: [ArraySlice<UInt8>] = []
  /// Bytes of this connection's own, sent after the blocks; `tail[sentOfTail...]` is unsent.
  public internal(set) var tail: [UInt8] = []
  @usableFromInline var sentOfTail = 0
  /// Unsent bytes in `blocks`.
  @usableFromInline var blockedCount = 0

  public init() {}

  /// Bytes not sent yet.
  @inlinable public var count: Int { blockedCount + tail.count - sentOfTail }
  @inlinable public var isEmpty: Bool { count == 0 }

  /// Where the tail ends now: the mark to take back a reply with `removeTail(from:)`.
  @inlinable public var tailMark: Int { tail.count }

  // MARK: Appending

  @inline(__always)
  public mutating func append(_ text: StaticString) { tail.append(text) }

  @inline(__always)
  public mutating func appendDecimal(_ value: UInt64) { tail.appendDecimal(value) }

  /// Appends `count` replies `OK`: one alone byte by byte, more in runs of up to 16 copied from
  /// one literal (a pipelined PING's reply cost ~45 instructions byte by byte; a copy costs
  /// ~70 however many it holds, callgrind).
  mutating func appendOK(times count: Int) {
    if count == 1 {
      tail.append("OK\n")
      return
    }
    var left = count
    while left > 0 {
      let taken = min(left, OutputQueue.okRunLength)
      tail.append(contentsOf: OutputQueue.okReplies(taken))
      left -= taken
    }
  }

  /// The most replies `okReplies(_:)` holds.
  public static let okRunLength = 16
  private static let okRun: StaticString = "OK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\nOK\n"

  /// `count` replies `OK` (at most `okRunLength`), as bytes of a constant: what the server
  /// sends for a read of nothing but PINGs, without copying them into a queue.
  public static func okReplies(_ count: Int) -> UnsafeBufferPointer<UInt8> {
    precondition(count <= okRunLength)
    return UnsafeBufferPointer(start: okRun.utf8Start, count: count * 3)
  }

  public mutating func append(utf8 text: String) { tail.append(utf8: text) }

  public mutating func append(contentsOf bytes: some Collection<UInt8>) { tail.append(contentsOf: bytes) }

  /// Appends `block`, sharing its storage when it is large. The block must never be mutated in
  /// place afterwards (the service's caches are replaced, not edited).
  public mutating func append(shared block: ArraySlice<UInt8>) {
    guard block.count >= OutputQueue.sharingThreshold else {
      tail.append(contentsOf: block)
      return
    }
    if sentOfTail < tail.count { blocks.append(tail[sentOfTail...]) }
    blockedCount += tail.count - sentOfTail
    tail = []
    sentOfTail = 0
    blocks.append(block)
    blockedCount += block.count
  }

  /// Takes back what was appended to the tail since `mark` (a reply that will not be sent).
  public mutating func removeTail(from mark: Int) {
    precondition(mark >= sentOfTail, "part of that reply was sent")
    tail.removeSubrange(mark...)
  }

  // MARK: Sending

  /// Hands `send` the unsent bytes in order, a contiguous run at a time, up to `mark` in the
  /// tail (nil: everything; blocks always lie before any mark). `send` returns how many bytes
  /// it took, 0 when the peer would block, nil when it failed. Returns false on a failure.
  public mutating func send(
    upToTail mark: Int? = nil, _ send: (UnsafeRawBufferPointer) -> Int?
  ) -> Bool {
    // Only when there are blocks: the loop's writes to the array made every send copy the
    // empty array's shared storage first (an allocation per reply, callgrind).
    if !blocks.isEmpty {
      while let first = blocks.first {
        guard let sent = first.withUnsafeBytes(send) else { return false }
        if sent == 0 { return true }
        blockedCount -= sent
        if sent < first.count { blocks[0] = first.dropFirst(sent) } else { blocks.removeFirst() }
      }
    }
    let end = mark ?? tail.count
    while sentOfTail < end {
      let sent = tail.withUnsafeBytes { bytes in
        send(UnsafeRawBufferPointer(rebasing: bytes[sentOfTail..<end]))
      }
      guard let sent else { return false }
      if sent == 0 { return true }
      sentOfTail += sent
    }
    return true
  }

  /// Frees what was sent: everything when all is sent and it is more than a few KiB (keeping
  /// a small buffer's storage), else the sent prefix once it is most of the tail, so a slow
  /// reader's buffer stays bounded. A few KiB sent are left where they are: emptying the array
  /// after every reply cost a PING at 1 in flight about 100 instructions (callgrind), and
  /// the next replies are appended behind them until the tail is worth clearing. Returns how
  /// far marks into the tail moved back.
  @discardableResult
  public mutating func compact() -> Int {
    if sentOfTail == tail.count {
      guard sentOfTail >= OutputQueue.sentKept else { return 0 }
      let moved = sentOfTail
      tail.removeAll(keepingCapacity: tail.capacity <= 64 << 10)
      sentOfTail = 0
      return moved
    }
    guard sentOfTail >= 64 << 10, sentOfTail * 2 >= tail.count else { return 0 }
    let moved = sentOfTail
    tail.removeFirst(sentOfTail)
    sentOfTail = 0
    return moved
  }

  /// Sent bytes left at the front of the tail until there are this many.
  static let sentKept = 4 << 10

  /// Every unsent byte as one array: for tests and tools, not the request path.
  public var unsentBytes: [UInt8] {
    var bytes = blocks.flatMap { $0 }
    bytes.append(contentsOf: tail[sentOfTail...])
    return bytes
  }
}
