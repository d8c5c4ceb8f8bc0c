import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct ScreenModelTests {
  init() { Fixtures.useUTF8Locale() }

  /// A state synced from a VIEW of `sections` (id, open, item count); open sections' items are "id-n".
  static func state(_ sections: [(String, Bool, Int)], mode: Mode = .multi) -> SectionState {
    let listed = sections.enumerated().map { index, section in
      ListedSection(
        index: index, id: section.0, isOpen: section.1, itemCount: section.2, title: section.0.uppercased())
    }
    let items = sections.enumerated().flatMap { index, section in
      section.1
        ? (0..<section.2).map { ListedItem(sectionIndex: index, position: $0, text: "\(section.0)-\($0)") }
        : []
    }
    return SectionState(
      snapshot: StateSnapshot(revision: 1, mode: mode, openIDs: []),
      view: Listing(sections: listed, items: items, revision: 1))
  }

  private let unicode = Style(color: false, unicode: true)

  private func text(_ model: ScreenModel, _ state: SectionState, layout: ScreenModel.Layout) -> [String] {
    let status = StatusBar(socket: "/s", link: .connected, readonly: false)
    return model.lines(state, layout: layout, status: status, style: unicode, showsHelp: false).map(\.text)
  }

  @Test func rowsAreHeadersWithTheItemsOfOpenSections() {
    let state = Self.state([("a", false, 2), ("b", true, 2), ("c", false, 1)])
    #expect(ScreenModel.rows(state) == [.header(0), .header(1), .item(1, 0), .item(1, 1), .header(2)])
  }

  @Test func theScreenIsTheAccordionWithACursorAndAStatusLine() {
    let state = Self.state([("a", false, 2), ("b", true, 1)])
    var model = ScreenModel(rows: 5, columns: 80)
    let layout = model.layout(state)
    #expect(layout.cursor == 0)
    #expect(
      text(model, state, layout: layout) == [
        "› ▸ A  (0 a, 2 items)",
        "  ▾ B  (1 b, 1 item)",
        "      b-0",
        "",
        " multi  rev 1  connected  |  ? keys  q quit  |  /s",
      ])
  }

  /// The status line names the connection's level only when it is less than edit: a ui that
  /// may do everything says `connected`, as it always has, and leaves the width to the socket.
  @Test func theStatusLineNamesALevelBelowEdit() {
    let state = Self.state([("a", false, 1)])
    var model = ScreenModel(rows: 3, columns: 80)
    let layout = model.layout(state)
    var status = StatusBar(socket: "/s", link: .connected, readonly: false)
    func line() -> String {
      model.lines(state, layout: layout, status: status, style: unicode, showsHelp: false).map(
        \.text
      ).last ?? ""
    }
    status.level = .edit
    #expect(line() == " multi  rev 1  connected  |  ? keys  q quit  |  /s")
    status.level = .operate
    #expect(line() == " multi  rev 1  connected (may operate)  |  ? keys  q quit  |  /s")
  }

  @Test func theCursorStaysOnItsSectionWhenSectionsAboveOpen() {
    var state = Self.state([("a", false, 3), ("b", false, 1), ("c", false, 1)])
    var model = ScreenModel(rows: 10, columns: 40)
    model.moveCursor(to: 2, in: model.layout(state), state: state)
    #expect(model.anchor?.id == "c")
    _ = state.apply(.opened(revision: 2, index: 0, id: "a"))
    state.received(
      ["x", "y", "z"].enumerated().map { ListedItem(sectionIndex: 0, position: $0, text: $1) }, of: "a")
    let layout = model.layout(state)
    #expect(layout.rows[layout.cursor!] == .header(2))
    #expect(layout.cursor == 5)
  }

  @Test func theCursorMovesToTheNearestSectionWhenItsSectionGoes() {
    let before = Self.state([("a", false, 1), ("b", false, 1), ("c", false, 1)])
    var model = ScreenModel(rows: 10, columns: 40)
    model.moveCursor(to: 1, in: model.layout(before), state: before)
    let after = Self.state([("a", false, 1), ("c", false, 1)])
    let layout = model.layout(after)
    #expect(layout.cursor == 1)
    #expect(model.anchor?.id == "c")
    let last = Self.state([("a", false, 1)])
    #expect(model.layout(last).cursor == 0)
  }

  @Test func theNearestSectionIsTheNextOneStillThereThenThePrevious() {
    let before = Self.state([
      ("a", false, 1), ("b", false, 1), ("c", false, 1), ("d", false, 1), ("e", false, 1),
    ])
    var model = ScreenModel(rows: 10, columns: 40)
    model.moveCursor(to: 2, in: model.layout(before), state: before)
    // c goes, and so do a and d: the next one left is e, now at index 1.
    let after = Self.state([("b", false, 1), ("e", false, 1), ("f", false, 1)])
    #expect(model.layout(after).cursor == 1)
    #expect(model.anchor?.id == "e")
    var lastOne = ScreenModel(rows: 10, columns: 40)
    lastOne.moveCursor(to: 4, in: lastOne.layout(before), state: before)
    #expect(lastOne.layout(Self.state([("a", false, 1), ("c", false, 1), ("f", false, 1)])).cursor == 1)
  }

  @Test func anItemCursorFallsBackToItsHeaderWhenTheSectionCloses() {
    var state = Self.state([("a", true, 2), ("b", false, 1)])
    var model = ScreenModel(rows: 10, columns: 40)
    model.moveCursor(to: 2, in: model.layout(state), state: state)
    #expect(model.anchor == .init(id: "a", position: 1, index: 0, neighbours: ["b"]))
    _ = state.apply(.closed(revision: 2, index: 0, id: "a"))
    #expect(model.layout(state).cursor == 0)
  }

  @Test func longListsScrollToKeepTheCursorVisible() {
    let state = Self.state((0..<20).map { ("s\($0)", false, 1) })
    var model = ScreenModel(rows: 6, columns: 40)
    var layout = model.layout(state)
    model.moveCursor(to: 7, in: layout, state: state)
    layout = model.layout(state)
    #expect(model.top == 3)
    #expect(text(model, state, layout: layout)[4].hasPrefix("› ▸ S7"))
    model.moveCursor(to: 19, in: layout, state: state)
    #expect(model.top == 15)
    layout = model.layout(state)
    model.moveCursor(to: 0, in: layout, state: state)
    #expect(model.top == 0)
  }

  @Test func theWheelScrollsAndPullsTheCursorAlong() {
    let state = Self.state((0..<20).map { ("s\($0)", false, 1) })
    var model = ScreenModel(rows: 6, columns: 40)
    model.scroll(by: 3, in: model.layout(state), state: state)
    #expect(model.top == 3)
    #expect(model.anchor?.id == "s3")
    model.scroll(by: 100, in: model.layout(state), state: state)
    #expect(model.top == 15)
    #expect(model.row(atScreenLine: 0, in: model.layout(state)) == 15)
    #expect(model.row(atScreenLine: 5, in: model.layout(state)) == nil)
  }

  @Test func aSmallerWindowKeepsTheCursorOnScreen() {
    let state = Self.state((0..<20).map { ("s\($0)", false, 1) })
    var model = ScreenModel(rows: 20, columns: 40)
    model.moveCursor(to: 15, in: model.layout(state), state: state)
    model.size = (5, 40)
    let layout = model.layout(state)
    #expect(layout.cursor == 15)
    #expect((model.top..<model.top + model.listHeight).contains(15))
  }

  @Test func aTinyTerminalGetsAsManyLinesAsItHas() {
    let state = Self.state([("a", false, 1), ("b", false, 1)])
    var model = ScreenModel(rows: 1, columns: 3)
    let lines = text(model, state, layout: model.layout(state))
    #expect(lines == [" m…"])
    model.size = (2, 3)
    #expect(text(model, state, layout: model.layout(state)) == ["› …", " m…"])
  }

  @Test func titlesAreCutToTheWidth() {
    let state = SectionState(
      snapshot: StateSnapshot(revision: 0, mode: .multi, openIDs: []),
      view: Listing(
        sections: [ListedSection(index: 0, id: "w", isOpen: false, itemCount: 1, title: "日本語のとても長いタイトル")],
        items: [], revision: 0))
    var model = ScreenModel(rows: 3, columns: 16)
    let lines = text(model, state, layout: model.layout(state))
    #expect(lines[0] == "› ▸ 日本語のと…")
    #expect(lines.allSatisfy { DisplayWidth.of($0) <= 16 })
  }

  @Test func theStatusLineShowsTheLinkAndMessages() {
    let state = Self.state([("a", false, 1)], mode: .exclusive)
    let model = ScreenModel(rows: 3, columns: 200)
    var status = StatusBar(socket: "/r", link: .disconnected, readonly: true)
    #expect(
      model.statusLine(state, status: status).text.contains(
        "exclusive  rev 1  disconnected, retrying"))
    status.link = .connected
    status.message = "read-only: no"
    let line = model.statusLine(state, status: status).text
    #expect(line.contains("viewer (read-only)  |  read-only: no  |  /r"))
  }

  /// A long title is cut before the `(index id, n items)` suffix is; rows below the
  /// screen are said in the status line; a long message takes the lines above the status line rather than being cut or hiding
  /// the link state.
  @Test func longTitlesKeepTheirSuffixAndHiddenRowsAreSaid() {
    var listed = Self.state([("a", true, 5), ("b", false, 0)])
    let long = String(repeating: "word ", count: 30)
    listed.relisted(
      Listing(
        sections: [
          ListedSection(index: 0, id: "a", isOpen: true, itemCount: 5, title: long),
          ListedSection(index: 1, id: "b", isOpen: false, itemCount: 1, title: "B"),
        ], items: (0..<5).map { ListedItem(sectionIndex: 0, position: $0, text: "a-\($0)") }, revision: 2))
    var model = ScreenModel(rows: 4, columns: 80)
    let layout = model.layout(listed)
    let lines = text(model, listed, layout: layout)
    #expect(lines[0].hasSuffix("…  (0 a, 5 items)"))
    #expect(DisplayWidth.of(lines[0]) <= 80)
    #expect(lines[3].contains("4 more below"))
    var status = StatusBar(socket: "/s", link: .connected, readonly: false)
    status.message = String(repeating: "m", count: 100)
    let shown = model.lines(listed, layout: layout, status: status, style: unicode, showsHelp: false).map(
      \.text)
    #expect(shown.suffix(3).dropLast().joined().filter { $0 == "m" }.count == 100)
    #expect(shown[3].contains("connected") && !shown[3].contains("mmm"))
    #expect(shown.count == 4)
  }
}
