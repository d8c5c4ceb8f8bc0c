import Testing

@testable import SectionClient
@testable import SectionCtl

/// `sectionctl lists`: a row per list, what it said or why it could not.
@Suite struct ListsRendererTests {
  private let rows: [Lists.Row] = {
    let media = try! ListName(validating: "media")
    var status = DaemonStatus(
      daemonVersion: "0.1.0", protocolVersion: "1", socket: "/run/sectiond/readonly.sock", revision: 9,
      mode: .multi, sections: Fixtures.sections)
    status.facts = ["list": "-"]
    var named = DaemonStatus(
      daemonVersion: "0.1.0", protocolVersion: "1", socket: "/run/sectiond/media/control.sock", revision: 9,
      mode: .multi, sections: Fixtures.sections)
    named.facts = ["list": "media", "clients": "2"]
    return [
      Lists.Row(
        found: .init(name: nil, kind: .system, control: "/run/sectiond/control.sock"),
        status: .success(status)),
      Lists.Row(
        found: .init(name: media, kind: .system, control: "/run/sectiond/media/control.sock"),
        status: .success(named)),
      Lists.Row(
        found: .init(
          name: try! ListName(validating: "gone"), kind: .user,
          control: "/run/user/7/sectiond/gone/control.sock"),
        status: .failure(
          .cannotConnect(path: "/run/user/7/sectiond/gone/control.sock", errno: .connectionRefused))),
    ]
  }()

  @Test func text() {
    let lines = TextRenderer.lists(rows, looked: [], style: Style.plain).split(separator: "\n")
    #expect(lines[0] == "NAME   SCOPE   SECTIONS  OPEN  REVISION  CLIENTS  SOCKET")
    #expect(lines[1] == "-      system  3         1     9         -        /run/sectiond/readonly.sock")
    #expect(lines[2] == "media  system  3         1     9         2        /run/sectiond/media/control.sock")
    // A short word in the SOCKET cell, the hint once below the table.
    #expect(lines[3] == "gone   user    -         -     -         -        stopped")
    #expect(
      lines.count == 5 && lines[4].hasPrefix("gone: no daemon is listening on /run/user/7/sectiond/gone/"))
    #expect(
      TextRenderer.lists([], looked: ["/run/user/7/sectiond", "/run/sectiond"], style: Style.plain)
        == "no lists: no sectiond sockets in /run/user/7/sectiond nor in /run/sectiond\n")
  }

  @Test func json() {
    let json = JSONRenderer.lists(rows)
    guard case .array(let entries)? = json["lists"] else {
      Issue.record("no lists array: \(json.serialized())")
      return
    }
    #expect(entries[0]["name"] == .null && entries[0]["clients"] == .null && entries[0]["error"] == .null)
    #expect(entries[1]["name"] == .string("media") && entries[1]["clients"] == .integer(2))
    #expect(entries[1]["sections"] == .integer(3) && entries[1]["open"] == .integer(1))
    #expect(entries[2]["scope"] == .string("user") && entries[2]["sections"] == .null)
    if case .string(let error)? = entries[2]["error"] {
      #expect(error.contains("gone/control.sock"))
    } else {
      Issue.record("no error for the list that did not answer")
    }
  }
}
