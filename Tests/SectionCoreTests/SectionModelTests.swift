import Testing

@testable import SectionCore

@Suite struct SectionModelMultiTests {
  @Test func startsAsConfigured() {
    let model = SectionModel(config: abc(open: ["b"]))
    #expect(model.mode == .multi)
    #expect(model.revision == 0)
    #expect(model.openIndices == [1])
    #expect(model.openedAt == [nil, 0, nil])
    #expect(!model.isOpen(0) && model.isOpen(1) && !model.isOpen(2))
    #expect(model.index(ofID: Array("c".utf8)) == 2)
    #expect(model.index(ofID: Array("C".utf8)) == nil)
    #expect(model.index(ofID: Array("".utf8)) == nil)
  }

  @Test func openCloseToggleEachCountOne() {
    var model = SectionModel(config: abc())
    #expect(model.apply { $0.open(1, changes: &$1) } == [.opened(revision: 1, index: 1)])
    #expect(model.apply { $0.open(0, changes: &$1) } == [.opened(revision: 2, index: 0)])
    #expect(model.openIndices == [0, 1])
    #expect(model.apply { $0.close(1, changes: &$1) } == [.closed(revision: 3, index: 1, openSince: 1)])
    #expect(model.apply { $0.toggle(2, changes: &$1) } == [.opened(revision: 4, index: 2)])
    #expect(model.apply { $0.toggle(0, changes: &$1) } == [.closed(revision: 5, index: 0, openSince: 2)])
    #expect(model.openIndices == [2])
    #expect(model.revision == 5)
    #expect(model.openedAt == [nil, nil, 4])
  }

  @Test func noOpsChangeNothing() {
    var model = SectionModel(config: abc(open: ["a"]))
    let before = model
    #expect(model.apply { $0.open(0, changes: &$1) } == [])
    #expect(model.apply { $0.close(1, changes: &$1) } == [])
    #expect(model.apply { $0.setMode(.multi, changes: &$1) } == [])
    #expect(model == before)
    #expect(model.revision == 0)
  }

  @Test func openAllAndCloseAll() {
    var model = SectionModel(config: abc())
    _ = model.apply { $0.open(1, changes: &$1) }
    #expect(
      model.apply { $0.openAll(changes: &$1) } == [
        .opened(revision: 2, index: 0), .opened(revision: 3, index: 2),
      ])
    #expect(model.openIndices == [0, 1, 2])
    #expect(model.apply { $0.openAll(changes: &$1) } == [])
    #expect(
      model.apply { $0.closeAll(changes: &$1) }
        == [
          .closed(revision: 4, index: 0, openSince: 2), .closed(revision: 5, index: 1, openSince: 1),
          .closed(revision: 6, index: 2, openSince: 3),
        ])
    #expect(model.openIndices == [])
    #expect(model.apply { $0.closeAll(changes: &$1) } == [])
    #expect(model.revision == 6)
  }

  @Test func switchingToExclusiveKeepsTheMostRecentlyOpened() {
    var model = SectionModel(config: abc())
    _ = model.apply { $0.open(2, changes: &$1) }  // rev 1
    _ = model.apply { $0.open(0, changes: &$1) }  // rev 2: most recent
    _ = model.apply { $0.open(1, changes: &$1) }  // rev 3: most recent now
    _ = model.apply { $0.close(1, changes: &$1) }  // rev 4: so 0 is the most recent open one
    #expect(
      model.apply { $0.setMode(.exclusive, changes: &$1) }
        == [.closed(revision: 5, index: 2, openSince: 1), .mode(revision: 6, .exclusive)])
    #expect(model.mode == .exclusive)
    #expect(model.openIndices == [0])
    #expect(model.revision == 6)
  }

  @Test func switchingToExclusiveWithNothingOrOneOpenOnlyCountsTheMode() {
    var model = SectionModel(config: abc())
    #expect(model.apply { $0.setMode(.exclusive, changes: &$1) } == [.mode(revision: 1, .exclusive)])
    #expect(model.apply { $0.setMode(.exclusive, changes: &$1) } == [])
    #expect(model.apply { $0.setMode(.multi, changes: &$1) } == [.mode(revision: 2, .multi)])
    _ = model.apply { $0.open(1, changes: &$1) }
    #expect(model.apply { $0.setMode(.exclusive, changes: &$1) } == [.mode(revision: 4, .exclusive)])
    #expect(model.openIndices == [1])
  }

  @Test func switchingToMultiKeepsTheOpenSection() {
    var model = SectionModel(config: abc(.exclusive))
    _ = model.apply { $0.open(2, changes: &$1) }
    #expect(model.apply { $0.setMode(.multi, changes: &$1) } == [.mode(revision: 2, .multi)])
    #expect(model.openIndices == [2])
    _ = model.apply { $0.open(0, changes: &$1) }
    #expect(model.openIndices == [0, 2])
  }
}

