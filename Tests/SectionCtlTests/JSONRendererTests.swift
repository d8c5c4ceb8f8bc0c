import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct JSONRendererTests {
  @Test func sections() {
    #expect(
      JSONRenderer.sections(Array(Fixtures.sections.prefix(2)), revision: 3).serialized()
        == #"{"revision":3,"sections":[{"index":0,"id":"first","title":"First","open":false,"item_count":10},"#
        + #"{"index":1,"id":"second","title":"Second","open":true,"item_count":2}]}"#)
  }

  @Test func viewListsItemsOfOpenSectionsOnly() {
    let json = JSONRenderer.view(Fixtures.sections, items: Fixtures.items, revision: 4)
    guard case .array(let sections)? = json["sections"] else {
      Issue.record("no sections in \(json.serialized())")
      return
    }
    #expect(
      sections.map { $0["items"] } == [
        .array([]), .array([.string("one"), .string("two words")]), .array([]),
      ])
    #expect(json["revision"] == .integer(4))
  }

  @Test func items() {
    #expect(
      JSONRenderer.items(Fixtures.items, revision: nil).serialized()
        == #"{"revision":null,"items":[{"section":1,"position":0,"text":"one"},{"section":1,"position":1,"text":"two words"}]}"#
    )
  }

  @Test func modeRevisionAndPing() {
    #expect(JSONRenderer.mode(.exclusive, revision: 2).serialized() == #"{"revision":2,"mode":"exclusive"}"#)
    #expect(JSONRenderer.revision(nil).serialized() == #"{"revision":null}"#)
    #expect(JSONRenderer.revision(UInt64.max).serialized() == #"{"revision":9223372036854775807}"#)
    #expect(
      JSONRenderer.ping(socket: "/s", milliseconds: 0.25).serialized()
        == #"{"socket":"/s","milliseconds":0.25}"#)
  }

  @Test func status() {
    let status = DaemonStatus(
      daemonVersion: "0.1.0", protocolVersion: "1", socket: "/s", revision: 9, mode: .multi,
      sections: Fixtures.sections)
    #expect(
      JSONRenderer.status(status).serialized()
        == #"{"daemon_version":"0.1.0","protocol":"1","socket":"/s","revision":9,"mode":"multi","sections":3,"#
        + #""open":1,"open_ids":["second"],"items":13,"visible_items":2,"daemon":"given","pid":null,"uid":null,"#
        + #""systemd":null,"uptime_seconds":null,"config":null,"state":null,"clients":null,"subscribers":null,"list":null,"access":null,"#
        + #""fleet":null}"#
    )
    var facts = status
    facts.kind = .user
    facts.facts = [
      "pid": "7", "systemd": "no", "config": "/c.json", "state": "-", "clients": "2", "access": "operate",
    ]
    let json = JSONRenderer.status(facts)
    #expect(
      json["daemon"] == .string("user") && json["pid"] == .integer(7) && json["systemd"] == .bool(false))
    #expect(json["access"] == .string("operate"))
    #expect(json["config"] == .string("/c.json") && json["state"] == .null && json["clients"] == .integer(2))
    // A fleet's host says which host it is, through which member, and how far behind; and
    // every other fleet-* fact STATUS sent, by its name, a fact this sectionctl does not know
    // (fleet-future) too.
    facts.facts = [
      "fleet-host": "h1", "fleet-member": "http://m:2379", "fleet-behind": "3", "fleet-stale-since": "-",
      "fleet-state": "refusing", "fleet-config": "h2's config", "fleet-future": "x", "fleet-revision": "9",
    ]
    #expect(
      JSONRenderer.status(facts)["fleet"]?.serialized()
        == #"{"host":"h1","member":"http://m:2379","behind":3,"stale_seconds":null,"error":null,"revision":9,"#
        + #""config":"h2's config","future":"x","state":"refusing"}"#)
    #expect(
      TextRenderer.status(facts).contains(
        """
        fleet-host:         h1
        fleet-state:        refusing
        fleet-member:       http://m:2379
        fleet-revision:     9
        fleet-behind:       3
        fleet-stale-since:  -
        fleet-config:       h2's config
        fleet-future:       x

        """))
    // A reload on a fleet's host says the list was replaced on every host.
    #expect(
      TextRenderer.reload(dropped: [], added: [], count: 2, revision: 4, fleetHost: "h1")
        == "reloaded the config: 2 sections, the same sections, revision 4\n"
        + "in a fleet: every host now serves h1's config, not only h1 (sectionctl status: fleet-config)\n")
    #expect(
      JSONRenderer.reload(dropped: [], added: [], revision: 4, fleetHost: "h1").serialized()
        == #"{"revision":4,"dropped":[],"added":[],"fleet_host":"h1"}"#)
  }

  @Test func events() {
    #expect(
      JSONRenderer.event(.opened(revision: 5, index: 1, id: "b")).serialized()
        == #"{"event":"opened","revision":5,"index":1,"id":"b"}"#)
    #expect(
      JSONRenderer.event(.closed(revision: 6, index: 1, id: "b")).serialized()
        == #"{"event":"closed","revision":6,"index":1,"id":"b"}"#)
    #expect(
      JSONRenderer.event(.mode(revision: 7, mode: .multi)).serialized()
        == #"{"event":"mode","revision":7,"mode":"multi"}"#)
    #expect(
      JSONRenderer.event(.state(StateSnapshot(revision: 8, mode: .exclusive, openIDs: ["a"]))).serialized()
        == #"{"event":"state","revision":8,"mode":"exclusive","open":["a"]}"#)
    #expect(JSONRenderer.event(.reload(revision: 9)).serialized() == #"{"event":"reload","revision":9}"#)
    #expect(
      JSONRenderer.event(.bye(reason: "shutdown")).serialized() == #"{"event":"bye","reason":"shutdown"}"#)
    #expect(JSONRenderer.event(.other("x 1")).serialized() == #"{"event":"other","line":"x 1"}"#)
  }

  @Test func titlesAreEscaped() {
    let odd = ListedSection(index: 0, id: "q", isOpen: false, itemCount: 0, title: #"say "hi" \ bye"#)
    #expect(JSONRenderer.sections([odd], revision: 0).serialized().contains(#""title":"say \"hi\" \\ bye""#))
  }
}
