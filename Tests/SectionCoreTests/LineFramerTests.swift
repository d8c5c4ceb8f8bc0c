import Testing

@testable import SectionCore

@Suite struct LineFramerTests {
  /// Every frame `input` yields, as text ("<TOOLONG>" for an over-long line), and what is left.
  func frames(
    _ framer: inout LineFramer, _ input: [UInt8], endOfInput: Bool = false
  ) -> (frames: [String], rest: [UInt8]) {
    var slice = ArraySlice(input)
    var result: [String] = []
    while let frame = framer.next(&slice, endOfInput: endOfInput) {
      switch frame {
      case .line(let line): result.append(String(decoding: line, as: UTF8.self))
      case .tooLong: result.append("<TOOLONG>")
      }
    }
    return (result, Array(slice))
  }

  func frames(_ text: String, endOfInput: Bool = false) -> (frames: [String], rest: [UInt8]) {
    var framer = LineFramer()
    return frames(&framer, Array(text.utf8), endOfInput: endOfInput)
  }

  @Test func linesEndInLF() {
    let (lines, rest) = frames("PING\nLIST\n\nTOGGLE 1\n")
    #expect(lines == ["PING", "LIST", "", "TOGGLE 1"])
    #expect(rest == [])
  }

  @Test func aCRBeforeTheLFIsDropped() {
    let (lines, rest) = frames("PING\r\nLIST\r\n\r\nA\rB\r\n\r\r\n")
    #expect(lines == ["PING", "LIST", "", "A\rB", "\r"])
    #expect(rest == [])
  }

  @Test func partialLinesAreKept() {
    var framer = LineFramer()
    let first = frames(&framer, Array("PING\nLI".utf8))
    #expect(first.frames == ["PING"])
    #expect(first.rest == Array("LI".utf8))
    let second = frames(&framer, first.rest + Array("ST\r".utf8))
    #expect(second.frames == [])
    #expect(second.rest == Array("LIST\r".utf8))
    let third = frames(&framer, second.rest + Array("\n".utf8))
    #expect(third.frames == ["LIST"])
    #expect(third.rest == [])
  }

  @Test func theLastLineWithoutLFIsServedAtEndOfInput() {
    #expect(frames("PING\nLIST", endOfInput: true).frames == ["PING", "LIST"])
    #expect(frames("PING\nLIST", endOfInput: false).frames == ["PING"])
    #expect(frames("PING\n", endOfInput: true).frames == ["PING"])
    #expect(frames("", endOfInput: true).frames == [])
    // A CR that ends the input is dropped as if its LF had come.
    #expect(frames("PING\r", endOfInput: true).frames == ["PING"])
  }

  @Test func slicesOfALargerBufferAreNotCopied() {
    let buffer = Array("xxPING\nLIST\n".utf8)
    var slice = buffer[2...]
    var framer = LineFramer()
    #expect(framer.next(&slice, endOfInput: false) == .line(buffer[2..<6]))
    #expect(framer.next(&slice, endOfInput: false) == .line(buffer[7..<11]))
    #expect(framer.next(&slice, endOfInput: false) == nil)
    #expect(slice.isEmpty)
  }

  @Test func exactly4096BytesIsALine() {
    let line = String(repeating: "a", count: 4096)
    #expect(frames(line + "\n").frames == [line])
    #expect(frames(line + "\r\n").frames == [line])
    #expect(frames(line, endOfInput: true).frames == [line])
    // Waiting for the LF of a 4096-byte partial line is fine.
    let waiting = frames(line)
    #expect(waiting.frames == [])
    #expect(waiting.rest.count == 4096)
  }

  @Test func anOverlongCompleteLineIsOneTooLong() {
    let long = String(repeating: "a", count: 4097)
    #expect(frames(long + "\nPING\n").frames == ["<TOOLONG>", "PING"])
    #expect(frames(long + "\r\nPING\r\n").frames == ["<TOOLONG>", "PING"])
    #expect(frames(String(repeating: "b", count: 100_000) + "\n").frames == ["<TOOLONG>"])
  }

  @Test func anOverlongPartialLineIsOneTooLongAndTheRestIsSkipped() {
    var framer = LineFramer()
    let first = frames(&framer, Array(repeating: UInt8(ascii: "a"), count: 5000))
    #expect(first.frames == ["<TOOLONG>"])
    #expect(first.rest == [])
    #expect(framer.discarding)
    let second = frames(&framer, Array(repeating: UInt8(ascii: "a"), count: 10_000))
    #expect(second.frames == [])
    #expect(second.rest == [])
    #expect(framer.discarding)
    let third = frames(&framer, Array("aaaa\nPING\nLI".utf8))
    #expect(third.frames == ["PING"])
    #expect(third.rest == Array("LI".utf8))
    #expect(!framer.discarding)
  }