@Suite struct SectionModelExclusiveTests {
  @Test func openingClosesThePreviousOne() {
    var model = SectionModel(config: abc(.exclusive))
    #expect(model.apply { $0.open(0, changes: &$1) } == [.opened(revision: 1, index: 0)])
    #expect(
      model.apply { $0.open(2, changes: &$1) } == [
        .closed(revision: 2, index: 0, openSince: 1), .opened(revision: 3, index: 2),
      ])
    #expect(model.openIndices == [2])
    #expect(model.apply { $0.open(2, changes: &$1) } == [])
    #expect(model.revision == 3)
  }

  @Test func togglingAClosedSectionClosesTheOpenOne() {
    var model = SectionModel(config: abc(.exclusive, open: ["b"]))
    #expect(
      model.apply { $0.toggle(0, changes: &$1) } == [
        .closed(revision: 1, index: 1, openSince: 0), .opened(revision: 2, index: 0),
      ])
    #expect(model.openIndices == [0])
  }

  @Test func togglingTheOpenSectionLeavesNoneOpen() {
    var model = SectionModel(config: abc(.exclusive))
    _ = model.apply { $0.toggle(1, changes: &$1) }
    #expect(model.apply { $0.toggle(1, changes: &$1) } == [.closed(revision: 2, index: 1, openSince: 1)])
    #expect(model.openIndices == [])
  }

  @Test func closeAndCloseAll() {
    var model = SectionModel(config: abc(.exclusive))
    #expect(model.apply { $0.close(0, changes: &$1) } == [])
    _ = model.apply { $0.open(1, changes: &$1) }
    #expect(model.apply { $0.closeAll(changes: &$1) } == [.closed(revision: 2, index: 1, openSince: 1)])
    #expect(model.apply { $0.closeAll(changes: &$1) } == [])
    #expect(model.revision == 2)
  }

  @Test func neverTwoOpen() {
    var model = SectionModel(config: abc(.exclusive))
    for step in [0, 1, 2, 2, 1, 0, 0, 2] {
      _ = model.apply { $0.toggle(step, changes: &$1) }
      #expect(model.openIndices.count <= 1)
    }
  }
}

@Suite struct SectionModelSavedStateTests {
  @Test func savedStateWinsOverTheConfigByID() {
    let saved = SavedState(revision: 9, mode: .exclusive, sections: ["a": nil, "b": 7, "gone": 8])
    let model = SectionModel(config: abc(.multi, open: ["a", "c"]), saved: saved)
    #expect(model.mode == .exclusive)
    #expect(model.revision == 9)
    // "a" is known closed, "b" open at 7; "c" is new and configured open, but in exclusive
    // mode a configured section never displaces the open one, so nothing opened: no revision.
    #expect(model.openedAt == [nil, 7, nil])
  }

  @Test func unknownSectionsStartAsConfigured() {
    let saved = SavedState(revision: 4, mode: .multi, sections: ["a": 3])
    let model = SectionModel(config: abc(.exclusive, open: ["c"]), saved: saved)
    #expect(model.mode == .multi)
    // "c" opening is a change made at start-up, after everything saved: one revision.
    #expect(model.openedAt == [3, nil, 5])
    #expect(model.revision == 5)
  }

