import Testing

@testable import SectionCore

/// The level a whole batch needs (`Batch.level`), which the bus asks polkit for before it runs
/// a caller's Batch: that of its highest line, and never less than END's.
@Suite struct BatchLevelTests {
  static func batch(_ lines: [String]) -> Batch {
    var batch = Batch()
    for line in lines { batch.add(ArraySlice(line.utf8), limit: 100) }
    return batch
  }

  @Test func openingAndClosingIsOperate() {
    #expect(Self.batch(["OPEN a", "CLOSE b", "TOGGLE 0", "OPEN ALL", "CLOSE ALL"]).level == .operate)
  }

  @Test func oneEditMakesTheWholeBatchEdit() {
    #expect(Self.batch(["OPEN a", "INSERT end x X", "CLOSE b"]).level == .edit)
    #expect(Self.batch(["CLOSE a", "MODE exclusive"]).level == .edit)
    #expect(Self.batch(["ITEM SET a 0 y"]).level == .edit)
  }

  /// A line that does not parse refuses the batch when it is applied; it asks for no level.
  @Test func aLineThatDoesNotParseNeedsNoMore() {
    #expect(Self.batch(["OPEN a", "FROBNICATE", ""]).level == .operate)
    #expect(Self.batch([]).level == .operate)
  }
}
