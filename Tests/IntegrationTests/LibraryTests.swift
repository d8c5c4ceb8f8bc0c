import Foundation
import Glibc
import Posix
import SectionClient
import SectionCore
import Testing

/// SectionClient driven directly against the real daemon on a real socket, and against a
/// scripted peer where the daemon cannot be made to misbehave on cue.
@Suite struct LibraryTests {
  @Test func everyRequest() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath, name: "library-test")
    try await client.ping()
    #expect(try await client.version().protocolVersion == "1")
    #expect(try await client.list().map(\.id) == ["first", "second", "third"])
    #expect(try await client.items("second").count == 8)
    #expect(try await client.toggle("first") == true)
    #expect(try await client.toggle("0") == false)
    #expect(try await client.open("second") == 3)
    #expect(try await client.close("second") == 4)
    #expect(try await client.perform(.openAll) == 7)  // a revision for each section opened
    #expect(try await client.view().items.count == 10 + 8 + 6)
    #expect(try await client.perform(.closeAll) == 10)
    #expect(try await client.mode() == .multi)
    #expect(try await client.setMode(.exclusive) == 11)
    #expect(try await client.status()["pid"] == "\(daemon.process!.processIdentifier)")
    try await client.perform(.insert(id: "logs", title: "Log files", at: 0))
    try await client.perform(.rename("logs", to: "All logs"))
    try await client.perform(.move("logs", to: 3))
    try await client.perform(.insertItem("one", in: "logs"))
    try await client.perform(.insertItem("two", in: "logs", at: 0))
    try await client.perform(.moveItem(from: 0, to: 1, in: "logs"))
    try await client.perform(.setItem(at: 0, to: "uno", in: "logs"))
    #expect(try await client.items("logs").map(\.text) == ["uno", "two"])
    try await client.perform(.deleteItem(at: 1, in: "logs"))
    let list = try await client.list()
    #expect(list.last?.title == "All logs")
    #expect(list.last?.itemCount == 1)
    try await client.perform(.delete("logs"))
    let reached = try await client.batch {
      $0.add(.insert(id: "a", title: "A"))
      $0.add(.open("a"))
    }
    let added = try await client.list().last
    #expect(added?.id == "a" && added?.isOpen == true)
    #expect(try await client.perform(.reload()) >= reached)
    // Who made each change: this connection, by the name it gave.
    let history = try await client.history(last: 2)
    #expect(history.count == 2)
    #expect(history.allSatisfy { $0.name == "library-test" && $0.via == "socket" })
    #expect(history.last?.revision == reached)
    #expect(try await client.history(after: reached - 1).map(\.revision) == [reached])
  }

  @Test func errorsAreTyped() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    await #expect(
      throws: ClientError.daemon(code: "NOSECTION", message: #"no section "nope": there are 3 (0-2)"#)
    ) {
      try await client.open("nope")
    }
    // All or nothing: the batch's second change fails, so the first is not made either.
    await #expect(throws: ClientError.self) {
      try await client.batch {
        $0.add(.open("first"))
        $0.add(.open("nope"))
      }
    }
    #expect(try await client.list().allSatisfy { !$0.isOpen })
    await #expect(throws: ClientError.self) { try await client.perform(.rename("first", to: "x\nOPEN ALL")) }
    #expect(try await client.list()[0].title == "First")
    let readonly = try AsyncClient(path: SocketNames.readonlyPath(forControl: daemon.socketPath))
    #expect(await errorCode { () throws(ClientError) in try await readonly.toggle("first") } == "READONLY")
    #expect(throws: ClientError.cannotConnect(path: daemon.directory.file("none.sock"), errno: .noEntry)) {
      try AsyncClient(path: daemon.directory.file("none.sock"))
    }
  }

  /// Many tasks on one connection: every request goes out at once, and each reply reaches the
  /// request it answers (a TOGGLE's reply says open at odd revisions, closed at even ones).
  /// Tasks of the default pool, and tasks on the library's own thread (`AsyncClient.executor`).
  @Test(arguments: [false, true]) func pipelinedRepliesAreMatchedInOrder(onTheLibrarysThread: Bool)
    async throws
  {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    let executor = onTheLibrarysThread ? AsyncClient.executor : nil
    let replies = try await withThrowingTaskGroup(of: (Reply, Bool).self) { group in
      for index in 0..<400 {
        group.addTask(executorPreference: executor) {
          if index % 2 == 0 { return (try await client.send(["TOGGLE 0"])[0], true) }
          return (try await client.send(["PING"])[0], false)
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    var revisions: [UInt64] = []
    for (reply, isToggle) in replies {
      guard isToggle else {
        #expect(reply == Reply(status: .ok(revision: nil)))
        continue
      }
      let revision = try #require(reply.revision)
      #expect(reply.sections.first?.isOpen == (revision % 2 == 1))
      revisions.append(revision)
    }
    #expect(revisions.sorted() == Array(1...200))
    // Requests sent as one call keep their order too.
    let three = try await client.send(["MODE", "LIST", "PING"])
    #expect(three[0].mode == .multi && three[1].sections.count == 3 && three[2].data.isEmpty)
  }

  /// A caller isolated to an actor is back on it when its reply comes: the library waits for
  /// a reply without hopping to the caller's executor first, so this checks that it
  /// hops back after.
  @Test func repliesComeBackToTheCallersActor() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    actor Caller {
      var opened = 0
      func toggle(_ client: AsyncClient, times: Int) async throws -> Int {
        for _ in 0..<times {
          if try await client.toggle("0") { opened += 1 }
          preconditionIsolated("a reply came back off the caller's actor")
        }
        return opened
      }
    }
    let caller = Caller()
    let opened = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<4 { group.addTask { try await caller.toggle(client, times: 50) } }
      return try await group.reduce(0) { max($0, $1) }
    }
    #expect(opened == 100)
  }

  @Test func eventsFollowChangesAcrossRestartsAndSigkill() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    var events = client.events().makeAsyncIterator()
    guard case .state(let first)? = try await events.next() else { throw TestFailure("no snapshot first") }
    #expect(first.revision == 0)
    try await client.toggle("first")
    #expect(try await events.next() == .opened(revision: 1, index: 0, id: "first"))
    for signal in [SIGTERM, SIGKILL] {
      daemon.stop(signal: signal)
      try daemon.start()
      // The requests' connection comes back by itself too.
      try await client.toggle("second")
      // The daemon keeps its history across the restart: the sequence resumes (SUBSCRIBE FROM)
      // and goes on with the next change, no snapshot between.
      var next = try await events.next()
      while case .bye = next { next = try await events.next() }
      guard case .opened(_, 1, "second")? = next else {
        throw TestFailure("expected !opened second after the restart, got \(String(describing: next))")
      }
      try await client.close("second")
      let closed = try await events.next()
      guard case .closed(_, 1, "second")? = closed else {
        throw TestFailure("expected !closed, got \(String(describing: closed))")
      }
    }
  }

  @Test func statesStayCurrent() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    var states = client.states().makeAsyncIterator()
    let initial = try #require(try await states.next())
    #expect(initial.sections.count == 3 && initial.openIDs.isEmpty && initial.mode == .multi)
    try await client.open("third")
    #expect(try await states.next()?.openIDs == ["third"])
    try await client.perform(.insert(id: "new", title: "New"))
    let inserted = try #require(try await states.next())
    #expect(inserted.sections.map(\.id) == ["first", "second", "third", "new"])
    try await client.setMode(.exclusive)
    #expect(try await states.next()?.mode == .exclusive)
  }

  /// A sequence's connection and thread end with its task: the daemon counts no subscriber.
  @Test func cancellingTheConsumerEndsItsSubscription() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    let consumer = Task {
      var count = 0
      for try await _ in client.events() { count += 1 }
      return count
    }
    try await waitFor { try await client.status()["subscribers"] == "1" }
    consumer.cancel()
    #expect(try await consumer.value >= 1)
    try await waitFor { try await client.status()["subscribers"] == "0" }
  }

  @Test func theBlockingClientSharesTheRequests() throws {
    let daemon = try TestDaemon()
    let client = try Client(path: daemon.socketPath, name: "blocking-test")
    #expect(try client.perform(.toggle("third")) == true)
    #expect(try client.perform(.list).sections[2].isOpen)
    #expect(throws: ClientError.daemon(code: "NOSECTION", message: #"no section "9": there are 3 (0-2)"#)) {
      try client.perform(.open("9"))
    }
  }

  /// The blocking client pipelines as the async one does: one round trip, each outcome in
  /// its place, a request that cannot be sent failing alone; `asReply` keeps an ERR as a reply.
  @Test func theBlockingClientPerformsEachInItsPlace() throws {
    let daemon = try TestDaemon()
    let client = try Client(path: daemon.socketPath)
    let toggles = try client.perform(each: [
      .toggle("first"), .toggle("nope"), .toggle("two words"), .toggle("first"),
    ])
    #expect(try toggles[0].get() == true)
    if case .failure(let error) = toggles[1] {
      #expect(error.code == "NOSECTION")
    } else {
      Issue.record("no ERR")
    }
    if case .failure(.invalidRequest) = toggles[2] {} else { Issue.record("sent: \(toggles[2])") }
    #expect(try toggles[3].get() == false)
    let replies = try client.perform(each: [
      SectionClient.Request<UInt64>.change(.open, "nope").asReply,
      SectionClient.Request<Listing>.list.asReply,
    ])
    guard case .error("NOSECTION", _) = try replies[0].get().status else {
      Issue.record("\(replies[0])")
      return
    }
    #expect(try replies[1].get().sections.count == 3)
    #expect(try client.perform(each: [SectionClient.Request<Bool>]()).isEmpty)
  }

  /// Resuming needs a daemon that keeps changes (`SUBSCRIBE FROM`); a scripted peer plays one,
  /// so what the library sends and does is checked whatever daemon this tree builds.
  @Test func resumesWithoutASnapshotWhereTheDaemonKeepsTheChanges() async throws {
    let peer = try ScriptedPeer()
    peer.script = { connection, lines in
      switch (connection, lines.last) {
      case (0, "SUBSCRIBE"): .answerAndClose("state 5 multi -\nOK 5\n!opened 6 0 a\n")
      case (_, "SUBSCRIBE FROM 6"): .answer("OK 6\n!closed 7 0 a\n")
      default: .wait
      }
    }
    var events = SectionEvents(path: peer.path, name: "resume-test").makeAsyncIterator()
    #expect(try await events.next() == .state(StateSnapshot(revision: 5, mode: .multi, openIDs: [])))
    #expect(try await events.next() == .opened(revision: 6, index: 0, id: "a"))
    #expect(try await events.next() == .closed(revision: 7, index: 0, id: "a"))
    #expect(peer.received.first == ["CLIENT NAME resume-test", "SUBSCRIBE"])
    #expect(peer.received.dropFirst().first == ["CLIENT NAME resume-test", "SUBSCRIBE FROM 6"])
  }

  /// A daemon without SUBSCRIBE FROM refuses it: the library subscribes plainly.
  @Test func fallsBackToSubscribeOnAnOlderDaemon() async throws {
    let peer = try ScriptedPeer()
    peer.script = { connection, lines in
      switch (connection, lines.last) {
      case (0, "SUBSCRIBE"): .answer("state 5 multi -\nOK 5\n")
      case (_, "SUBSCRIBE FROM 5"): .answer("ERR SYNTAX unexpected \"FROM\": SUBSCRIBE takes no arguments\n")
      case (_, "SUBSCRIBE"): .answer("state 9 exclusive a\nOK 9\n")
      default: .wait
      }
    }
    var events = SectionEvents(path: peer.path).makeAsyncIterator()
    #expect(try await events.next()?.revision == 5)
    peer.dropConnections()
    #expect(try await events.next() == .state(StateSnapshot(revision: 9, mode: .exclusive, openIDs: ["a"])))
  }

  /// One task's requests sent together: each outcome in its place, a request refused before
  /// sending failing alone, a BATCH's lines answered as one.
  @Test func performEachKeepsEveryOutcomeInItsPlace() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    let toggles = await client.perform(each: [
      .toggle("first"), .toggle("nope"), .toggle("two words"), .toggle("first"),
    ])
    #expect(try toggles[0].get() == true)
    #expect(throws: ClientError.self) { try toggles[1].get() }
    if case .failure(let error) = toggles[1] { #expect(error.code == "NOSECTION") }
    if case .failure(let error) = toggles[2] {
      #expect(error.code != "NOSECTION")
    } else {
      Issue.record("sent")
    }
    #expect(try toggles[3].get() == false)
    let changes = await client.perform(each: [.batch([.open("second"), .open("third")]), .close("second")])
    let batched = try changes[0].get()
    #expect(try changes[1].get() == batched + 1)
    #expect(try await client.list().filter(\.isOpen).map(\.id) == ["third"])
    let none: [SectionClient.Request<Bool>] = []
    #expect(await client.perform(each: none).isEmpty)
  }

  /// Requests by the megabyte, made faster than the daemon reads them, with replies as long
  /// (sectiond stops reading a client until its replies are read): the library writes what the
  /// socket takes, and the rest when it has room, reading all the while. Every request is
  /// answered, from tasks on the library's thread and elsewhere.
  @Test func requestsBeyondWhatTheSocketHoldsAreAllAnswered() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    let long = String(repeating: "x", count: 3000)
    for executor in [AsyncClient.executor, nil] as [(any TaskExecutor)?] {
      let codes = await withTaskGroup(of: String?.self) { group in
        for index in 0..<2000 {
          group.addTask(executorPreference: executor) {
            await errorCode { () async throws(ClientError) in try await client.toggle("\(long)\(index)") }
          }
        }
        return await group.reduce(into: [String?: Int]()) { $0[$1, default: 0] += 1 }
      }
      #expect(codes == ["NOSECTION": 2000])
    }
  }

  /// SIGKILL while thousands of requests are in flight: each one ends, answered or failed with
  /// connectionLost, none waits for ever; and the client works again once a daemon is back.
  @Test func sigkillWithRequestsInFlight() async throws {
    let daemon = try TestDaemon()
    let client = try AsyncClient(path: daemon.socketPath)
    let outcomes = await withTaskGroup(of: String.self) { group in
      for index in 0..<2000 {
        group.addTask {
          do {
            try await client.toggle("\(index % 3)")
            return "answered"
          } catch {
            return (error as? ClientError)?.code ?? "\(error)"
          }
        }
        if index == 1000 { kill(daemon.process!.processIdentifier, SIGKILL) }
      }
      return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
    }
    #expect(Set(outcomes.keys).isSubset(of: ["answered", "UNAVAILABLE"]), "\(outcomes)")
    #expect(outcomes["UNAVAILABLE", default: 0] > 0, "\(outcomes)")
    daemon.stop(signal: SIGKILL)
    try daemon.start()
    #expect(try await client.list().count == 3)
  }

  @Test func aDaemonThatGoesAwayMidRequestFailsItsRequests() async throws {
    let peer = try ScriptedPeer()
    peer.script = { _, lines in lines.last == "PING" ? .answer("OK\n") : .close }
    let client = try AsyncClient(path: peer.path)
    try await client.ping()
    await #expect(throws: ClientError.connectionLost(path: peer.path)) { try await client.list() }
    // The next request connects again.
    try await client.ping()
    #expect(peer.connections == 2)
  }
}

/// The protocol's ERR code `body` failed with; nil when it succeeded.
private func errorCode(_ body: () async throws(ClientError) -> Void) async -> String? {
  do {
    try await body()
    return nil
  } catch {
    return error.code
  }
}

/// Polls `condition` every 20 ms until it holds, for at most 5 s.
private func waitFor(_ condition: () async throws -> Bool) async throws {
  for _ in 0..<250 {
    if try await condition() { return }
    try await Task.sleep(nanoseconds: 20_000_000)
  }
  throw TestFailure("condition not met within 5 s")
}