  @Test func exclusiveConfigWithSeveralSavedOpenKeepsTheNewest() {
    let saved = SavedState(revision: 10, mode: .exclusive, sections: ["a": 2, "b": 10, "c": 5])
    let model = SectionModel(config: abc(), saved: saved)
    #expect(model.openIndices == [1])
  }
}

@Suite struct SectionModelReloadTests {
  @Test func keepsStateByIDAndCountsOne() {
    var model = SectionModel(config: abc())
    _ = model.apply { $0.open(0, changes: &$1) }  // rev 1
    _ = model.apply { $0.open(2, changes: &$1) }  // rev 2
    let next = config(
      .multi, [("c", ["c1"], false), ("new", ["n"], true), ("newclosed", [], false), ("a", [], false)])
    #expect(model.apply { $0.reload(next, changes: &$1) } == [.reloaded(revision: 3)])
    #expect(Array(model.sections) == next.sections)
    #expect(model.openIndices == [0, 1, 3])
    #expect(model.openedAt == [2, 3, nil, 1], "\"new\" opened by the reload, at its revision")
    #expect(model.revision == 3)
    #expect(model.mode == .multi)
  }

  @Test func identicalConfigIsNoChange() {
    var model = SectionModel(config: abc(open: ["a"]))
    _ = model.apply { $0.toggle(1, changes: &$1) }
    let before = model
    #expect(model.apply { $0.reload(abc(open: ["a"]), changes: &$1) } == [])
    #expect(model == before)
  }

  @Test func droppingTheOpenSection() {
    var model = SectionModel(config: abc(.exclusive))
    _ = model.apply { $0.open(1, changes: &$1) }
    #expect(
      model.apply { $0.reload(config(.exclusive, [("a", [], false), ("c", [], false)]), changes: &$1) } == [
        .reloaded(revision: 2)
      ])
    #expect(model.openIndices == [])
  }

  @Test func reloadDoesNotChangeTheMode() {
    var model = SectionModel(config: abc(.multi))
    _ = model.apply { $0.reload(abc(.exclusive), changes: &$1) }
    #expect(model.mode == .multi)
    #expect(model.revision == 0)
  }

  @Test func exclusiveKeepsAtMostOneOpen() {
    var model = SectionModel(config: abc(.exclusive))
    _ = model.apply { $0.open(0, changes: &$1) }  // rev 1
    _ = model.apply { $0.close(0, changes: &$1) }  // rev 2
    _ = model.apply { $0.open(1, changes: &$1) }  // rev 3
    let next = config(.exclusive, [("a", [], false), ("b", [], false), ("z", [], true), ("y", [], true)])
    #expect(model.apply { $0.reload(next, changes: &$1) } == [.reloaded(revision: 4)])
    #expect(model.openIndices == [1], "configured sections never displace the open one")
  }
}

/// The config's `open` applies only to sections the state does not know, and in exclusive mode
/// never displaces the open section; every path (start without saved state, start with saved
/// state, reload) follows the same rule, and an opening by the config counts as an opening.
@Suite struct SectionModelConfiguredOpenTests {
  /// `fresh` (configured open) ahead of `nuts` in the list, so a tie would go to `fresh`.
  let freshThenNuts = config(.exclusive, [("fresh", [], true), ("nuts", [], false)])

  @Test func exclusiveReloadNeverDisplacesTheOpenSection() {
    var model = SectionModel(config: config(.exclusive, [("nuts", [], true)]))
    #expect(model.openedAt == [0])
    #expect(model.apply { $0.reload(freshThenNuts, changes: &$1) } == [.reloaded(revision: 1)])
    #expect(model.openIndices == [1])

    var opened = SectionModel(config: config(.exclusive, [("nuts", [], false)]))
    _ = opened.apply { $0.open(0, changes: &$1) }
    _ = opened.apply { $0.reload(freshThenNuts, changes: &$1) }
    #expect(opened.openIndices == [1])
  }

  @Test func exclusiveStartWithSavedStateNeverDisplacesTheOpenSection() {
    let saved = SavedState(SectionModel(config: config(.exclusive, [("nuts", [], true)])))
    let model = SectionModel(config: freshThenNuts, saved: saved)
    #expect(model.openIndices == [1])
    #expect(model.revision == 0, "nothing opened")
  }

