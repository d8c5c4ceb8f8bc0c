import Testing

@testable import SectionClient

/// The state a view binds to, brought forward by events.
@Suite struct SectionStateTests {
  static let listing = Listing(
    sections: [
      ListedSection(index: 0, id: "a", isOpen: false, itemCount: 2, title: "A"),
      ListedSection(index: 1, id: "b", isOpen: true, itemCount: 1, title: "B"),
    ], items: [], revision: 5)

  private func state() -> SectionState {
    SectionState(snapshot: StateSnapshot(revision: 4, mode: .multi, openIDs: ["b"]), listing: Self.listing)
  }

  @Test func opensClosesAndModesApplyHere() {
    var state = state()
    #expect(state.revision == 5)
    #expect(state.apply(.opened(revision: 6, index: 0, id: "a")) == .changed)
    #expect(state.openIDs == ["a", "b"])
    #expect(state.apply(.closed(revision: 7, index: 1, id: "b")) == .changed)
    #expect(state.openIDs == ["a"])
    #expect(state.apply(.mode(revision: 8, mode: .exclusive)) == .changed)
    #expect(state.mode == .exclusive)
    #expect(state.revision == 8)
  }

  @Test func eventsTheStateShowsChangeNothing() {
    var state = state()
    #expect(state.apply(.opened(revision: 5, index: 0, id: "a")) == .unchanged)
    #expect(state.openIDs == ["b"])
    #expect(state.apply(.bye(reason: "shutdown")) == .unchanged)
    #expect(state.apply(.reload(revision: 3)) == .unchanged)
    // The mode has its own revision: LIST (revision 5) does not show it.
    #expect(state.apply(.mode(revision: 5, mode: .exclusive)) == .changed)
  }

  @Test func changesToTheListAskForItAgain() {
    var state = state()
    #expect(state.apply(.edited(.inserted, revision: 6, index: 2, id: "c")) == .needsList)
    #expect(state.apply(.moved(revision: 7, from: 0, to: 1, id: "a")) == .needsList)
    #expect(state.apply(.opened(revision: 8, index: 0, id: "unknown")) == .needsList)
    #expect(state.apply(.state(StateSnapshot(revision: 9, mode: .exclusive, openIDs: []))) == .needsList)
    #expect(state.mode == .exclusive)
    #expect(state.apply(.other("renumbered 10 x")) == .needsList)
    state.relisted(Listing(sections: Array(Self.listing.sections.reversed()), items: [], revision: 12))
    #expect(state.sections.map(\.id) == ["b", "a"])
    #expect(state.revision == 12)
    #expect(state.apply(.other("renumbered 11 x")) == .unchanged)
  }

  // A state that follows items, as `sectionctl ui` keeps one (what LiveStateTests proved of
  // the ui's own state before the ui used this one).

  static let view = Listing(
    sections: listing.sections, items: [ListedItem(sectionIndex: 1, position: 0, text: "b0")], revision: 5)

  private func viewed() -> SectionState {
    SectionState(snapshot: StateSnapshot(revision: 4, mode: .multi, openIDs: ["b"]), view: Self.view)
  }

  @Test func aViewSetsSectionsItemsAndRevision() {
    let state = viewed()
    #expect(state.followsItems)
    #expect(state.sections.map(\.isOpen) == [false, true])
    #expect(state.items == ["b": ["b0"]])
    #expect(state.revision == 5)
    #expect(state.mode == .multi)
    #expect(state.missingItems == [])
    #expect(state.listRequest.lines == ["VIEW"])
    #expect(state.index(of: "b") == 1)
    #expect(state.index(of: "zz") == nil)
  }

  @Test func aListedStateAsksForNoItems() {
    var state = state()
    #expect(!state.followsItems)
    #expect(state.listRequest.lines == ["LIST"])
    #expect(state.apply(.opened(revision: 6, index: 0, id: "a")) == .changed)
    #expect(state.missingItems == [])
    #expect(state.items == [:])
  }

