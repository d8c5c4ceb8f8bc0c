import Posix
import Testing

@testable import SectionClient

/// Reading the daemon's lines is linear and bounded (a 20 MB line once took 4.96 s).
@Suite struct LineReaderTests {
  @Test func linesAcrossReads() throws {
    var reader = LineReader(path: "/s")
    reader.append(ArraySlice("OK 1\r\nsection 0 a op".utf8))
    #expect(try reader.nextLine() == "OK 1")
    #expect(try reader.nextLine() == nil)
    reader.append(ArraySlice("en 0 A\n\n".utf8))
    #expect(try reader.nextLine() == "section 0 a open 0 A")
    #expect(try reader.nextLine() == "")
    #expect(try reader.nextLine() == nil)
    reader.append([0x69, 0x74, 0xFF, 0x0A])
    #expect(try reader.nextLine() == #"it\xff"#)
  }

  /// Many lines straddling reads of every size: the lines already taken are dropped as the
  /// buffer grows, and what is left is found again.
  @Test func manyLinesInReadsOfAnySize() throws {
    let text = (0..<5000).map { "item 0 \($0) item number \($0) with some padding text\n" }.joined()
    for size in [1, 7, 100, 4096, 65536] {
      var reader = LineReader(path: "/s")
      var lines: [String] = []
      var bytes = Array(text.utf8)[...]
      while !bytes.isEmpty {
        reader.append(bytes.prefix(size))
        bytes = bytes.dropFirst(size)
        while let line = try reader.nextLine() { lines.append(line) }
      }
      #expect(
        lines.count == 5000 && lines.last == "item 0 4999 item number 4999 with some padding text", "\(size)")
    }
  }

  /// 20 MB in 64 KiB reads, as a socket delivers it: each byte is searched once. The old
  /// reader searched the whole line again at every read (minutes for this in a debug build).
  @Test func aLongLineIsReadInLinearTime() throws {
    var reader = LineReader(path: "/s")
    let chunk = ArraySlice([UInt8](repeating: 0x78, count: 65536))
    let start = monotonicMicroseconds()
    for _ in 0..<320 {
      reader.append(chunk)
      #expect(try reader.nextLine() == nil)
    }
    reader.append(ArraySlice("\nOK\n".utf8))
    #expect(try reader.nextLine()?.utf8.count == 320 * 65536)
    #expect(try reader.nextLine() == "OK")
    let seconds = Double(monotonicMicroseconds() - start) / 1e6
    #expect(seconds < 3, "20 MB line read in \(seconds) s")
  }

  @Test func aLineOverTheLimitIsRefusedBeforeItAllArrives() {
    var reader = LineReader(path: "/run/s.sock")
    let chunk = ArraySlice([UInt8](repeating: 0x78, count: 1 << 20))
    var refused: ClientError?
    for _ in 0..<(LineReader.maximumLineLength >> 20) + 2 where refused == nil {
      reader.append(chunk)
      do { _ = try reader.nextLine() } catch { refused = error }
    }
    #expect(refused == .lineTooLong(path: "/run/s.sock"))
    #expect(refused?.message.contains("longer than 64 MiB") == true)
  }
}
