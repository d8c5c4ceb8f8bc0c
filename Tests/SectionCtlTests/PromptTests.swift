import Testing

@testable import SectionClient
@testable import SectionCtl

/// The ui's prompt line edits as a shell's line does (Ctrl-U on "Release notes"
/// then "Notes" once saved "Release notesNotes").
@Suite struct PromptTests {
  private func typed(_ start: String, _ keys: [Key]) -> Prompt {
    var prompt = Prompt(question: "rename notes", purpose: .rename(id: "notes"), text: start)
    for key in keys { _ = prompt.edit(key) }
    return prompt
  }

  private func characters(_ text: String) -> [Key] { text.map { .character($0) } }

  @Test func ctrlUDeletesWhatIsBeforeTheCursor() throws {
    let prompt = typed("Release notes", [.control("U")] + characters("Notes"))
    #expect(prompt.text == "Notes")
    #expect(try prompt.request().get().lines == ["RENAME notes Notes"])
  }

  @Test func ctrlWDeletesTheWordBeforeTheCursorAndItsSpaces() {
    #expect(typed("Release notes", [.control("W")]).text == "Release ")
    #expect(typed("Release notes  ", [.control("W")]).text == "Release ")
    #expect(typed("one", [.control("W"), .control("W")]).text == "")
  }

  @Test func theCursorMovesAndTypingGoesWhereItIs() {
    #expect(typed("Notes", [.home] + characters("Release ")).text == "Release Notes")
    #expect(typed("Notes", [.control("A"), .control("F"), .control("F")] + characters("-")).text == "No-tes")
    #expect(typed("Notes", [.left, .left, .backspace]).text == "Noes")
    #expect(typed("Notes", [.left, .left, .delete]).text == "Nots")
    #expect(typed("Notes", [.home, .control("D")]).text == "otes")
    #expect(typed("Notes", [.control("A"), .right, .control("K")]).text == "N")
    #expect(typed("Notes", [.home, .control("E")] + characters("!")).text == "Notes!")
  }

  @Test func editsAtTheEdgesChangeNothing() {
    #expect(typed("ab", [.home, .backspace, .left]).text == "ab")
    #expect(typed("ab", [.delete, .right, .control("K")]).text == "ab")
    #expect(typed("", [.control("U"), .control("W")]).cursor == 0)
  }

  @Test func keysThatAreNotEditsAreLeftToTheUI() {
    var prompt = Prompt(question: "q", purpose: .rename(id: "a"))
    let edited = [Key.enter, .up, .control("L")].map { prompt.edit($0) }
    #expect(edited == [false, false, false])
  }

  @Test func theLineShowsTheCursorWhereItIs() {
    let prompt = typed("Notes", [.left, .left])
    #expect(prompt.line(columns: 80, unicode: false) == " rename notes: Not_es")
    // Too narrow: what follows the cursor goes first, then the start; the cursor stays.
    let narrow = prompt.line(columns: 12, unicode: false)
    #expect(narrow.contains("Not_"))
    #expect(DisplayWidth.of(narrow) <= 12)
  }
}