  @Test func anOpenedSectionNeedsItsItemsOnceAndClosingKeepsThem() {
    var state = viewed()
    #expect(state.apply(.opened(revision: 6, index: 0, id: "a")) == .changed)
    #expect(state.missingItems == ["a"])
    state.received(
      [
        ListedItem(sectionIndex: 0, position: 1, text: "a1"),
        ListedItem(sectionIndex: 0, position: 0, text: "a0"),
      ],
      of: "a")
    #expect(state.missingItems == [])
    #expect(state.items["a"] == ["a0", "a1"])
    #expect(state.apply(.closed(revision: 7, index: 0, id: "a")) == .changed)
    #expect(state.apply(.opened(revision: 8, index: 0, id: "a")) == .changed)
    #expect(state.missingItems == [], "the items known are kept while the section is closed")
    #expect(state.sections[0].isOpen)
    #expect(state.revision == 8)
    // Items of a section that has gone meanwhile are not kept.
    state.received([ListedItem(sectionIndex: 9, position: 0, text: "x")], of: "gone")
    #expect(state.items["gone"] == nil)
  }

  @Test func aSectionClosedBeforeItsItemsCameNeedsThemNoLonger() {
    var state = viewed()
    _ = state.apply(.opened(revision: 6, index: 0, id: "a"))
    _ = state.apply(.opened(revision: 7, index: 0, id: "a"))
    #expect(state.missingItems == ["a"])
    _ = state.apply(.closed(revision: 8, index: 0, id: "a"))
    #expect(state.missingItems == [])
    _ = state.apply(.opened(revision: 9, index: 0, id: "a"))
    state.relisted(Self.view)
    #expect(state.missingItems == [], "a VIEW brings the items of every open section")
  }

  @Test func receivedItemsGiveTheSectionItsCount() {
    var state = viewed()
    _ = state.apply(.opened(revision: 6, index: 0, id: "a"))
    state.received([ListedItem(sectionIndex: 0, position: 0, text: "only")], of: "a")
    #expect(state.sections[0].itemCount == 1)
  }

  /// Events that came while a VIEW was on its way are applied after it: those it shows change
  /// nothing, a later one for a section it does not know asks for the list again.
  @Test func eventsThatWaitedForAViewAreAppliedAfterIt() {
    var state = viewed()
    state.relisted(
      Listing(
        sections: Self.listing.sections.map {
          ListedSection(index: $0.index, id: $0.id, isOpen: true, itemCount: $0.itemCount, title: $0.title)
        }, items: [], revision: 6))
    #expect(state.items == ["a": [], "b": []], "a VIEW's items replace those known")
    #expect(state.apply(.opened(revision: 6, index: 0, id: "a")) == .unchanged)
    #expect(state.apply(.opened(revision: 7, index: 2, id: "c")) == .needsList)
  }

  @Test func modeFollowsItsOwnRevisions() {
    var state = viewed()
    #expect(state.apply(.mode(revision: 6, mode: .exclusive)) == .changed)
    state.relisted(Self.view)
    #expect(state.mode == .exclusive)
    #expect(state.apply(.mode(revision: 6, mode: .multi)) == .unchanged)
    #expect(state.mode == .exclusive)
  }

  @Test func reloadsAndUnknownEventsAskForTheListUnlessAlreadyShown() {
    var state = viewed()
    #expect(state.apply(.reload(revision: 6)) == .needsList)
    #expect(state.apply(.items(revision: 6, index: 0, id: "a", count: 3)) == .needsList)
    #expect(state.apply(.other("inserted 7 1 new")) == .needsList)
    #expect(state.apply(.other("deleted 5 1 b")) == .unchanged)
    #expect(state.apply(.other("future")) == .needsList)
    #expect(state.apply(.bye(reason: "shutdown")) == .unchanged)
  }

  /// A new subscription (after a daemon restarted with `--no-state`) starts a state afresh,
  /// whatever revision the daemon has now.
  @Test func aFreshStateTakesWhateverRevisionTheDaemonHas() {
    let state = SectionState(
      snapshot: StateSnapshot(revision: 0, mode: .exclusive, openIDs: []),
      view: Listing(sections: Self.listing.sections, items: [], revision: 0))
    var fresh = state
    #expect(fresh.revision == 0)
    #expect(fresh.mode == .exclusive)
    #expect(fresh.apply(.opened(revision: 1, index: 0, id: "a")) == .changed)
    #expect(fresh.missingItems == ["a"])
  }
}