  @Test func exclusiveWithNothingOpenOpensTheFirstConfigured() {
    let next = config(.exclusive, [("a", [], false), ("y", [], true), ("z", [], true)])
    var model = SectionModel(config: abc(.exclusive))
    #expect(model.apply { $0.reload(next, changes: &$1) } == [.reloaded(revision: 1)])
    #expect(model.openedAt == [nil, 1, nil])

    let started = SectionModel(config: next, saved: SavedState(SectionModel(config: abc(.exclusive))))
    #expect(started.openedAt == [nil, 1, nil])
    #expect(started.revision == 1)

    #expect(SectionModel(config: next).openedAt == [nil, 0, nil], "without saved state: revision 0")
  }

  /// OPEN nuts, then a reload that adds `late` open: `late` opened later, so it is the one
  /// a switch to exclusive keeps.
  @Test func multiReloadOpeningCountsAsTheMostRecentOpening() {
    var model = SectionModel(config: config(.multi, [("nuts", [], false)]))
    _ = model.apply { $0.open(0, changes: &$1) }
    _ = model.apply { $0.reload(config(.multi, [("nuts", [], false), ("late", [], true)]), changes: &$1) }
    #expect(model.openedAt == [1, 2])
    #expect(
      model.apply { $0.setMode(.exclusive, changes: &$1) } == [
        .closed(revision: 3, index: 0, openSince: 1), .mode(revision: 4, .exclusive),
      ])
    #expect(model.openIndices == [1])
  }

  @Test func multiStartWithSavedStateCountsTheConfiguredOpeningLast() {
    var before = SectionModel(config: config(.multi, [("nuts", [], false)]))
    _ = before.apply { $0.open(0, changes: &$1) }
    var model = SectionModel(
      config: config(.multi, [("nuts", [], false), ("late", [], true)]), saved: SavedState(before))
    #expect(model.openedAt == [1, 2])
    _ = model.apply { $0.setMode(.exclusive, changes: &$1) }
    #expect(model.openIndices == [1])
  }

  @Test func sectionsOpenedTogetherGoToTheFirstInListOrder() {
    var model = SectionModel(config: abc(.multi, open: ["b", "c"]))
    _ = model.apply { $0.setMode(.exclusive, changes: &$1) }
    #expect(model.openIndices == [1])
  }
}

@Suite struct SectionModelRevisionLimitTests {
  /// Three sections: the largest request (CLOSE ALL with all open) takes 3 revisions, and room is
  /// kept for one more than the section count.
  @Test func roomForAChangeEndsOneRevisionPerSectionBelowTheLimit() {
    let last = SectionModel.maxRevision - 4
    let allOpen: [String: UInt64?] = ["a": 1, "b": 2, "c": 3]
    var model = SectionModel(
      config: abc(), saved: SavedState(revision: last, mode: .multi, sections: allOpen))
    #expect(model.hasRoomForAChange)
    #expect(
      model.apply { $0.closeAll(changes: &$1) }.last
        == .closed(revision: SectionModel.maxRevision - 1, index: 2, openSince: 3))
    #expect(!model.hasRoomForAChange)
    let after = SectionModel(
      config: abc(), saved: SavedState(revision: last + 1, mode: .multi, sections: [:]))
    #expect(!after.hasRoomForAChange)
  }

  /// A start with a config that opens a new section is a change too: at the limit the section
  /// stays closed rather than take the revision past it.
  @Test func atTheLimitAConfiguredSectionStaysClosedAtStart() {
    let top = SavedState(revision: SectionModel.maxRevision, mode: .multi, sections: ["a": nil])
    let model = SectionModel(config: abc(open: ["b"]), saved: top)
    #expect(model.revision == SectionModel.maxRevision)
    #expect(model.openIndices == [])
    let below = SavedState(revision: SectionModel.maxRevision - 4, mode: .multi, sections: ["a": nil])
    #expect(SectionModel(config: abc(open: ["b"]), saved: below).openIndices == [1])
  }
}
