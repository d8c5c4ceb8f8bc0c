import Testing

@testable import SectionShared

/// Where the read-only socket and a named list's socket are, from the control socket's path:
/// the daemon binds there and sectionctl looks there, so two daemons never share one.
@Suite struct SocketNamesTests {
  @Test(arguments: [
    ("/run/sectiond/control.sock", "/run/sectiond/readonly.sock"),
    ("control.sock", "readonly.sock"),
    ("/tmp/a.sock", "/tmp/a.readonly.sock"),
    ("/tmp/a", "/tmp/a.readonly"),
    ("/tmp/.sock", "/tmp/.sock.readonly"),
    ("/tmp/x.sock.d/c", "/tmp/x.sock.d/c.readonly"),
  ])
  func readonlyBesideControl(_ control: String, _ readonly: String) {
    #expect(SocketNames.readonlyPath(forControl: control) == readonly)
  }

  @Test func aNamedListsSocketIsInADirectoryOfItsName() throws {
    let media = try ListName(validating: "media")
    #expect(
      SocketNames.path(of: media, beside: "/run/sectiond/control.sock") == "/run/sectiond/media/control.sock")
    #expect(SocketNames.path(of: media, beside: "/tmp/a.sock") == "/tmp/media/a.sock")
    #expect(SocketNames.path(of: media, beside: "a.sock") == "media/a.sock")
  }

  @Test func countsNameTheirNoun() {
    #expect(counted(1, "section") == "1 section")
    #expect(counted(0, "item") == "0 items")
    #expect(counted(3, "section") == "3 sections")
  }
}
