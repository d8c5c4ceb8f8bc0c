import Testing

@testable import SectionCore

/// A service keeping `capacity` changes, at a fixed time, its requests by uid 1000, pid 4242.
private func historyHarness(capacity: Int = 1000, name: String? = nil) -> Harness {
  let harness = Harness(history: History(capacity: capacity))
  harness.service.clock = { 1_796_329_267_123 }
  harness.author = Author(via: .socket, uid: 1000, pid: 4242, name: name)
  harness.service.processName = { $0 == 4242 ? "my tool\u{1B}" : nil }
  return harness
}

/// Sends `line` and saves what it changed.
private func saved(_ harness: Harness, _ line: String) {
  _ = harness.send(line)
  _ = harness.commit()
}

@Suite struct HistoryClockTests {
  @Test(arguments: [
    (UInt64(0), "1970-01-01T00:00:00.000Z"), (951_782_400_001, "2000-02-29T00:00:00.001Z"),
    (1_796_329_267_123, "2026-12-03T20:21:07.123Z"), (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
  ])
  func rfc3339(milliseconds: UInt64, text: String) {
    var clock = HistoryClock()
    var bytes: [UInt8] = []
    bytes.appendText { clock.append(milliseconds: milliseconds, to: &$0) }
    #expect(String(decoding: bytes, as: UTF8.self) == text)
  }
}

extension HistoryClockTests {
  @Test func timesReadBack() {
    for seconds in [0, 951_782_400, 1_796_329_267, 4_102_444_799] {
      var clock = HistoryClock()
      var bytes: [UInt8] = []
      bytes.appendText { clock.append(milliseconds: UInt64(seconds) * 1000 + 5, to: &$0) }
      #expect(HistoryClock.seconds(of: String(decoding: bytes, as: UTF8.self)) == seconds)
    }
    #expect(HistoryClock.seconds(of: "yesterday") == nil)
  }
}

@Suite struct HistoryRingTests {
  let author = Author(via: .socket, uid: 1, pid: 2, name: "x")

  func event(_ revision: Int, _ text: String = "x") -> [UInt8] {
    Array("!opened \(revision) 0 \(text)\n".utf8)
  }

  func keep(_ history: inout History, _ revision: Int, _ text: String = "x", by author: Author? = nil) {
    history.append(
      revision: UInt64(revision), time: 0, author: author ?? self.author, event: event(revision, text))
  }

  @Test func keepsTheNewestUpToItsCapacity() {
    var history = History(capacity: 3)
    for revision in 1...10 { keep(&history, revision) }
    #expect(history.count == 3)
    #expect(history.oldestRevision == 8)
    #expect((0..<3).map { Array(history.event($0)) } == [event(8), event(9), event(10)])
    #expect(history.position(after: 7, current: 10) == 0)
    #expect(history.position(after: 9, current: 10) == 2)
    #expect(history.position(after: 10, current: 10) == 3)
    #expect(history.position(after: 6, current: 10) == nil)
    #expect(history.position(after: 11, current: 10) == nil)
    #expect(history.position(after: 9, current: 11) == nil)
  }

  @Test func keepsNoMoreThanItsBytes() {
    var history = History(capacity: 1000)
    let long = String(repeating: "i", count: 4000)
    for revision in 1...2000 { keep(&history, revision, long) }
    #expect(history.count < 1100 && history.count > 1000 / 2)
    #expect(history.count * 4000 <= History.byteLimit)
    #expect(history.newestRevision == 2000)
    #expect(history.bytes < 3 * History.byteLimit)
  }

