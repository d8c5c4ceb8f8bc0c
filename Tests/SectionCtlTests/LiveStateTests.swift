import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct LiveStateTests {
  private static let listed = [
    ListedSection(index: 0, id: "a", isOpen: false, itemCount: 2, title: "A"),
    ListedSection(index: 1, id: "b", isOpen: true, itemCount: 1, title: "B"),
  ]

  private func synced(revision: UInt64 = 5) -> LiveState {
    var state = LiveState()
    state.awaitView(afresh: true)
    state.subscribed(StateSnapshot(revision: 4, mode: .multi, openIDs: ["b"]))
    _ = state.synced(
      Self.listed, items: [ListedItem(sectionIndex: 1, position: 0, text: "b0")], revision: revision)
    return state
  }

  @Test func aReconnectionResumesAfterTheRevisionOnScreen() {
    var state = synced()
    #expect(state.resumption == "SUBSCRIBE FROM 5")
    let resumed = state.resumed(Subscribing.start(of: Reply(status: .ok(revision: 5))))
    #expect(resumed)
    #expect(state.isSynced)
    // The missed change comes as an event and is applied to what the screen shows.
    #expect(state.apply(.closed(revision: 6, index: 1, id: "b")) == [])
    #expect(state.sections.map(\.isOpen) == [false, false])
  }

  @Test func aSnapshotOrARefusalMeansTheWholeViewAgain() {
    var state = synced()
    let snapshot = StateSnapshot(revision: 9, mode: .exclusive, openIDs: ["a"])
    let afterSnapshot = state.resumed(
      Subscribing.start(of: Reply(data: [.state(snapshot)], status: .ok(revision: 9))))
    #expect(!afterSnapshot)
    #expect(!state.isSynced)
    #expect(state.mode == .exclusive)
    #expect(state.resumption == nil, "nothing to resume from until the VIEW comes")
    var older = synced()
    let refusal = Reply(status: .error(code: "SYNTAX", message: "SUBSCRIBE takes no argument"))
    #expect(Subscribing.start(of: refusal) == .refused)
    let afterRefusal = older.resumed(Subscribing.start(of: refusal))
    #expect(!afterRefusal)
    #expect(!older.isSynced)
  }

  @Test func aFirstConnectionHasNothingToResume() {
    #expect(LiveState().resumption == nil)
  }

  @Test func aViewSetsSectionsItemsAndRevision() {
    let state = synced()
    #expect(state.sections.map(\.isOpen) == [false, true])
    #expect(state.items == ["b": ["b0"]])
    #expect(state.revision == 5)
    #expect(state.mode == .multi)
  }

  @Test func openingAskForItemsOnceAndClosingKeepsThem() {
    var state = synced()
    #expect(state.apply(.opened(revision: 6, index: 0, id: "a")) == [.items("a")])
    #expect(state.apply(.closed(revision: 7, index: 0, id: "a")) == [])
    #expect(state.apply(.opened(revision: 8, index: 0, id: "a")) == [])
    state.received(items: ["a0", "a1"], of: "a")
    #expect(state.apply(.closed(revision: 9, index: 0, id: "a")) == [])
    #expect(state.apply(.opened(revision: 10, index: 0, id: "a")) == [])
    #expect(state.sections[0].isOpen)
    #expect(state.revision == 10)
  }

  @Test func eventsTheViewAlreadyReflectsAreSkipped() {
    var state = synced()
    #expect(state.apply(.closed(revision: 5, index: 1, id: "b")) == [])
    #expect(state.sections[1].isOpen)
  }

  @Test func eventsWaitWhileAViewIsOnItsWay() {
    var state = synced()
    state.awaitView()
    #expect(state.apply(.opened(revision: 6, index: 0, id: "a")) == [])
    #expect(state.apply(.opened(revision: 7, index: 0, id: "c")) == [])
    #expect(!state.sections[0].isOpen)
    // The view reflects revision 6 but not 7, whose section it does not know yet either.
    let needs = state.synced(
      Self.listed.map {
        ListedSection(index: $0.index, id: $0.id, isOpen: true, itemCount: $0.itemCount, title: $0.title)
      },
      items: [], revision: 6)
    #expect(needs == [.resync])
  }

  @Test func modeFollowsItsOwnRevisions() {
    var state = synced()
    state.awaitView()
    _ = state.apply(.mode(revision: 6, mode: .exclusive))
    _ = state.synced(Self.listed, items: [], revision: 6)
    #expect(state.mode == .exclusive)
    _ = state.apply(.mode(revision: 6, mode: .multi))
    #expect(state.mode == .exclusive)
  }

  @Test func aSnapshotReplacesOpenSections() {
    var state = synced()
    #expect(
      state.apply(.state(StateSnapshot(revision: 9, mode: .exclusive, openIDs: ["a"]))) == [.items("a")])
    #expect(state.sections.map(\.isOpen) == [true, false])
    #expect(state.mode == .exclusive)
    #expect(state.apply(.state(StateSnapshot(revision: 10, mode: .exclusive, openIDs: ["zz"]))) == [.resync])
  }

  @Test func reloadsAndUnknownEventsResyncUnlessAlreadySeen() {
    var state = synced()
    #expect(state.apply(.reload(revision: 6)) == [.resync])
    #expect(state.apply(.other("inserted 7 1 new")) == [.resync])
    #expect(state.apply(.other("deleted 5 1 b")) == [])
    #expect(state.apply(.other("future")) == [.resync])
    #expect(state.apply(.bye(reason: "shutdown")) == [])
  }

  @Test func aNewConnectionTakesWhateverRevisionTheDaemonHas() {
    var state = synced(revision: 50)
    state.awaitView(afresh: true)
    state.subscribed(StateSnapshot(revision: 0, mode: .exclusive, openIDs: []))
    _ = state.synced(Self.listed, items: [], revision: 0)
    #expect(state.revision == 0)
    #expect(state.mode == .exclusive)
    #expect(state.apply(.opened(revision: 1, index: 0, id: "a")) == [.items("a")])
  }
}
