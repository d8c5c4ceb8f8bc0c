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
}
