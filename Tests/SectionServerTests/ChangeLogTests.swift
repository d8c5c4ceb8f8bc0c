import Glibc
import Testing

@testable import SectionCore
@testable import SectionServer
@testable import ServerHarnessSupport

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

  /// The entry names each change as its event did at its step, from the saved group's changes
  /// and authors: the section a TOGGLE by index named is the one at that index then, though the
  /// same group moved sections after it; a client that gave no name is "someone".
  @Test func anEntryNamesEachChangeAtItsStep() throws {
    let harness = try ServerHarness()
    var entries: [Entry] = []
    harness.server.changeLog = ChangeLog { entries.append($0) }
    let editor = try harness.connect()
    let anonymous = try harness.connect()
    try editor.send(
      "CLIENT NAME ed\nINSERT 0 n News\nTOGGLE 1\nMOVE n 2\nITEM INSERT b 0 x\nMODE exclusive\n")
    #expect(try harness.run(until: { editor.hasReplies(6) }))
    #expect(editor.statuses.allSatisfy { $0.hasPrefix("OK") })
    try anonymous.send("TOGGLE 3\n")
    #expect(try harness.run(until: { anonymous.hasReplies(1) }))

    #expect(entries.count == 2)
    guard entries.count == 2 else { return }
    let (edits, toggle) = (entries[0], entries[1])
    #expect(
      field("MESSAGE", edits)
        == "ed (uid \(getuid()), pid \(getpid())) via socket: inserted n, opened a, moved n, items of b, mode exclusive (revisions 1-5)"
    )
    #expect(field("SECTIOND_SECTIONS", edits) == "n,a,b")
    #expect(field("SECTIOND_CHANGES", edits) == "5")
    #expect(field("SECTIOND_FIRST_REV", edits) == "1" && field("SECTIOND_REV", edits) == "5")
    let time = try #require(field("SECTIOND_TIME", edits))
    #expect(HistoryClock.milliseconds(of: time) != nil, "\(time) is a history time")
    // The accordion closes a as c opens: two changes, one entry.
    #expect(
      field("MESSAGE", toggle)
        == "someone (uid \(getuid()), pid \(getpid())) via socket: closed a, opened c (revisions 6-7)")
    #expect(field("SECTIOND_CLIENT_NAME", toggle) == nil)
    #expect(field("SECTIOND_CLIENT_UID", toggle) == String(getuid()))
    #expect(field("SECTIOND_SECTIONS", toggle) == "a,c")
  }

  /// One process's connections under one name are one client to the reader: their changes
  /// in one group are one entry, as the history shows them alike.
  @Test func oneProcessUnderOneNameIsOneEntry() throws {
    let harness = try ServerHarness()
    var entries: [Entry] = []
    harness.server.changeLog = ChangeLog { entries.append($0) }
    let first = try harness.connect()
    let second = try harness.connect()
    try first.send("CLIENT NAME bar\n")
    try second.send("CLIENT NAME bar\n")
    #expect(try harness.run(until: { first.hasReplies(1) && second.hasReplies(1) }))
    try first.send("OPEN a\n")
    try second.send("OPEN b\n")
    #expect(try harness.run(until: { first.hasReplies(2) && second.hasReplies(2) }))
    #expect(entries.count == 1)
    #expect(entries.first.flatMap { field("SECTIOND_CHANGES", $0) } == "2")
    #expect(entries.first.flatMap { field("SECTIOND_CLIENT_NAME", $0) } == "bar")
  }
}
