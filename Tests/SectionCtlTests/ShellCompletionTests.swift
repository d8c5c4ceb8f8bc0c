import Testing

@testable import SectionClient
@testable import SectionCtl

/// Tab in the shell completes by the word's position (`open t` once gave `open toggle`).
@Suite struct ShellCompletionTests {
  private let ids = ["today", "third", "net", "0", "1", "2"]

  private func complete(_ line: String) -> [String] {
    let word = line.hasSuffix(" ") ? "" : String(line.split(separator: " ").last ?? "")
    let before = String(line.dropLast(word.count))
    return ShellCompletion.candidates(for: word, after: before) { ids }
  }

  @Test func theFirstWordIsACommandOrAnUpperCaseVerb() {
    #expect(complete("tog") == ["toggle"])
    #expect(complete("qu") == ["quit"])
    #expect(complete("TOG") == ["TOGGLE"])
    #expect(complete("RE").sorted() == ["RELOAD", "RENAME"])
  }

  @Test func sectionsComeWhereACommandTakesThem() {
    #expect(complete("open t") == ["today", "third"])
    #expect(complete("toggle n") == ["net"])
    #expect(complete("toggle net t") == ["today", "third"])
    #expect(complete("item add t") == ["today", "third"])
    #expect(complete("rm --json 1") == ["1"])
    #expect(complete("OPEN ") == ["ALL"] + ids)
    #expect(complete("ITEM INSERT n") == ["net"])
  }

  @Test func modesAndItemActions() {
    #expect(complete("mode e") == ["exclusive"])
    #expect(complete("MODE m") == ["multi"])
    #expect(complete("item s") == ["set"])
    #expect(complete("ITEM D") == ["DELETE"])
  }

  @Test func nothingWhereAWordIsFreeText() {
    #expect(complete("rename net t") == [])
    #expect(complete("add t") == [])
    #expect(complete("item add net t") == [])
    #expect(complete("mode exclusive m") == [])
    #expect(complete("add --at 1 t") == [])
  }

  @Test func theDaemonIsAskedOnlyWhereASectionIsWanted() {
    var asked = 0
    _ = ShellCompletion.candidates(for: "e", after: "mode ") {
      asked += 1
      return []
    }
    #expect(asked == 0)
  }
}
