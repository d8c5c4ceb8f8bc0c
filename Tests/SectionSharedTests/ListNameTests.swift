import Testing

@testable import SectionShared

/// The names of lists: what a directory, a file, a unit instance and a bus name
/// element all take unescaped.
@Suite struct ListNameTests {
  @Test(arguments: ["a", "media", "status-bar", "kiosk_2", "a0", String(repeating: "z", count: 32)])
  func goodNamesAreTaken(_ name: String) throws {
    #expect(try ListName(validating: name).rawValue == name)
  }

  @Test(arguments: [
    "", "../x", "A", "Media", String(repeating: "a", count: 33), "0a", "-a", "_a", "a.b", "a/b", "a b",
    "é", "a\n", ".",
  ])
  func badNamesAreRefusedWithTheRule(_ name: String) {
    #expect(throws: ListName.Invalid.self) { try ListName(validating: name) }
    do {
      _ = try ListName(validating: name)
    } catch {
      #expect("\(error)".hasSuffix(ListName.rule))
      #expect(!"\(error)".contains("\n"))
    }
  }

  @Test func theBusElementIsTheNameSoTwoListsNeverShareOne() throws {
    #expect(try ListName(validating: "status-bar").busElement == "status-bar")
    #expect(try ListName(validating: "kiosk_2").busElement == "kiosk_2")
    #expect(try ListName(validating: "a-b").busElement != ListName(validating: "a_b").busElement)
  }
}