  @Test func theLFOfAnOverlongLineMayComeAlone() {
    var framer = LineFramer()
    #expect(frames(&framer, Array(repeating: UInt8(ascii: "a"), count: 4097)).frames == ["<TOOLONG>"])
    #expect(frames(&framer, Array("\n".utf8)).frames == [])
    #expect(!framer.discarding)
    #expect(frames(&framer, Array("PING\n".utf8)).frames == ["PING"])
  }

  @Test func anOverlongLineAtEndOfInput() {
    var framer = LineFramer()
    let result = frames(&framer, Array(repeating: UInt8(ascii: "a"), count: 4097), endOfInput: true)
    #expect(result.frames == ["<TOOLONG>"])
    #expect(result.rest == [])
    #expect(!framer.discarding)
  }

  @Test func endOfInputWhileDiscardingDropsTheRest() {
    var framer = LineFramer()
    _ = frames(&framer, Array(repeating: UInt8(ascii: "a"), count: 4097))
    let result = frames(&framer, Array("tail of the long line".utf8), endOfInput: true)
    #expect(result.frames == [])
    #expect(result.rest == [])
  }

  /// A 4096-byte line ending in CR LF whose LF has not arrived yet is not over-long: once the
  /// LF arrives the CR is dropped and the line is exactly at the limit.
  @Test func a4096ByteLineWhoseLFIsLateIsNotTooLong() {
    var framer = LineFramer()
    let line = Array(repeating: UInt8(ascii: "a"), count: 4096)
    let first = frames(&framer, line + [0x0D])
    #expect(first.frames == [])
    let second = frames(&framer, first.rest + [0x0A])
    #expect(second.frames.map(\.utf8.count) == [4096])
  }

  /// Answers the lone PINGs at the front of `text` with `limit`; returns how many, the reply
  /// and what is left for `next`.
  func pings(_ text: String, limit: Int = .max, discarding: Bool = false) -> (Int, String, String) {
    let framer = LineFramer(discarding: discarding)
    let bytes = Array(text.utf8)
    var position = 0
    var reply = OutputQueue()
    let answered = bytes.withUnsafeBufferPointer {
      framer.answerPings(in: $0, from: &position, limit: limit, reply: &reply)
    }
    return (
      answered, String(decoding: reply.unsentBytes, as: UTF8.self),
      String(decoding: bytes[position...], as: UTF8.self)
    )
  }

  @Test func lonePingsAreAnsweredWhereTheyAreFramed() {
    #expect(pings("PING\nping\r\nPiNg\nLIST\nPING\n") == (3, "OK\nOK\nOK\n", "LIST\nPING\n"))
    #expect(pings("PING\nPING\nPING\n", limit: 2) == (2, "OK\nOK\n", "PING\n"))
    let many = String(repeating: "PING\n", count: 40)
    #expect(pings(many) == (40, String(repeating: "OK\n", count: 40), ""))
  }

  @Test func anythingButALonePingIsLeftForTheService() {
    // What framing would not make exactly PING: words after it, spaces, a second CR, a line
    // not ended yet, or the end of an over-long line being skipped.
    for text in ["PING x\n", "PING \n", " PING\n", "PING\r\r\n", "PINGS\n", "PING", "PING\r", "PONG\n"] {
      #expect(pings(text) == (0, "", text))
    }
    #expect(pings("PING\n", discarding: true) == (0, "", "PING\n"))
  }

  @Test func skippingPingsStopsWhereAnsweringThemWould() {
    let bytes = Array("PING\nping\r\nPING x\n".utf8)
    var position = 0
    let passed = bytes.withUnsafeBufferPointer { LineFramer().skipPings(in: $0, from: &position, limit: 16) }
    #expect(passed == 2 && position == 11)
  }

  @Test func positionsFrameAsSlicesDo() {
    var framer = LineFramer()
    let bytes = Array("a\r\nbb\n\ncc".utf8)
    var position = 0
    var spans: [LineFramer.Span?] = []
    bytes.withUnsafeBufferPointer { buffer in
      for _ in 0..<4 { spans.append(framer.next(in: buffer, from: &position, endOfInput: true)) }
    }
    #expect(spans == [.line(0..<1), .line(3..<5), .line(6..<6), .line(7..<9)])
    #expect(position == bytes.count)
  }
}
