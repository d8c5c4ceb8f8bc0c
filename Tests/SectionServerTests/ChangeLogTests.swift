import Glibc
import Testing

@testable import SectionCore
@testable import SectionServer

/// `--log-changes` in the server: one journal entry per client and saved group, sent through
/// the change log's injectable sender once the group is in the state file, and none for a
/// group whose save failed.
@Suite struct ChangeLogTests {
  typealias Entry = [(name: String, value: String)]

  func field(_ name: String, _ entry: Entry) -> String? { entry.first { $0.name == name }?.value }

  @Test func aSavedGroupIsLoggedOncePerClientAfterTheSave() throws {
    let harness = try ServerHarness()
    var entries: [Entry] = []
    var savedWhenSent: [Set<String>] = []
    harness.server.changeLog = ChangeLog { [unowned harness] entry in
      entries.append(entry)
      savedWhenSent.append((try? harness.savedOpen()) ?? [])
    }
    let panel = try harness.connect()
    let bar = try harness.connect()
    try panel.send("CLIENT NAME panel\nOPEN a\nOPEN b\n")
    try bar.send("CLIENT NAME bar\nOPEN c\n")
    #expect(try harness.run(until: { panel.hasReplies(3) && bar.hasReplies(2) }))
    #expect(panel.statuses == ["OK", "OK 1", "OK 2"])
    #expect(bar.statuses == ["OK", "OK 3"])

    #expect(entries.count == 2)
    #expect(savedWhenSent.allSatisfy { $0 == ["a", "b", "c"] })
    guard entries.count == 2 else { return }
    let (first, second) = (entries[0], entries[1])
    #expect(field("SECTIOND_CLIENT_NAME", first) == "panel")
    #expect(field("SECTIOND_VIA", first) == "socket")
    #expect(field("SECTIOND_FIRST_REV", first) == "1")
    #expect(field("SECTIOND_REV", first) == "2")
    #expect(field("SECTIOND_CHANGES", first) == "2")
    #expect(field("SECTIOND_SECTIONS", first) == "a,b")
    #expect(field("SECTIOND_CLIENT_UID", first) == String(getuid()))
    #expect(field("SECTIOND_CLIENT_PID", first) == String(getpid()))
    #expect(
      field("MESSAGE", first)
        == "panel (uid \(getuid()), pid \(getpid())) via socket: opened a, opened b (revisions 1-2)")
    #expect(field("SECTIOND_CLIENT_NAME", second) == "bar")
    #expect(field("SECTIOND_REV", second) == "3")
    #expect(field("SECTIOND_SECTIONS", second) == "c")
  }

  @Test func aGroupNotSavedIsNotLogged() throws {
    let harness = try ServerHarness()
    var entries: [Entry] = []
    harness.server.changeLog = ChangeLog { entries.append($0) }
    let client = try harness.connect()
    harness.breakSaves()
    try client.send("OPEN a\n")
    #expect(try harness.run(until: { client.hasReplies(1) }))
    #expect(client.statuses.first?.hasPrefix("ERR INTERNAL") == true)
    #expect(entries.isEmpty)

    harness.mendSaves()
    try client.send("OPEN b\n")
    #expect(try harness.run(until: { client.hasReplies(2) }))
    #expect(entries.count == 1)
    #expect(entries.first.flatMap { field("SECTIOND_SECTIONS", $0) } == "b")
  }
}