  @Test func theAuthorTableStaysBounded() {
    var history = History(capacity: 10)
    let kept = Author(via: .bus, uid: 5, pid: 6, name: "kept")
    keep(&history, 1, by: kept)
    for revision in 2...10 { keep(&history, revision) }
    // A thousand clients of one change each: the table is rebuilt with those still referred to.
    for revision in 11...1010 {
      keep(&history, revision, by: Author(via: .socket, uid: 0, pid: Int32(revision)))
    }
    #expect(history.count == 10 && history.newestRevision == 1010)
    var harness = Harness(history: history)
    var lines = harness.reply("HISTORY 2").split(separator: "\n")
    #expect(
      lines.count == 3 && lines[1].contains(" socket 0 1010 ") && lines[0].contains(" socket 0 1009 "),
      "\(lines)")
    harness = Harness(history: history)
    lines = harness.reply("HISTORY 100").split(separator: "\n")
    #expect(lines.count == 11)
  }

  /// A saved group is kept in one go (`append(_:events:)`): it must keep exactly what keeping
  /// its changes one by one keeps, whoever made them, however large the group.
  @Test(arguments: [
    (10, 3, 5, 1), (10, 8, 25, 1), (2000, 500, 1500, 4000), (2000, 1900, 1500, 4000), (10, 4, 3, 1),
  ])
  func aGroupKeepsWhatItsChangesOneByOneWould(capacity: Int, kept: Int, grouped: Int, idLength: Int) {
    let other = Author(via: .bus, uid: 5, pid: 6, name: "b")
    // Runs of one author's changes, and an author that comes back.
    let authors = [author, author, other, other, Author(via: .socket, uid: 7, pid: 8), author]
    let id = String(repeating: "i", count: idLength)
    var oneByOne = History(capacity: capacity)
    for revision in 1...kept { keep(&oneByOne, revision, id) }
    var inGroup = oneByOne
    var group = History.Group()
    var events: [UInt8] = []
    var previous: Author?
    // The last case's group does not follow the history: both start afresh.
    let firstRevision = capacity == 10 && grouped == 3 ? kept + 2 : kept + 1
    for (number, revision) in (firstRevision..<(firstRevision + grouped)).enumerated() {
      let author = authors[number % authors.count]
      keep(&oneByOne, revision, id, by: author)
      let start = events.count
      events += event(revision, id)
      if author !== previous { group.begin(author) }
      previous = author
      group.add(revision: UInt64(revision), events: start..<events.count)
    }
    inGroup.append(group, events: events)
    #expect(inGroup.count == oneByOne.count && inGroup.oldestRevision == oneByOne.oldestRevision)
    #expect(inGroup.bytes < 3 * History.byteLimit)
    #expect(
      (0..<inGroup.count).map { Array(inGroup.event($0)) }
        == (0..<oneByOne.count).map { Array(oneByOne.event($0)) })
    #expect(
      Harness(history: inGroup).reply("HISTORY 5000") == Harness(history: oneByOne).reply("HISTORY 5000"))
  }

  @Test func aGapStartsItAfresh() {
    var history = History(capacity: 10)
    keep(&history, 1)
    keep(&history, 3)
    #expect(history.oldestRevision == 3 && history.count == 1)
  }

  @Test func noneAtCapacityZero() {
    var history = History(capacity: 0)
    keep(&history, 1)
    #expect(history.isEmpty)
    #expect(history.position(after: 0, current: 1) == nil)
    #expect(history.position(after: 1, current: 1) == 0)
    #expect(history.oldestKept(current: 1) == 2)
  }

  @Test func savedLinesAreKeptAsFarBackAsTheyFollowOn() {
    let lines = ["1", "2", "4", "5", "6", "9"].map {
      Array("\($0) 2026-12-03T20:21:07.123Z socket 1 2 x opened \($0) 0 a".utf8)
    }
    let history = History(capacity: 10, lines: lines, revision: 6)
    #expect(history.oldestRevision == 4 && history.newestRevision == 6)
    #expect(History(capacity: 2, lines: lines, revision: 6).oldestRevision == 5)
    #expect(History(capacity: 10, lines: lines, revision: 7).isEmpty)
    #expect(
      History(capacity: 10, lines: [Array("6 yesterday socket 1 2 x opened 6 0 a".utf8)], revision: 6).isEmpty
    )
  }
}

