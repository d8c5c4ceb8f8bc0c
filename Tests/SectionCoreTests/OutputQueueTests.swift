import Testing

@testable import SectionCore

@Suite struct OutputQueueTests {
  /// Sends everything `queue` lets through, in pieces of at most `piece` bytes.
  func drain(_ queue: inout OutputQueue, piece: Int = .max, upTo mark: Int? = nil) -> [UInt8] {
    var sent: [UInt8] = []
    while !queue.isEmpty {
      let before = sent.count
      _ = queue.send(upToTail: mark) { bytes in
        let taken = min(piece, bytes.count)
        sent.append(contentsOf: bytes.prefix(taken))
        return taken
      }
      queue.compact()
      if sent.count == before { break }
    }
    return sent
  }

  @Test func smallBlocksAreCopiedLargeOnesShared() {
    var queue = OutputQueue()
    queue.append("a\n")
    queue.append(shared: Array("small\n".utf8)[...])
    #expect(queue.tail == Array("a\nsmall\n".utf8))
    let large = [UInt8](repeating: 0x78, count: OutputQueue.sharingThreshold)
    queue.append(shared: large[...])
    queue.append("OK\n")
    #expect(queue.tail == Array("OK\n".utf8))
    #expect(queue.count == 8 + large.count + 3)
    #expect(drain(&queue, piece: 1000) == Array("a\nsmall\n".utf8) + large + Array("OK\n".utf8))
    #expect(queue.isEmpty)
  }

  @Test func okRepliesAreWholeRepliesOfOneConstant() {
    for count in [1, 2, OutputQueue.okRunLength] {
      #expect(Array(OutputQueue.okReplies(count)) == Array(String(repeating: "OK\n", count: count).utf8))
    }
    var queue = OutputQueue()
    queue.appendOK(times: 2 * OutputQueue.okRunLength + 1)
    #expect(queue.tail == Array(String(repeating: "OK\n", count: 2 * OutputQueue.okRunLength + 1).utf8))
  }

  @Test func aHeldReplyIsNotSentAndCanBeTakenBack() {
    var queue = OutputQueue()
    queue.append("first\n")
    let mark = queue.tailMark
    queue.append("held\n")
    #expect(drain(&queue, upTo: mark) == Array("first\n".utf8))
    #expect(queue.count == 5)
    queue.removeTail(from: mark)
    queue.append("ERR x\n")
    #expect(drain(&queue) == Array("ERR x\n".utf8))
  }

  @Test func aFailedSendSaysSo() {
    var queue = OutputQueue()
    queue.append("x\n")
    #expect(!queue.send { _ in nil })
    #expect(queue.send { _ in 0 })
    #expect(queue.count == 2)
  }
}
