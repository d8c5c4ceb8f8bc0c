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
}
