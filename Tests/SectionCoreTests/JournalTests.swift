import Testing

@testable import SectionCore

@Suite struct JournalTests {
  /// A model with every kind of change made to it, the changes, and their journal.
  func edited() throws -> (SectionModel, [Change], [UInt8]) {
    var model = SectionModel(config: abc(.exclusive))
    let changes = try editEveryWay(&model)
    var journal: [UInt8] = []
    for change in changes { Journal.append(change, to: &journal) }
    Journal.appendCommit(revision: model.revision, to: &journal)
    return (model, changes, journal)
  }

  @Test func everyChangeReadsBack() throws {
    let (model, changes, journal) = try edited()
    let groups = try Journal.decode(journal)
    #expect(groups.count == 1)
    #expect(groups[0].revision == model.revision)
    #expect(groups[0].changes.map(Journal.line) == changes.map(Journal.line))
    #expect(groups[0].changes.count == 13)
  }

  @Test func replayLeadsToTheSameState() throws {
    let (model, _, journal) = try edited()
    let start = SavedState(SectionModel(config: abc(.exclusive)))
    let replayed = try start.replaying(try Journal.decode(journal))
    #expect(replayed == SavedState(model))
    #expect(SectionModel(config: abc(.exclusive), saved: replayed) == model)
  }

  @Test func groupsTheStateFileHoldsAreSkipped() throws {
    let (model, _, journal) = try edited()
    #expect(try SavedState(model).replaying(try Journal.decode(journal)) == SavedState(model))
  }

  @Test func aTornLastGroupIsIgnoredWhole() throws {
    let (_, _, journal) = try edited()
    let start = SavedState(SectionModel(config: abc(.exclusive)))
    var twoGroups: [UInt8] = Array("open 1 0\ncommit 1\n".utf8)
    twoGroups += Array("close 2 0\nopen 3 1\ncommit 3\n".utf8)
    for cut in 0..<twoGroups.count {
      let groups = try Journal.decode(Array(twoGroups[..<cut]))
      let state = try start.replaying(groups)
      #expect(state.revision == (cut < 18 ? 0 : cut < twoGroups.count ? 1 : 3), "cut at \(cut)")
    }
    #expect(try Journal.decode(Array(journal.dropLast())).isEmpty)
  }

  @Test func aJournalOfAnotherListIsRefused() throws {
    let (_, _, journal) = try edited()
    let other = SavedState(SectionModel(config: config(.multi, [("z", [], false)])))
    #expect(throws: ConfigError.self) { try other.replaying(try Journal.decode(journal)) }
    #expect(throws: ConfigError.self) { try Journal.decode(Array("open x 1\ncommit 1\n".utf8)) }
    #expect(throws: ConfigError.self) { try Journal.decode(Array("frob 1 1\ncommit 1\n".utf8)) }
  }
}
