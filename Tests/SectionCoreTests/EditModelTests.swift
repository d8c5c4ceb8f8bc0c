import Testing

@testable import SectionCore

@Suite struct EditModelTests {
  let limits = EditLimits()

  @Test func insertDeleteMoveRenameEachCountOne() throws {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    try model.insert(id: "n", title: "New", at: 1, limits: limits, changes: &changes)
    #expect(model.sections.map(\.id) == ["a", "n", "b", "c"])
    #expect(model.openedAt == [nil, nil, nil, nil])
    try model.move(1, to: 3, changes: &changes)
    #expect(model.sections.map(\.id) == ["a", "b", "c", "n"])
    try model.rename(3, to: "Newer", limits: EditLimits(), changes: &changes)
    model.delete(0, changes: &changes)
    #expect(model.sections.map(\.id) == ["b", "c", "n"])
    #expect(model.deletedConfigIDs == ["a"])
    #expect(model.itemCount == 1)
    #expect(
      changes == [
        .inserted(revision: 1, index: 1, section: Section(id: "n", title: "New", items: [], origin: .client)),
        .moved(revision: 2, from: 1, to: 3, id: "n"),
        .renamed(revision: 3, index: 3, id: "n", title: "Newer", previous: "New"),
        .deleted(revision: 4, index: 0, section: abc().sections[0], openSince: nil),
      ])
    #expect(model.revision == 4)
  }

  @Test func itemEdits() throws {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    try model.editItems(0, .insert(at: 2, text: "a3"), limits: limits, changes: &changes)
    try model.editItems(0, .move(from: 2, to: 0), limits: limits, changes: &changes)
    try model.editItems(0, .set(at: 1, text: "one"), limits: limits, changes: &changes)
    try model.editItems(0, .delete(at: 2), limits: limits, changes: &changes)
    #expect(model.sections[0].items == ["a3", "one"])
    #expect(model.editedConfigIDs == ["a"])
    #expect(model.itemCount == 3)
    #expect(changes.map(\.revision) == [1, 2, 3, 4])
    #expect(
      changes.last == .items(revision: 4, index: 0, id: "a", edit: .delete(at: 2), count: 2, previous: "a2"))
  }

  @Test func noOpsChangeNothing() throws {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    try model.move(1, to: 1, changes: &changes)
    try model.rename(0, to: "A", limits: EditLimits(), changes: &changes)
    try model.editItems(0, .move(from: 1, to: 1), limits: limits, changes: &changes)
    try model.editItems(0, .set(at: 0, text: "a1"), limits: limits, changes: &changes)
    #expect(changes.isEmpty)
    #expect(model == SectionModel(config: abc()))
  }

  func refusal(_ body: (inout SectionModel, inout [Change]) throws -> Void) -> String? {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    do {
      try body(&model, &changes)
      return nil
    } catch {
      #expect(model == SectionModel(config: abc()), "a refused edit changed the model")
      guard let error = error as? ProtocolError else { return "\(error)" }
      return "\(error.code.rawValue) \(error.message)"
    }
  }

  /// The ids are kept in a set beside the list: a deleted section's id, and the id of an
  /// insert that was undone, are free again; an id in use is not.
  @Test func anIDIsFreeOnceItsSectionIsGone() throws {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    model.delete(1, changes: &changes)
    try model.insert(id: "b", title: "Again", at: 0, limits: limits, changes: &changes)
    let checkpoint = model.checkpoint
    var undone: [Change] = []
    try model.insert(id: "n", title: "N", at: 0, limits: limits, changes: &undone)
    model.restore(checkpoint, undoing: undone)
    try model.insert(id: "n", title: "N", at: 3, limits: limits, changes: &changes)
    #expect(model.sections.map(\.id) == ["b", "a", "c", "n"])
    #expect(model.sectionIDs == ["a", "b", "c", "n"])
    #expect(throws: ProtocolError.self) {
      try model.insert(id: "c", title: "C", at: 0, limits: limits, changes: &changes)
    }
  }

  /// A section's fields sit behind one shared reference: changing a copy must leave the
  /// original as it was (what a reload's rollback copy relies on).
  @Test func aCopiedSectionChangesAlone() throws {
    let original = SectionModel(config: abc())
    var model = original
    var changes: [Change] = []
    try model.editItems(0, .insert(at: 0, text: "new"), limits: limits, changes: &changes)
    try model.rename(0, to: "Renamed", limits: EditLimits(), changes: &changes)
    #expect(original.sections[0].items == ["a1", "a2"])
    #expect(original.sections[0].title == "A")
    #expect(model.sections[0].items == ["new", "a1", "a2"])
    #expect(model.sections[0] != original.sections[0])
    #expect(model.sections[1] == original.sections[1])
  }

  @Test func badEditsAreRefusedAndChangeNothing() {
    let limits = self.limits
    #expect(
      refusal { try $0.insert(id: "x", title: "X", at: 4, limits: limits, changes: &$1) }
        == "RANGE index 4 is past the end: there are 3 sections; use 0-3 or end")
    #expect(
      refusal { try $0.insert(id: "b", title: "X", at: 0, limits: limits, changes: &$1) }
        == "EXISTS id \"b\" is already used by section 1; ids must be unique")
    #expect(
      refusal { try $0.insert(id: "12", title: "X", at: 0, limits: limits, changes: &$1) }
        == "SYNTAX id \"12\" is all digits, which would read as an index; add a letter")
    #expect(
      refusal { try $0.insert(id: "a/b", title: "X", at: 0, limits: limits, changes: &$1) }
        == "SYNTAX id \"a/b\" may contain only the ASCII letters a-z and A-Z, digits, '-', '_' and '.'")
    #expect(
      refusal { try $0.insert(id: "x", title: "bad\u{85}", at: 0, limits: limits, changes: &$1) }
        == "SYNTAX title contains control character U+85; titles and items are single lines of plain text")
    #expect(
      refusal { try $0.move(0, to: 3, changes: &$1) }
        == "RANGE index 3 is past the end: there are 3 sections (0-2)")
    #expect(
      refusal { try $0.editItems(2, .delete(at: 0), limits: limits, changes: &$1) }
        == "NOITEM no item 0 in section \"c\": it has 0 items; it has none")
    #expect(
      refusal { try $0.editItems(0, .insert(at: 3, text: "x"), limits: limits, changes: &$1) }
        == "NOITEM no item 3 in section \"a\": it has 2 items; use 0-2 or end")
    #expect(
      refusal { try $0.editItems(0, .move(from: 0, to: 2), limits: limits, changes: &$1) }
        == "NOITEM no item 2 in section \"a\": it has 2 items; use 0-1")
  }

  @Test func limitsAreKept() {
    var small = EditLimits()
    small.sections = 3
    small.itemsPerSection = 2
    small.items = 4
    #expect(
      refusal { try $0.insert(id: "x", title: "X", at: 0, limits: small, changes: &$1) }
        == "LIMIT sections: at most 3 (sectiond --max-sections)")
    #expect(
      refusal { try $0.editItems(0, .insert(at: 0, text: "x"), limits: small, changes: &$1) }
        == "LIMIT items per section: at most 2 (sectiond --max-section-items)")
    small.items = 3
    #expect(
      refusal { try $0.editItems(2, .insert(at: 0, text: "x"), limits: small, changes: &$1) }
        == "LIMIT items: at most 3 in all (sectiond --max-items)")
  }

  @Test func exclusiveModeDeletingTheOpenSectionLeavesNoneOpen() throws {
    var model = SectionModel(config: abc(.exclusive, open: ["b"]))
    var changes: [Change] = []
    try model.insert(id: "n", title: "N", at: 0, limits: limits, changes: &changes)
    #expect(model.openIndices == [2])
    model.delete(2, changes: &changes)
    #expect(model.openIndices == [])
    model.open(0, changes: &changes)
    #expect(model.openIndices == [0])
  }

  // MARK: The config and clients' edits

  func merged(
    _ current: [Section], deleted: Set<String> = [], edited: Set<String> = [], _ config: [Section]
  ) -> ([String], Set<String>) {
    let (list, stillDeleted, _) = SectionModel.merged(current, deleted: deleted, edited: edited, with: config)
    return (list.map { "\($0.id)\($0.title == $0.id.uppercased() ? "" : ":" + $0.title)" }, stillDeleted)
  }

  func section(_ id: String, _ origin: Section.Origin = .config, title: String? = nil) -> Section {
    Section(id: id, title: title ?? id.uppercased(), items: [], origin: origin)
  }

  @Test func withoutEditsAReloadGivesTheConfig() {
    #expect(
      merged([section("a"), section("b")], [section("c"), section("b", title: "Bee")]).0 == ["c", "b:Bee"])
  }

  @Test func clientSectionsStayAfterTheSectionTheyFollow() {
    let current = [
      section("n", .client), section("a"), section("x", .client), section("y", .client), section("b"),
    ]
    #expect(
      merged(current, [section("b"), section("new"), section("a")]).0 == ["n", "b", "new", "a", "x", "y"])
    // Their anchor gone, they follow the nearest section before it that stays.
    #expect(merged(current, [section("b")]).0 == ["n", "x", "y", "b"])
  }

  @Test func editedConfigSectionsAreTheClients() {
    let current = [section("a", title: "Mine"), section("b")]
    #expect(
      merged(current, edited: ["a"], [section("b"), section("a", title: "Theirs")]).0 == ["a:Mine", "b"])
    #expect(merged(current, edited: ["a"], [section("b")]).0 == ["a:Mine", "b"])
    #expect(merged(current, [section("b"), section("a", title: "Theirs")]).0 == ["b", "a:Theirs"])
  }

  @Test func deletedConfigSectionsStayDeleted() {
    let (list, deleted) = merged([section("b")], deleted: ["a", "gone"], [section("a"), section("b")])
    #expect(list == ["b"])
    #expect(deleted == ["a"])
  }

  @Test func aClientSectionKeepsItsIDAgainstTheConfig() {
    #expect(merged([section("a", .client, title: "Mine")], [section("a")]).0 == ["a:Mine"])
  }

  @Test func reloadKeepsClientEditsAndTheirState() throws {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    try model.insert(id: "n", title: "N", at: 1, limits: limits, changes: &changes)
    model.open(1, changes: &changes)
    model.delete(3, changes: &changes)
    model.reload(
      config(.multi, [("a", [], false), ("c", ["c1"], false), ("d", [], false)]), changes: &changes)
    #expect(model.sections.map(\.id) == ["a", "n", "d"])
    #expect(model.openIndices == [1])
    #expect(model.itemCount == 0)
    #expect(changes.last == .reloaded(revision: 4))
  }

  @Test func undoingRestoresTheModelExactly() throws {
    for start in [
      SectionModel(config: abc(.exclusive, open: ["b"])), SectionModel(config: abc(open: ["a", "c"])),
    ] {
      var model = start
      let checkpoint = model.checkpoint
      var changes = try editEveryWay(&model)
      if model.mode == .multi { model.openAll(changes: &changes) } else { model.closeAll(changes: &changes) }
      #expect(model != start)
      model.restore(checkpoint, undoing: changes)
      #expect(model == start)
    }
  }

  @Test func aRestartWithAChangedConfigKeepsClientEdits() throws {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    try model.insert(id: "n", title: "N", at: 0, limits: limits, changes: &changes)
    model.open(0, changes: &changes)
    model.delete(2, changes: &changes)
    let saved = try SavedState.decode(SavedState.encode(model))
    let restarted = SectionModel(
      config: config(.multi, [("a", [], false), ("b", [], false), ("e", [], true)]), saved: saved)
    #expect(restarted.sections.map(\.id) == ["n", "a", "e"])
    #expect(restarted.openIndices == [0, 2])
    // The config opens "e", which the saved state does not know: that opening takes a revision.
    #expect(restarted.revision == 4)
  }
}
