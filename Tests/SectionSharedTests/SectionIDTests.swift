import Testing

@testable import SectionShared

/// The rule for a section's id: a word that never splits a protocol line or a list, never
/// reads as an index, and is not `all`.
@Suite struct SectionIDTests {
  @Test(arguments: ["a", "media", "status-bar", "v1.2_x", "2fa", "ALLx"])
  func wordsAreIds(_ id: String) {
    #expect(SectionID.problem(id) == nil)
  }

  /// Each refused id with a word of its reason, so that the error names what to change.
  @Test(arguments: [
    ("", "empty"), ("42", "all digits"), ("all", "reserved"), ("ALL", "reserved"),
    ("a b", "may contain only"), ("a,b", "may contain only"), ("é", "may contain only"),
    ("a\u{1b}", "may contain only"),
  ])
  func otherIdsAreRefusedWithTheirReason(_ id: String, _ reason: String) throws {
    let problem = try #require(SectionID.problem(id))
    #expect(problem.contains(reason))
  }
}
