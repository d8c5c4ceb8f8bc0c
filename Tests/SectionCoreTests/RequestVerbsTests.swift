import SectionShared
import Testing

@testable import SectionCore

@Suite struct RequestVerbsTests {
  /// The verbs clients offer (sectionctl's shell completes them) are the daemon's, every one,
  /// in the order of its table: a verb added to `Verb` fails here until the list has it.
  @Test func theSharedListIsTheDaemonsTable() {
    #expect(RequestVerbs.names == Verb.allCases.map(\.name))
  }
}
