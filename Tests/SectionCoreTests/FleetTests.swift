import Testing

@testable import SectionCore
@testable import SectionFleet

/// What a fleet's hosts share through etcd (`FleetEntry`) and how a host applies another's group
/// (`SectionService.applyRemote`, `adopt`): the same revisions, events and history on every host.
@Suite struct FleetTests {
  /// Two hosts of one fleet: services on the same list, each naming its host.
  private func hosts() -> (Harness, Harness) {
    let alpha = Harness(abc(), history: History(capacity: 100))
    let beta = Harness(abc(), history: History(capacity: 100))
    alpha.service.host = Array("alpha".utf8)
    beta.service.host = Array("beta".utf8)
    alpha.service.clock = { 1_796_329_267_123 }
    beta.service.clock = { 1_796_329_999_999 }
    alpha.author = Author(via: .socket, uid: 1000, pid: 4242, name: "kiosk")
    return (alpha, beta)
  }

  /// Commits `alpha`'s unsaved group and applies its entry on `beta`, as the fleet does.
  private func ship(_ alpha: Harness, to beta: Harness) throws -> FleetEntry {
    let group = alpha.service.unsavedGroup
    let bytes = FleetEntry.encode(
      group, host: "alpha", commit: "boot.7", state: alpha.service.encodeState(into:))
    alpha.service.commit { _ in }
    let entry = try FleetEntry.decode(bytes)
    guard case .changes(let changes, let authors) = entry.body else {
      Issue.record("a group of changes came as a state")
      return entry
    }
    try beta.service.applyRemote(changes, authors: authors)
    return entry
  }

  @Test func aGroupIsAppliedWithTheSameRevisionsEventsAndHistory() throws {
    let (alpha, beta) = hosts()
    _ = alpha.send("TOGGLE a")
    _ = alpha.send("INSERT 1 news Latest news")
    _ = alpha.send("CLIENT NAME other")
    _ = alpha.send("ITEM INSERT news 0 hello")
    let events = alpha.service.unsavedGroup.events
    let entry = try ship(alpha, to: beta)
    #expect(entry.revision == 3 && entry.host == "alpha" && entry.commit == "boot.7")
    let applied = beta.service.unsavedGroup
    #expect(applied.events == events)
    #expect(applied.revision == 3)
    beta.service.commit { _ in }
    #expect(beta.reply("LIST") == alpha.reply("LIST"))
    // The history names who made each change through which host, the same on both.
    let history = alpha.reply("HISTORY")
    #expect(beta.reply("HISTORY") == history)
    #expect(history.contains(" socket 1000 4242 kiosk@alpha opened 1 0 a"), "\(history)")
    #expect(history.contains(" other@alpha inserted 3 1 news") || history.contains(" other@alpha items 3"))
  }

  @Test func aGroupThatDoesNotFollowChangesNothing() throws {
    let (alpha, beta) = hosts()
    _ = alpha.send("TOGGLE a")
    let first = alpha.service.unsavedGroup
    let firstBytes = FleetEntry.encode(
      first, host: "alpha", commit: "c1", state: alpha.service.encodeState(into:))
    alpha.service.commit { _ in }
    _ = alpha.send("TOGGLE b")
    let second = try FleetEntry.decode(
      FleetEntry.encode(
        alpha.service.unsavedGroup, host: "alpha", commit: "c2", state: alpha.service.encodeState(into:)))
    alpha.service.commit { _ in }
    guard case .changes(let changes, let authors) = second.body else { return }
    // The second group without the first: refused, nothing changed, nothing unsaved.
    #expect(throws: ProtocolError.self) { try beta.service.applyRemote(changes, authors: authors) }
    #expect(!beta.service.hasUnsavedChanges && beta.service.model.revision == 0)
    guard case .changes(let firstChanges, let firstAuthors) = try FleetEntry.decode(firstBytes).body else {
      return
    }
    try beta.service.applyRemote(firstChanges, authors: firstAuthors)
    beta.service.commit { _ in }
    try beta.service.applyRemote(changes, authors: authors)
    beta.service.commit { _ in }
    #expect(beta.service.model.revision == 2 && beta.reply("LIST") == alpha.reply("LIST"))
  }

