import Testing

@testable import SectionCore

/// The value a save takes (`SavedGroup`): what the service hands over once per turn, each
/// consumer reading its part from the changes rather than from another's text.
@Suite struct SavedGroupTests {
  /// A service keeping a history, its changes by one author at a fixed time.
  private func harness(capacity: Int = 100) -> Harness {
    let harness = Harness(history: History(capacity: capacity))
    harness.service.clock = { 1_796_329_267_123 }
    harness.author = Author(via: .socket, uid: 1000, pid: 4242, name: "w")
    return harness
  }

  @Test func holdsTheTurnsChangesEventsAndJournal() {
    let harness = harness()
    _ = harness.send("TOGGLE a")
    _ = harness.send("OPEN c")
    let group = harness.service.unsavedGroup
    #expect(group.changes == [.opened(revision: 1, index: 0), .opened(revision: 2, index: 2)])
    #expect(group.revisions == 1...2 && group.revision == 2)
    #expect(String(decoding: group.events, as: UTF8.self) == "!opened 1 0 a\n!opened 2 2 c\n")
    #expect(group.journal == harness.service.journal && !group.journal.isEmpty)
    #expect(!group.needsSnapshot)
    #expect(group.time == 1_796_329_267_123)
    // What was saved is what was handed over, and the next group starts empty.
    let saved = harness.service.commit()
    #expect(saved.changes == group.changes && saved.events == group.events)
    let next = harness.service.unsavedGroup
    #expect(next.isEmpty && next.revisions == nil && next.revision == 2 && next.events.isEmpty)
    #expect(harness.reply("HISTORY 2").split(separator: "\n").count == 3)
  }

  @Test func aReloadAsksForTheWholeState() throws {
    let harness = harness()
    var reply = OutputQueue()
    let abd = config(.multi, [("a", [], false), ("b", [], false), ("d", [], false)])
    #expect(try harness.service.reload(abd, by: harness.author, reply: &reply) == .changed)
    let group = harness.service.unsavedGroup
    #expect(group.needsSnapshot && group.changes == [.reloaded(revision: 1)])
    #expect(harness.service.commit().needsSnapshot)
    #expect(!harness.service.unsavedGroup.needsSnapshot)
  }

  /// Each change's section as its event named it at its step, though later changes of the
  /// same group inserted, deleted and moved sections: compared with the events' own ids.
  @Test func sectionIDsAreThoseOfEachStep() {
    let harness = harness()
    for request in [
      "TOGGLE c", "INSERT 0 n News", "TOGGLE 3", "OPEN 0", "MOVE n 2", "CLOSE 2", "DELETE a", "OPEN 0",
      "RENAME b Bee", "ITEM INSERT b 0 x", "MODE exclusive", "TOGGLE 1",
    ] {
      #expect(harness.send(request).1 == .changed, "\(request)")
    }
    #expect(harness.service.unsavedGroup.changes.count >= 12)
    expectIDsOfEachStep(harness)
    // Without moves in the group the ids are read from the model as it is (the accordion
    // closes n, then opens b).
    _ = harness.commit()
    _ = harness.send("TOGGLE 0")
    #expect(harness.service.unsavedGroup.sectionIDs(after: harness.service.model) == ["n", "b"])
    expectIDsOfEachStep(harness)
  }

  /// The ids `sectionIDs` finds for the unsaved group are those its events name.
  private func expectIDsOfEachStep(_ harness: Harness) {
    let group = harness.service.unsavedGroup
    let ids = group.sectionIDs(after: harness.service.model)
    #expect(ids.count == group.changes.count)
    for (position, id) in ids.enumerated() {
      let words = String(decoding: (group.event(position) ?? []).dropLast(), as: UTF8.self).split(
        separator: " ")
      let expected: String? =
        switch words.first ?? "" {
        case "!mode", "!reload": nil
        case "!moved": String(words[4])
        default: String(words[3])
        }
      #expect(id == expected, "change \(position): \(group.changes[position])")
    }
  }

  /// With `--history 0` the history records no authors (nothing reads them then): the
  /// changes, events and journal are all there.
  @Test func withoutAHistoryTheChangesAreThereAndNoAuthors() {
    let harness = Harness()
    _ = harness.send("TOGGLE a")
    let group = harness.service.unsavedGroup
    #expect(group.changes == [.opened(revision: 1, index: 0)])
    #expect(String(decoding: group.events, as: UTF8.self) == "!opened 1 0 a\n")
    #expect(group.runs.isEmpty && group.event(0) == nil)
    #expect(group.sectionIDs(after: harness.service.model) == ["a"])
  }
}
