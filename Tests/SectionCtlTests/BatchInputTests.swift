import Testing

@testable import SectionClient
@testable import SectionCtl

/// `sectionctl batch` checks its whole input before it sends anything.
@Suite struct BatchInputTests {
  private func refusal(_ text: String) -> String? {
    do {
      _ = try BatchInput.lines(Array(text.utf8))
      return nil
    } catch {
      guard case .usage(let text) = error else { return "not a usage error: \(error)" }
      return text
    }
  }

  /// Blank lines go too, so that the daemon's "line N" is the input's line N.
  @Test func linesAreSentWithoutCRs() throws {
    #expect(
      try BatchInput.lines(Array("TOGGLE 0\r\n\n  \t\nRENAME 1 New title\n".utf8))
        == ["TOGGLE 0", "", "  \t", "RENAME 1 New title"])
    #expect(try BatchInput.lines(Array("OPEN 1".utf8)) == ["OPEN 1"])
    #expect(try BatchInput.lines([]) == [])
    // An id or a title that merely starts like END is a line like any other.
    #expect(try BatchInput.lines(Array("RENAME 0 end\nINSERT end ending Endings\n".utf8)).count == 2)
  }

  /// sectionctl's own edit words are not requests: the refusal shows the request to write.
  @Test func sectionctlCommandsAreRefusedWithTheirRequestLines() {
    #expect(refusal("add x X\n")?.contains("'add x X', a sectionctl command") == true)
    #expect(refusal("add x X\n")?.contains("here 'INSERT end x X'") == true)
    #expect(refusal("TOGGLE 0\nitem add x Buy milk\n")?.contains("line 2") == true)
    #expect(refusal("item add x Buy milk\n")?.contains("'ITEM INSERT x end Buy milk'") == true)
    #expect(refusal("rm 2\n")?.contains("'DELETE 2'") == true)
    // Words that are requests as well (the daemon takes verbs in any case) pass.
    #expect(refusal("open 1\nrename 0 New\nitem set x 0 text\n") == nil)
  }

  /// The reproduction: `end` ended the batch after line 1, and lines 3 and 4 ran on their own.
  @Test func aLineThatWouldEndTheBatchEarlyIsRefused() {
    let message = refusal("TOGGLE 0\nend\nTOGGLE 1\nDELETE second\n")
    #expect(message?.contains("line 2 of standard input is 'end'") == true, "\(message ?? "accepted")")
    #expect(message?.contains("nothing was sent") == true)
    #expect(refusal("TOGGLE 0\n  END  \n")?.contains("line 2") == true)
    #expect(refusal("\nBATCH\nTOGGLE 0\n")?.contains("line 2 of standard input is 'BATCH'") == true)
    #expect(refusal("TOGGLE 0\n\tEnd\tnow\n") != nil)
  }

  @Test func invalidUTF8IsRefusedNotReplaced() {
    var bytes = Array("TOGGLE 0\nRENAME 0 caf".utf8)
    bytes += [0xE9, 0x0A]
    do {
      _ = try BatchInput.lines(bytes)
      Issue.record("accepted invalid UTF-8")
    } catch {
      #expect(error.exitStatus == .usage)
      #expect(
        error.diagnostic.contains(#"line 2 of standard input is not valid UTF-8 (RENAME 0 caf\xe9)"#),
        "\(error.diagnostic)")
    }
  }
}