  @Test func aReloadTravelsAsTheWholeStateAndIsAdopted() throws {
    let (alpha, beta) = hosts()
    _ = alpha.send("TOGGLE a")
    alpha.service.commit { _ in }
    var reply = OutputQueue()
    let abd = config(.multi, [("a", [], false), ("b", [], false), ("d", [], false)])
    #expect(try alpha.service.reload(abd, by: alpha.author, reply: &reply) == .changed)
    let events = alpha.service.unsavedGroup.events
    let entry = try FleetEntry.decode(
      FleetEntry.encode(
        alpha.service.unsavedGroup, host: "alpha", commit: "c", state: alpha.service.encodeState(into:)))
    alpha.service.commit { _ in }
    guard case .state(let state, let first) = entry.body else {
      Issue.record("a reload came as changes")
      return
    }
    // The events say only where the group began: each host renders its own.
    #expect(first == 2 && String(decoding: events, as: UTF8.self).hasPrefix("!reload 2"))
    beta.service.adopt(state)
    #expect(beta.reply("LIST") == alpha.reply("LIST"))
    #expect(beta.reply("HISTORY") == alpha.reply("HISTORY"))
    #expect(beta.service.model.revision == alpha.service.model.revision)
  }

  /// What anyone who can write the prefix may put in an entry: text a request could not hold
  /// (in a title, an author, the header), a state whose history breaks lines, a reload whose
  /// events name no revision or jump: each refused before anything is applied.
  @Test func entriesWithTextARequestCannotHoldAreRefused() throws {
    func group(_ lines: String, revision: UInt64) -> [UInt8] {
      var bytes = Array(lines.utf8)
      Journal.appendCommit(revision: revision, to: &bytes, groupStart: 0)
      return bytes
    }
    let header = Array("sectiond-fleet 1 1 alpha c\n".utf8)
    // The same group, clean, is read: the checks are on the text, not the form.
    #expect(throws: Never.self) { try FleetEntry.decode(header + group("open 1 0\n", revision: 1)) }
    for lines in [
      "by 2026-12-04T23:50:01.123Z socket 0 1 \u{1b}]0;x\u{07}@evil\nopen 1 0\n",
      "by 2026-12-04T23:50:01.123Z socket 0 1 a\rMESSAGE=forged\nopen 1 0\n",
      "rename 1 0 a \u{1b}[6n\n",
    ] {
      #expect(throws: ProtocolError.self, "\(lines.debugDescription)") {
        try FleetEntry.decode(header + group(lines, revision: 1))
      }
    }
    var invalidUTF8 =
      Array("by 2026-12-04T23:50:01.123Z socket 0 1 ".utf8) + [0xC3, 0x28] + Array("\nopen 1 0\n".utf8)
    Journal.appendCommit(revision: 1, to: &invalidUTF8, groupStart: 0)
    #expect(throws: ProtocolError.self) { try FleetEntry.decode(header + invalidUTF8) }
    #expect(throws: ProtocolError.self) {
      try FleetEntry.decode(
        Array("sectiond-fleet 1 1 al\u{1b}pha c\n".utf8) + group("open 1 0\n", revision: 1))
    }
    // A change whose revision is not the group's.
    #expect(throws: ProtocolError.self) {
      try FleetEntry.decode(header + group("open 5 0\nopen 1 0\n", revision: 1))
    }

    func reload(_ events: String, history: String = #""ok""#, revision: Int = 2) -> [UInt8] {
      let state =
        #"{"format":2,"revision":\#(revision),"mode":"multi","sections":{"a":null},"list":[{"id":"a","title":"A","items":[],"origin":"config"}],"deleted":[],"edited":[],"history":[\#(history)]}"#
      return Array("sectiond-fleet 1 \(revision) alpha c state \(events.utf8.count)\n\(events)\(state)".utf8)
    }
    guard case .state(_, let first) = try FleetEntry.decode(reload("!opened 1 0 a\n!reload 2\n")).body else {
      Issue.record("a reload came as changes")
      return
    }
    #expect(first == 1)
    for damaged in [
      reload("!bye shutdown\n"), reload("!reload 2\n\u{1b}]0;title\u{07}OK 31337\n"), reload(""),
      reload("!reload 2\n", history: #""x\nOK 424242""#), reload("!reload 2\n", history: #""x\r""#),
      reload("!opened 1 0 a\n!reload 9223372036854775806\n", revision: 9_223_372_036_854_775_806),
      reload("!reload 2\n", revision: 3),
    ] {
      #expect(throws: ProtocolError.self, "\(String(decoding: damaged, as: UTF8.self))") {
        try FleetEntry.decode(damaged)
      }
    }
  }

  /// A host that keeps no history still writes who made each change into the fleet's entries,
  /// and a change that came without one is shown as made through the host that committed it.
  @Test func authorsTravelWhateverTheHistory() throws {
    let alpha = Harness(abc(), history: History(capacity: 0))
    let beta = Harness(abc(), history: History(capacity: 100))
    alpha.service.host = Array("alpha".utf8)
    beta.service.host = Array("beta".utf8)
    alpha.author = Author(via: .socket, uid: 1000, pid: 4242, name: "kiosk")
    _ = alpha.send("TOGGLE a")
    let entry = try ship(alpha, to: beta)
    guard case .changes(_, let authors) = entry.body else { return }
    #expect(
      authors[1].map { String(decoding: $0.text, as: UTF8.self).hasSuffix("socket 1000 4242 kiosk@alpha") }
        == true
    )
    beta.service.commit { _ in }
    let unknown = try FleetEntry.decode(
      Array("sectiond-fleet 1 2 alpha c\n".utf8)
        + {
          var bytes = Array("open 2 1\n".utf8)
          Journal.appendCommit(revision: 2, to: &bytes, groupStart: 0)
          return bytes
        }())
    guard case .changes(let changes, let none) = unknown.body else { return }
    try beta.service.applyRemote(changes, authors: none, through: Array("alpha".utf8))
    beta.service.commit { _ in }
    let history = beta.reply("HISTORY")
    #expect(history.contains("@alpha opened 2 1") && !history.contains("@beta"), "\(history)")
  }

  @Test func damagedEntriesAreRefused() {
    for text in [
      "", "hello\n", "sectiond-fleet 1 x alpha c\n", "sectiond-fleet 1 3 alpha\n",
      "sectiond-fleet 1 1 alpha c\nopen 1 0\ncommit 1 00000000\n",  // wrong checksum
      "sectiond-fleet 1 2 alpha c\nopen 1 0\n",  // no commit line
      "sectiond-fleet 1 1 alpha c other\nx\n", "sectiond-fleet 1 1 alpha c state\n{\n",
    ] {
      #expect(throws: ProtocolError.self, "\(text)") { try FleetEntry.decode(Array(text.utf8)) }
    }
  }

  @Test func changesWaitWhileSealedAndAreRefusedWhileUnavailable() {
    let (alpha, _) = hosts()
    _ = alpha.send("TOGGLE a")
    alpha.service.gate.sealed = true
    // Another client's change waits for the sealed group's outcome; so does RELOAD.
    #expect(alpha.send("TOGGLE b").1 == .deferred)
    #expect(alpha.send("RELOAD").1 == .deferred)
    alpha.service.gate.sealed = false
    alpha.service.commit { _ in }
    alpha.service.gate.refusal = ProtocolError(.unavailable, "etcd: no leader")
    #expect(alpha.send("TOGGLE b").0 == "ERR UNAVAILABLE etcd: no leader\n")
    #expect(alpha.send("LIST").0.hasSuffix("OK 1\n"))
  }

  /// A group sealed for etcd may wait seconds: another client's read is answered meanwhile
  /// from the state as last committed, never from the group's.
  @Test func readsWhileSealedSeeTheCommittedState() {
    let (alpha, _) = hosts()
    _ = alpha.send("TOGGLE a")
    #expect(alpha.send("LIST").1 == .deferred, "unsealed: a read waits for the save, as without a fleet")
    alpha.service.gate.sealed = true
    let list = alpha.reply("LIST")
    #expect(list.hasPrefix("section 0 a closed") && list.hasSuffix("OK 0\n"), "\(list)")
    #expect(alpha.reply("SUBSCRIBE").hasPrefix("state 0 multi -\n"))
    alpha.service.gate.sealed = false
    _ = alpha.service.commit()
    #expect(alpha.reply("LIST").hasPrefix("section 0 a open"))
    #expect(alpha.service.committedView == nil)
  }

  /// The format as docs/FLEET.md and the fuzzer's corpus (Tests/Fuzz/corpus/state/fleet-entry)
  /// have it, written by hand.
  @Test func anEntryWrittenByHandIsRead() throws {
    let text =
      "sectiond-fleet 1 2 alpha b.1\nby 2026-12-05T00:00:00.000Z socket 0 42 ctl@alpha\nopen 1 0\nclose 2 0\ncommit 2 2a2a5c15\n"
    let entry = try FleetEntry.decode(Array(text.utf8))
    #expect(entry.revision == 2 && entry.host == "alpha" && entry.commit == "b.1")
    guard case .changes(let changes, let authors) = entry.body else { return }
    #expect(
      changes.count == 2 && authors[1]?.text == Array("2026-12-05T00:00:00.000Z socket 0 42 ctl@alpha".utf8))
  }
}
