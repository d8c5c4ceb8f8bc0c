import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct TextRendererTests {
  @Test func tableAlignsColumns() {
    #expect(
      TextRenderer.table(Fixtures.sections, style: .plain) == """
        INDEX  ID      STATE   ITEMS  TITLE
        0      first   closed  10     First
        1      second  open    2      Second
        2      third   closed  1      Third

        """)
  }

  @Test func tableOfNothingIsTheHeader() {
    #expect(TextRenderer.table([], style: .plain) == "INDEX  ID  STATE  ITEMS  TITLE\n")
  }

  @Test func accordionShowsItemsOfOpenSectionsOnly() {
    let unicode = Style(color: false, unicode: true)
    #expect(
      TextRenderer.accordion(Fixtures.sections, items: Fixtures.items, style: unicode) == """
        ▸ First  (0 first, 10 items)
        ▾ Second  (1 second, 2 items)
            one
            two words
        ▸ Third  (2 third, 1 item)

        """)
  }

  @Test func accordionWithoutUnicodeUsesPlusAndMinus() {
    let text = TextRenderer.accordion(Fixtures.sections, items: Fixtures.items, style: .plain)
    #expect(text.hasPrefix("+ First"))
    #expect(text.contains("\n- Second"))
    #expect(!text.contains("\u{1B}"))
  }

  @Test func colourOnlyWhenAsked() {
    let coloured = TextRenderer.table(Fixtures.sections, style: Style(color: true, unicode: true))
    #expect(coloured.hasPrefix("\u{1B}[1mINDEX  ID      STATE   ITEMS  TITLE\u{1B}[0m\n"))
    #expect(coloured.contains("\u{1B}[32mopen"))
    let accordion = TextRenderer.accordion(
      Fixtures.sections, items: Fixtures.items, style: Style(color: true, unicode: true))
    #expect(accordion.contains("\u{1B}[32m▾\u{1B}[0m"))
  }

  @Test func itemsAreOnePerLine() {
    #expect(TextRenderer.items(Fixtures.items) == "one\ntwo words\n")
  }

  @Test func changedSectionsAreRowsWithoutHeader() {
    #expect(
      TextRenderer.changed([Fixtures.sections[1]], style: .plain) == "1      second  open   2      Second\n")
    #expect(TextRenderer.changed([], style: .plain) == "")
  }

  @Test func status() {
    let status = DaemonStatus(
      daemonVersion: "0.1.0", protocolVersion: "1", socket: "/run/s.sock", revision: 9, mode: .exclusive,
      sections: Fixtures.sections)
    #expect(
      TextRenderer.status(status) == """
        daemon:    sectiond 0.1.0, protocol 1
        socket:    /run/s.sock (the daemon named)
        revision:  9
        mode:      exclusive
        sections:  3, 1 open (second)
        items:     13, 2 visible

        """)
  }

  /// What STATUS adds: which daemon, its process, files, uptime and clients.
  @Test func statusWithTheDaemonsFacts() {
    let status = DaemonStatus(
      daemonVersion: "0.1.0", protocolVersion: "1", socket: "/run/sectiond/control.sock", revision: 9,
      mode: .multi, sections: Fixtures.sections, kind: .system,
      facts: [
        "pid": "42", "uid": "0", "systemd": "yes", "uptime": "3725", "config": "-",
        "state": "/var/lib/sectiond/state.json", "clients": "3", "subscribers": "1",
      ])
    #expect(
      TextRenderer.status(status) == """
        daemon:    sectiond 0.1.0, protocol 1, pid 42, uid 0, under systemd
        socket:    /run/sectiond/control.sock (the system daemon)
        uptime:    1h 2m
        config:    built-in demo set
        state:     /var/lib/sectiond/state.json
        clients:   3 (this one included), 1 subscribed
        revision:  9
        mode:      multi
        sections:  3, 1 open (second)
        items:     13, 2 visible

        """)
    #expect(TextRenderer.duration(59) == "59s")
    #expect(TextRenderer.duration(61) == "1m 1s")
    #expect(TextRenderer.duration(90061) == "1d 1h")
  }

  /// Watch lines split with `read -r event rev rest`.
  @Test func eventLines() {
    #expect(TextRenderer.event(.opened(revision: 5, index: 1, id: "second")) == "opened 5 1 second\n")
    #expect(TextRenderer.event(.closed(revision: 6, index: 1, id: "second")) == "closed 6 1 second\n")
    #expect(TextRenderer.event(.mode(revision: 7, mode: .exclusive)) == "mode 7 exclusive\n")
    #expect(
      TextRenderer.event(.state(StateSnapshot(revision: 8, mode: .multi, openIDs: []))) == "state 8 multi -\n"
    )
    #expect(
      TextRenderer.event(.state(StateSnapshot(revision: 8, mode: .multi, openIDs: ["a", "b"])))
        == "state 8 multi a,b\n")
    #expect(TextRenderer.event(.reload(revision: 9)) == "reload 9\n")
    #expect(TextRenderer.event(.other("renamed 1 x")) == "renamed 1 x\n")
  }
}