@Suite struct HistoryServiceTests {
  @Test func eachSavedChangeIsKeptWithWhoMadeIt() {
    let harness = historyHarness(name: nil)
    #expect(harness.reply("CLIENT NAME waybar") == "OK\n")
    saved(harness, "TOGGLE a")
    let expected = """
      history 1 2026-12-03T20:21:07.123Z socket 1000 4242 waybar opened 1 0 a
      OK 1

      """
    #expect(harness.reply("HISTORY") == expected)
  }

  @Test func withoutANameTheProcessNameStandsAsOneWord() {
    let harness = historyHarness()
    saved(harness, "OPEN b")
    #expect(
      harness.reply("HISTORY 1").hasPrefix(
        "history 1 2026-12-03T20:21:07.123Z socket 1000 4242 my_tool_ opened 1 1 b\n"))
  }

  @Test func badNamesAreRefused() {
    let harness = historyHarness()
    for bad in [
      "CLIENT NAME", "CLIENT NAME a b", "CLIENT NAME bad!", "CLIENT x y",
      "CLIENT NAME " + String(repeating: "n", count: 65), "CLIENT NAME -",
    ] {
      #expect(harness.reply(bad).hasPrefix("ERR SYNTAX "))
    }
    // `-` is what the history shows for a name it hides.
    #expect(harness.reply("CLIENT NAME -").contains("\"-\" alone"))
    #expect(harness.reply("client name " + String(repeating: "n", count: 64)) == "OK\n")
    #expect(harness.reply("CLIENT NAME web:::1") == "OK\n")
  }

  @Test func aModeSwitchsClosingsBelongToItsRequest() {
    let harness = historyHarness(name: "ctl")
    saved(harness, "OPEN a")
    saved(harness, "OPEN b")
    saved(harness, "MODE exclusive")
    let lines = harness.reply("HISTORY").split(separator: "\n").map(String.init)
    #expect(lines.count == 5)
    #expect(lines[2].hasSuffix("ctl closed 3 0 a"))
    #expect(lines[3].hasSuffix("ctl mode 4 exclusive"))
    #expect(lines[4] == "OK 4")
  }

  @Test func theReadOnlySocketLearnsNothingOfWho() {
    let harness = historyHarness(name: "waybar")
    saved(harness, "TOGGLE a")
    #expect(
      harness.reply("HISTORY", access: .readOnly)
        == "history 1 2026-12-03T20:21:07.123Z socket - - - opened 1 0 a\nOK 1\n")
  }

  /// The changes `HISTORY` hands a face that answers with values (D-Bus): what its lines say,
  /// blanked as they are for the read-only access, refused and deferred as they are.
  @Test func historyAnswersWithTheKeptChangesAsValues() throws {
    let harness = historyHarness(name: "waybar")
    saved(harness, "TOGGLE a")
    saved(harness, "OPEN b")
    func changes(_ request: Request, _ access: SectionService.Access = .control) -> Result<
      SectionService.Answer, ProtocolError
    > {
      var session = Session(access: access, author: harness.author)
      var batch: Batch?
      return harness.service.answer(request, session: &session, batch: &batch)
    }
    let answer = try changes(.history(last: 20)).get()
    #expect(answer.outcome == .replied && answer.revision == 2)
    #expect(answer.changes.map(\.revision) == [1, 2])
    let first = try #require(answer.changes.first)
    var clock = HistoryClock()
    #expect(clock.string(milliseconds: first.time) == "2026-12-03T20:21:07.123Z")
    #expect(first.who.via == .socket && first.who.uid == 1000 && first.who.pid == 4242)
    #expect(first.who.name == Array("waybar".utf8) && Array(first.event) == Array("opened 1 0 a".utf8))
    #expect(try changes(.history(last: 1)).get().changes.map(\.revision) == [2])
    #expect(
      try changes(.historyFrom(1)).get().changes.map { Array($0.event) } == [Array("opened 2 1 b".utf8)])
    #expect(try changes(.historyFrom(2)).get().changes.isEmpty)
    let blanked = try #require(try changes(.history(last: 1), .readOnly).get().changes.first)
    #expect(
      blanked.who.uid == nil && blanked.who.pid == nil && blanked.who.name.isEmpty
        && blanked.who.via == .socket)
    #expect(throws: ProtocolError.self) { try changes(.historyFrom(3)).get() }
    _ = harness.send("TOGGLE a")
    #expect(try changes(.history(last: 20)).get().outcome == .deferred)
  }

  @Test func historyCountsAndFrom() {
    let harness = historyHarness()
    for _ in 0..<30 { saved(harness, "TOGGLE a") }
    #expect(harness.reply("HISTORY").split(separator: "\n").count == 21)
    #expect(harness.reply("HISTORY 2").split(separator: "\n").count == 3)
    #expect(harness.reply("HISTORY 0") == "OK 30\n")
    #expect(
      harness.reply("HISTORY FROM 27").split(separator: "\n").map { $0.prefix(10) } == [
        "history 28", "history 29", "history 30", "OK 30",
      ])
    #expect(harness.reply("HISTORY FROM 30") == "OK 30\n")
    #expect(
      harness.reply("HISTORY FROM 31")
        == "ERR GONE 1 is the oldest revision kept, and revision 31 is newer than the state's (30); SUBSCRIBE gets the state\n"
    )
    // Past any revision, the number sent is named, not a rounded one.
    #expect(
      harness.reply("HISTORY FROM 18446744073709551616")
        == "ERR SYNTAX revision 18446744073709551616 is out of range (at most 18446744073709551615): usage: HISTORY [n] | HISTORY FROM <rev>\n"
    )
    #expect(
      harness.reply("HISTORY FROM 18446744073709551615").contains(" revision 18446744073709551615 is newer "))
    #expect(harness.reply("HISTORY FROM x").hasPrefix("ERR SYNTAX "))
    // The word too many is blamed, not the count before it.
    #expect(harness.reply("HISTORY 1 2").hasPrefix("ERR SYNTAX unexpected \"2\""))
    #expect(harness.reply("HISTORY x 2").hasPrefix("ERR SYNTAX unexpected \"x\""))
  }

  @Test func goneNamesTheOldestKept() {
    let harness = historyHarness(capacity: 5)
    for _ in 0..<10 { saved(harness, "TOGGLE a") }
    #expect(
      harness.reply("HISTORY FROM 4")
        == "ERR GONE 6 is the oldest revision kept, and revision 4 is older than 5, the one before it: the changes after 4 are not all kept; SUBSCRIBE gets the state\n"
    )
    #expect(harness.reply("HISTORY FROM 5").hasPrefix("history 6 "))
  }

  @Test func subscribeFromReplaysTheMissedEvents() {
    let harness = historyHarness()
    saved(harness, "OPEN a")
    saved(harness, "BATCH")
    _ = harness.send("CLOSE a")
    _ = harness.send("OPEN c")
    saved(harness, "END")
    #expect(harness.send("SUBSCRIBE FROM 1") == ("OK 1\n!closed 2 0 a\n!opened 3 2 c\n", .subscribe))
    #expect(harness.send("SUBSCRIBE FROM 3") == ("OK 3\n", .subscribe))
    // Not kept, or ahead: what SUBSCRIBE answers.
    let snapshot = harness.send("SUBSCRIBE")
    #expect(snapshot.0 == "state 3 multi c\nOK 3\n")
    #expect(harness.send("SUBSCRIBE FROM 4") == snapshot)
    #expect(Harness().send("SUBSCRIBE FROM 0").0 == "OK 0\n")
    let off = Harness()
    saved(off, "OPEN a")
    #expect(off.send("SUBSCRIBE FROM 0").0 == "state 1 multi a\nOK 1\n")
  }

  /// A long answer is made a part at a time, as the client reads: each part
  /// holds about `partBytes`, the parts add up to the answer, and a change that went from the
  /// history before its part was made ends a `HISTORY` with ERR GONE, a replay with `.gone`.
  @Test func aLongAnswerIsMadeAPartAtATime() {
    let harness = historyHarness(capacity: 1000)
    let id = String(repeating: "i", count: 200)
    saved(harness, "INSERT end \(id) I")
    for _ in 0..<999 { saved(harness, "TOGGLE \(id)") }
    let whole = harness.reply("HISTORY 1000")
    var reply = OutputQueue()
    var batch: Batch?
    var session = Session(access: .control, author: harness.author)
    var readOnly = Session(access: .readOnly, author: harness.author)
    #expect(
      harness.service.handle(Array("HISTORY 1000".utf8)[...], session: &session, batch: &batch, reply: &reply)
        == .streaming)
    guard var stream = harness.service.takeStream() else { return }
    var parts = [reply.unsentBytes]
    while true {
      reply = OutputQueue()
      let progress = harness.service.continueStream(&stream, to: &reply)
      parts.append(reply.unsentBytes)
      #expect(reply.count < HistoryStream.partBytes + 512)
      if progress != .more { break }
    }
    #expect(parts.count > 3 && String(decoding: parts.joined(), as: UTF8.self) == whole)
    // Made to wait: 1,000 changes later the rest is gone.
    reply = OutputQueue()
    #expect(
      harness.service.handle(Array("HISTORY 1000".utf8)[...], session: &session, batch: &batch, reply: &reply)
        == .streaming)
    stream = harness.service.takeStream()!
    for _ in 0..<1000 { saved(harness, "TOGGLE \(id)") }
    reply = OutputQueue()
    #expect(harness.service.continueStream(&stream, to: &reply) == .gone)
    #expect(String(decoding: reply.unsentBytes, as: UTF8.self).hasPrefix("ERR GONE 1001 "))
    reply = OutputQueue()
    #expect(
      harness.service.handle(
        Array("SUBSCRIBE FROM 1001".utf8)[...], session: &readOnly, batch: &batch, reply: &reply)
        == .streaming
    )
    stream = harness.service.takeStream()!
    #expect(stream.isReplay)
    for _ in 0..<1000 { saved(harness, "TOGGLE \(id)") }
    reply = OutputQueue()
    #expect(harness.service.continueStream(&stream, to: &reply) == .gone)
  }

  @Test func aChangeNotSavedIsNotKept() {
    let harness = historyHarness()
    _ = harness.send("TOGGLE a")
    harness.service.rollback()
    saved(harness, "TOGGLE b")
    #expect(
      harness.reply("HISTORY").hasPrefix(
        "history 1 2026-12-03T20:21:07.123Z socket 1000 4242 my_tool_ opened 1 1 b\n"))
  }

  @Test func historyWaitsForUnsavedChanges() {
    let harness = historyHarness()
    _ = harness.send("TOGGLE a")
    #expect(harness.send("HISTORY").1 == .deferred)
    #expect(harness.send("SUBSCRIBE FROM 0").1 == .deferred)
  }

  /// The state file takes the history's lines as JSON strings straight from their bytes when
  /// they are plain ASCII, and through a String otherwise: both read back as written.
  @Test func historyLinesReadBackFromTheStateFile() throws {
    let lines = [
      "1 2026-12-03T20:21:07.123Z socket 1000 4242 w opened 1 0 plain",
      "2 2026-12-03T20:21:07.123Z socket 1000 4242 w opened 2 1 caf\u{E9}",
      "3 2026-12-03T20:21:07.123Z bus - - - inserted 3 0 a\"quote\\and\tslash",
    ]
    var file = SavedState.encode(SectionModel(config: abc()))
    SavedState.appendHistory(lines: Array(lines.map { $0 + "\n" }.joined().utf8), to: &file)
    #expect(try SavedState.decode(file).history.map { String(decoding: $0, as: UTF8.self) } == lines)
  }

  @Test func theJournalCarriesTheHistoryAndTheStateFileKeepsIt() throws {
    let harness = historyHarness(name: "w")
    _ = harness.send("TOGGLE a")
    _ = harness.send("TOGGLE b")
    let journal = harness.service.journal
    // One `by` line for the client's run of changes, not one a change.
    #expect(
      String(decoding: journal, as: UTF8.self)
        == "by 2026-12-03T20:21:07.123Z socket 1000 4242 w\nopen 1 0\nopen 2 1\n")
    var group = journal
    Journal.appendCommit(revision: 2, to: &group, groupStart: 0)
    let contents = Journal.decode(group)
    #expect(contents.stop == nil && contents.groups.count == 1)
    let who = Array("2026-12-03T20:21:07.123Z socket 1000 4242 w".utf8)
    #expect(contents.authors.mapValues(\.text) == [1: who, 2: who])
    // Saved as a whole state before the commit: the unsaved changes' lines are in it.
    var file: [UInt8] = []
    harness.service.encodeState(into: &file)
    let state = try SavedState.decode(file)
    #expect(
      state.history.map { String(decoding: $0, as: UTF8.self) } == [
        "1 2026-12-03T20:21:07.123Z socket 1000 4242 w opened 1 0 a",
        "2 2026-12-03T20:21:07.123Z socket 1000 4242 w opened 2 1 b",
      ])
    _ = harness.commit()
    let restarted = History(capacity: 1000, lines: state.history, revision: state.revision)
    #expect(restarted.count == 2 && restarted.newestRevision == 2)
    #expect(
      Harness(history: restarted).reply("HISTORY").split(separator: "\n").dropLast()
        == harness.reply("HISTORY").split(separator: "\n").dropLast())
  }

  /// A saved group names each change's author (what `--log-changes` logs), however the
  /// authors take turns in the group, and the journal has a `by` line for each turn.
  @Test func aGroupNamesEachChangesAuthor() {
    let harness = historyHarness(name: "w")
    let first = harness.author
    _ = harness.send("TOGGLE a")
    let panel = Author(via: .bus, uid: 7, pid: 8, name: "panel")
    harness.author = panel
    _ = harness.send("TOGGLE b")
    harness.author = Author(via: .socket, uid: 1000, pid: 4242, name: "w")
    let third = harness.author
    _ = harness.send("TOGGLE a")
    let group = harness.service.unsavedGroup
    #expect(group.time == 1_796_329_267_123)
    let authors = group.runs.map(\.author)
    #expect(authors.count == 3 && zip(authors, [first, panel, third]).allSatisfy { $0 === $1 })
    #expect(group.runs.map(\.changes) == [0..<1, 1..<2, 2..<3])
    #expect(
      (0..<3).map { group.event($0).map { String(decoding: $0, as: UTF8.self) } } == [
        "!opened 1 0 a\n", "!opened 2 1 b\n", "!closed 3 0 a\n",
      ])
    #expect(
      String(decoding: harness.service.journal, as: UTF8.self).split(separator: "\n").filter {
        $0.hasPrefix("by ")
      }.count == 3)
    _ = harness.commit()
    #expect(harness.service.unsavedGroup.isEmpty && harness.service.unsavedGroup.runs.isEmpty)
    #expect(
      harness.reply("HISTORY").hasPrefix(
        "history 1 2026-12-03T20:21:07.123Z socket 1000 4242 w opened 1 0 a\n"))
    #expect(
      harness.reply("HISTORY").contains("history 2 2026-12-03T20:21:07.123Z bus 7 8 panel opened 2 1 b\n"))
  }

  /// What the journal's groups replay to has the history the daemon served, after a restart as
  /// before it: each change's author from its `by` line, its event naming the section by the id
  /// it had at that step of the replay (later steps move, rename and delete them again).
  @Test func replayedHistoryIsTheServedHistory() throws {
    let harness = historyHarness(name: "e")
    let start = SavedState(harness.service.model)
    var groups: [UInt8] = []
    let requests = [
      "OPEN b", "INSERT 0 n Latest  news", "OPEN n", "MOVE n 3", "RENAME n Aye aye", "ITEM INSERT n 0 hello",
      "ITEM INSERT n end two", "ITEM MOVE n 0 1", "ITEM SET n 0 set", "ITEM DELETE n 0", "DELETE a",
      "CLOSE ALL", "MODE exclusive",
    ]
    for (number, request) in requests.enumerated() {
      if number == 6 { harness.author = Author(via: .bus, uid: 7, pid: 8) }
      #expect(harness.send(request).1 == .changed, "\(request)")
      let groupStart = groups.count
      groups += harness.service.journal
      Journal.appendCommit(revision: harness.service.model.revision, to: &groups, groupStart: groupStart)
      _ = harness.commit()
    }
    let contents = Journal.decode(groups)
    #expect(contents.stop == nil)
    let (state, stop) = start.replaying(contents.groups, authors: contents.authors)
    #expect(stop == nil)
    let served = harness.reply("HISTORY 100").split(separator: "\n").dropLast().map {
      String($0.dropFirst(8))
    }
    #expect(state.history.map { String(decoding: $0, as: UTF8.self) } == served)
    #expect(served.count > requests.count && served.contains { $0.contains(" bus 7 8 - ") })
  }

  /// A `by` line whose words do not read (a time that is none) names no one: its changes are
  /// replayed, and the history keeps no line that would not read back.
  @Test func aByLineThatDoesNotReadNamesNoOne() {
    let start = SavedState(Harness().service.model)
    var group = Array("by yesterday socket 1000 4242 w\nopen 1 0\n".utf8)
    Journal.appendCommit(revision: 1, to: &group, groupStart: 0)
    let contents = Journal.decode(group)
    #expect(contents.stop == nil && contents.groups.count == 1)
    #expect(contents.authors.isEmpty)
    let (state, stop) = start.replaying(contents.groups, authors: contents.authors)
    #expect(stop == nil && state.revision == 1)
    #expect(state.history.isEmpty)
  }

  @Test func aStartThatOpensIsAReloadInTheHistory() {
    let saved = SavedState(revision: 4, mode: .multi, sections: ["a": nil, "b": nil], list: nil)
    let harness = Harness(
      abc(open: ["c"]), saved: saved,
      history: History(
        capacity: 10, lines: [Array("4 2026-12-03T20:21:07.123Z socket 1 2 x opened 4 0 a".utf8)], revision: 4
      ))
    harness.author = Author(via: .reload, uid: 0, pid: 1, name: "sectiond")
    harness.service.recordStart(after: 4, by: harness.author)
    #expect(harness.service.model.revision == 5)
    #expect(harness.reply("HISTORY").hasSuffix(" reload 0 1 sectiond reload 5\nOK 5\n"))
    #expect(harness.send("SUBSCRIBE FROM 4").0 == "OK 4\n!reload 5\n")
  }

  @Test func offKeepsNothingAndJournalsNoHistory() {
    let harness = Harness()
    _ = harness.send("TOGGLE a")
    #expect(String(decoding: harness.service.journal, as: UTF8.self) == "open 1 0\n", "no by lines")
    _ = harness.commit()
    #expect(harness.reply("HISTORY") == "OK 1\n")
    #expect(harness.reply("HISTORY FROM 0").hasPrefix("ERR GONE 2 "))
  }
}
