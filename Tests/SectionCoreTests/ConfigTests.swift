import Testing

@testable import SectionCore

@Suite struct ConfigTests {
  func parse(_ text: String) throws(ConfigError) -> Config {
    try Config.parse(Array(text.utf8), source: "/etc/s.json")
  }

  /// The message `text` is refused with, or nil when it is accepted.
  func refusal(_ text: String) -> String? {
    SectionCoreTests.refusal { () throws(ConfigError) in _ = try parse(text) }
  }

  /// A config with one section whose JSON members are `members`.
  func refusal(section members: String, mode: String? = nil) -> String? {
    let modePart = mode.map { "\"mode\": \"\($0)\", " } ?? ""
    return refusal("{\(modePart)\"sections\": [{\(members)}]}")
  }

  @Test func theExampleFromTheIssue() throws {
    let config = try parse(
      """
      { "mode": "exclusive",
        "sections": [ { "id": "fruit", "title": "Fruit", "items": ["apple", "pear"], "open": false },
                      { "title": "Vegetables", "items": ["leek"] } ] }
      """)
    #expect(
      config
        == Config(
          mode: .exclusive,
          sections: [
            Section(id: "fruit", title: "Fruit", items: ["apple", "pear"], initiallyOpen: false),
            Section(id: "vegetables", title: "Vegetables", items: ["leek"], initiallyOpen: false),
          ]))
  }

  @Test func defaults() throws {
    let config = try parse(#"{"sections": [{"title": "Only"}]}"#)
    #expect(config.mode == .multi)
    #expect(config.sections == [Section(id: "only", title: "Only", items: [], initiallyOpen: false)])
    let open = try parse(
      #"{"mode": "multi", "sections": [{"title": "A", "open": true}, {"title": "B", "open": true}]}"#)
    #expect(open.sections.map(\.initiallyOpen) == [true, true])
    let one = try parse(#"{"mode": "exclusive", "sections": [{"title": "A"}, {"title": "B", "open": true}]}"#)
    #expect(one.sections.map(\.initiallyOpen) == [false, true])
  }

  @Test func textMayBeAnyUTF8WithoutControlCharacters() throws {
    let config = try parse(
      #"{"sections": [{"id": "x", "title": "Äpfel & Birnen 🍐", "items": ["crème brûlée", " spaced "]}]}"#)
    #expect(config.sections[0].title == "Äpfel & Birnen 🍐")
    #expect(config.sections[0].items == ["crème brûlée", " spaced "])
  }

  @Test func idsMayUseLettersDigitsDashUnderscoreDot() throws {
    let config = try parse(#"{"sections": [{"id": "Ab-c_1.2", "title": "T"}, {"id": "x9", "title": "U"}]}"#)
    #expect(config.sections.map(\.id) == ["Ab-c_1.2", "x9"])
  }

  @Test(arguments: [
    ("Fruit", "fruit"),
    ("Fresh Fruit", "fresh-fruit"),
    ("  Fruit & Veg!  ", "fruit-veg"),
    ("A--B__C", "a-b-c"),
    ("Äpfel", "apfel"),
    ("Ünïcode Title", "unicode-title"),
    ("Straße Œuvre", "strasse-oeuvre"),
    ("日本 news", "news"),
    ("2 × 3", "2-3"),
    ("Top 10 (2024)", "top-10-2024"),
    ("x.y", "x-y"),
    ("MiXeD cAsE", "mixed-case"),
    ("!!!", ""),
    ("", ""),
  ])
  func derivedIDs(title: String, id: String) {
    #expect(Section.derivedID(fromTitle: title) == id)
  }

  /// Clients may empty the list at runtime, so a config may start it empty.
  @Test func anEmptyListIsAConfig() throws {
    #expect(try parse(#"{"sections": []}"#).sections.isEmpty)
  }

  /// MODE ignores case; so does the config's "mode".
  @Test func modeIgnoresCase() throws {
    #expect(try parse(#"{"mode": "Exclusive", "sections": [{"title": "A"}]}"#).mode == .exclusive)
    #expect(try parse(#"{"mode": "MULTI", "sections": [{"title": "A"}]}"#).mode == .multi)
  }

  @Test func derivedIDIsUsedWhenIDIsAbsent() throws {
    let config = try parse(#"{"sections": [{"title": "Fresh Fruit & Veg"}]}"#)
    #expect(config.sections[0].id == "fresh-fruit-veg")
  }

  // MARK: What is refused, with the file, the section and the rule

  @Test func notJSON() {
    #expect(
      refusal("{\"sections\": [}")
        == "/etc/s.json: not valid JSON: line 1, column 15: unexpected character '}', expected a value")
    #expect(
      refusal("")
        == "/etc/s.json: not valid JSON: line 1, column 1: unexpected end of input, expected a value")
  }

  @Test func topLevel() {
    #expect(refusal("[]") == "/etc/s.json: the top level must be an object with \"sections\", found an array")
    #expect(refusal("{}") == "/etc/s.json: \"sections\" must be an array of sections")
    #expect(refusal(#"{"sections": {}}"#) == "/etc/s.json: \"sections\" must be an array of sections")
    #expect(
      refusal(#"{"sections": [{"title": "A"}], "colour": 1}"#)
        == "/etc/s.json: top level: unknown key \"colour\" (known: mode, sections)")
    #expect(
      refusal(#"{"sections": [{"title": "A"}], "sections": []}"#)
        == "/etc/s.json: top level: key \"sections\" appears twice")
  }

  @Test func mode() {
    #expect(
      refusal(#"{"mode": "accordion", "sections": [{"title": "A"}]}"#)
        == "/etc/s.json: \"mode\" must be \"multi\" or \"exclusive\", found \"accordion\"")
    #expect(
      refusal(#"{"mode": 1, "sections": [{"title": "A"}]}"#)
        == "/etc/s.json: \"mode\" must be \"multi\" or \"exclusive\", found 1")
  }

  @Test func sectionShape() {
    #expect(
      refusal(#"{"sections": [{"title": "A"}, "B"]}"#)
        == "/etc/s.json: section 1: must be an object with \"title\" and \"items\", found a string")
    #expect(
      refusal(section: #""title": "A", "name": "x""#)
        == "/etc/s.json: section 0: unknown key \"name\" (known: id, title, items, open)")
    #expect(
      refusal(section: #""title": "A", "title": "B""#)
        == "/etc/s.json: section 0: key \"title\" appears twice")
  }

  @Test func title() {
    #expect(
      refusal(section: #""items": ["x"]"#) == "/etc/s.json: section 0: \"title\" is missing or not a string")
    #expect(
      refusal(section: #""title": 3"#) == "/etc/s.json: section 0: \"title\" is missing or not a string")
    #expect(refusal(section: #""title": """#) == "/etc/s.json: section 0: title is empty")
    #expect(
      refusal(section: #""title": "two\nlines""#)
        == "/etc/s.json: section 0: title contains control character U+A; titles and items are single lines of plain text"
    )
  }

  @Test(arguments: [
    ("\\t", "9"), ("\\r", "D"), ("\\u0000", "0"), ("\\u001b", "1B"), ("\\u007f", "7F"), ("\\u0085", "85"),
    ("\\u2028", "2028"), ("\\u2029", "2029"),
  ])
  func controlCharactersInTitlesAndItems(escape: String, code: String) {
    #expect(
      refusal(section: "\"id\": \"s\", \"title\": \"a\(escape)b\"")
        == "/etc/s.json: section 0: title contains control character U+\(code); titles and items are single lines of plain text"
    )
    #expect(
      refusal(section: "\"title\": \"T\", \"items\": [\"ok\", \"a\(escape)b\"]")
        == "/etc/s.json: section 0 (\"T\"): item 1 contains control character U+\(code); titles and items are single lines of plain text"
    )
  }

  @Test func items() {
    #expect(
      refusal(section: #""title": "T", "items": "x""#)
        == "/etc/s.json: section 0 (\"T\"): \"items\" must be an array of strings")
    #expect(
      refusal(section: #""title": "T", "items": ["a", 2]"#)
        == "/etc/s.json: section 0 (\"T\"): item 1 must be a string, found a number")
    #expect(
      refusal(section: #""title": "T", "items": [""]"#) == "/etc/s.json: section 0 (\"T\"): item 0 is empty")
  }

  @Test func open() {
    #expect(
      refusal(section: #""title": "T", "open": "yes""#)
        == "/etc/s.json: section 0 (\"T\"): \"open\" must be true or false, found a string")
    #expect(
      refusal(section: #""title": "T", "open": null"#)
        == "/etc/s.json: section 0 (\"T\"): \"open\" must be true or false, found null")
  }

  @Test func ids() {
    #expect(
      refusal(section: #""title": "T", "id": 5"#)
        == "/etc/s.json: section 0 (\"T\"): \"id\" must be a string, found a number")
    #expect(
      refusal(section: #""title": "T", "id": """#)
        == "/etc/s.json: section 0 (\"T\"): id is empty; give the section an \"id\" of letters and digits")
    #expect(
      refusal(section: #""title": "T", "id": "123""#)
        == "/etc/s.json: section 0 (\"T\"): id \"123\" is all digits, which would read as an index; add a letter"
    )
    #expect(
      refusal(section: #""title": "T", "id": "all""#)
        == "/etc/s.json: section 0 (\"T\"): id \"all\" is reserved for OPEN ALL and CLOSE ALL; choose another"
    )
    #expect(
      refusal(section: #""title": "T", "id": "ALL""#)?.contains("is reserved for OPEN ALL and CLOSE ALL")
        == true)
    #expect(
      refusal(section: #""title": "T", "id": "a b""#)
        == "/etc/s.json: section 0 (\"T\"): id \"a b\" may contain only the ASCII letters a-z and A-Z, digits, '-', '_' and '.'"
    )
    #expect(
      refusal(section: #""title": "T", "id": "a,b""#)?.hasSuffix(
        "may contain only the ASCII letters a-z and A-Z, digits, '-', '_' and '.'") == true)
    #expect(
      refusal(section: #""title": "T", "id": "é""#)?.hasSuffix(
        "may contain only the ASCII letters a-z and A-Z, digits, '-', '_' and '.'") == true)
  }

  @Test func derivedIDsObeyTheSameRules() {
    #expect(
      refusal(section: #""title": "!!!""#)
        == "/etc/s.json: section 0 (\"!!!\"): the id derived from the title is empty; give the section an \"id\" of letters and digits"
    )
    #expect(
      refusal(section: #""title": "2024""#)
        == "/etc/s.json: section 0 (\"2024\"): the id derived from the title \"2024\" is all digits, which would read as an index; add a letter"
    )
    #expect(
      refusal(section: #""title": "All""#)
        == "/etc/s.json: section 0 (\"All\"): the id derived from the title \"all\" is reserved for OPEN ALL and CLOSE ALL; choose another"
    )
    // A title that would be refused this way is fine with an explicit id.
    #expect(refusal(section: #""title": "2024", "id": "y2024""#) == nil)
  }

  @Test func uniqueIDs() {
    #expect(
      refusal(
        #"{"sections": [{"title": "Fruit"}, {"title": "Veg"}, {"id": "fruit", "title": "More fruit"}]}"#)
        == "/etc/s.json: section 2 (\"More fruit\"): id \"fruit\" is already used by section 0; ids must be unique"
    )
    #expect(
      refusal(#"{"sections": [{"title": "Fruit!"}, {"title": "fruit"}]}"#)
        == "/etc/s.json: section 1 (\"fruit\"): id \"fruit\" is already used by section 0; ids must be unique"
    )
    // Ids are case-sensitive.
    #expect(refusal(#"{"sections": [{"id": "a", "title": "A"}, {"id": "A", "title": "B"}]}"#) == nil)
  }

  @Test func exclusiveWithTwoOpenIsRefused() throws {
    let message = try #require(
      refusal(
        #"{"mode": "exclusive", "sections": [{"title": "A", "open": true}, {"title": "B", "open": true}]}"#))
    #expect(message.hasPrefix("/etc/s.json: "))
    #expect(message.contains("exclusive mode opens at most one section"))
  }

  /// The issue: every refusal "names the file, the section and the rule". This one names no section.
  @Test func exclusiveWithTwoOpenNamesTheSection() throws {
    let message = try #require(
      refusal(
        #"{"mode": "exclusive", "sections": [{"title": "A", "open": true}, {"title": "B"}, {"title": "C", "open": true}]}"#
      ))
    #expect(message.contains("section 2"), "\(message)")
  }

  @Test func demo() {
    #expect(Config.demo.mode == .multi)
    #expect(Config.demo.sections.map(\.id) == ["first", "second", "third"])
    #expect(Config.demo.sections.map(\.title) == ["First", "Second", "Third"])
    #expect(Config.demo.sections[0].items == ["1", "2", "3", "4", "5", "6", "1", "2", "3", "4"])
    #expect(Config.demo.sections[1].items == ["1", "2", "3", "4", "5", "6", "7", "8"])
    #expect(Config.demo.sections[2].items == ["1", "2", "3", "4", "5", "6"])
    #expect(Config.demo.sections.allSatisfy { !$0.initiallyOpen })
  }
}
