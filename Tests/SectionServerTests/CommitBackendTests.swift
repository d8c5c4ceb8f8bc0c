import Posix
import Testing

@testable import SectionCore
@testable import SectionServer
@testable import ServerHarnessSupport

/// The seam between the group commit and where a group is committed (`CommitBackend`): each
/// outcome of a commit, as the server's clients see it, with a backend the test answers, as
/// etcd's answers come later than the turn that sent the group.
@Suite struct CommitBackendTests {
  /// A backend whose every group waits until the test gives its outcome; meanwhile changes are
  /// sealed, as a shared list's are while a commit is under way.
  final class AnsweredBackend: CommitBackend {
    let gate = ChangeGate()
    /// The revision of each group handed in, in order.
    var committing: [UInt64] = []
    var waiting = false
    var isBusy: Bool { waiting || gate.sealed }
    var isCommitting: Bool { waiting }
    var retries: Bool { true }
    var statusFields: [(String, String)] { [] }
    func start() -> Bool { true }
    func stop() {}

    func commit(_ group: SavedGroup, of service: SectionService) -> CommitOutcome? {
      committing.append(group.revision)
      waiting = true
      gate.sealed = true
      return nil
    }

    /// The outcome of the group waiting; after a retry the backend stays sealed, as while it
    /// catches up, until `caughtUp`.
    func answer(_ outcome: CommitOutcome, to server: Server) {
      waiting = false
      if outcome != .retry { gate.sealed = false }
      server.finish(outcome)
      // As an answer from etcd is a source of the loop: the turn ends after it.
      server.resume?.trigger()
    }

    /// A group another host committed arrives, then changes may be made again.
    func caughtUp(applying line: String, on server: Server) throws {
      let other = SectionService(model: server.service.model, history: History(capacity: 0))
      var session = Session(access: .control, author: Author(via: .socket, uid: nil, pid: nil))
      var batch: Batch?
      var reply = OutputQueue()
      _ = other.handle(Array(line.utf8)[...], session: &session, batch: &batch, reply: &reply)
      try server.applyFromElsewhere(other.unsavedGroup.changes, authors: [:], through: Array("h2".utf8))
      gate.sealed = false
      server.resumeChanges()
      server.resume?.trigger()
    }
  }

  /// The group waiting comes back as a retry, another host's group (`line` run on this state)
  /// arrives, and the group's requests, run again on it, are committed again up to `revision`.
  static func retry(
    _ harness: ServerHarness, _ backend: AnsweredBackend, after line: String, reranTo revision: UInt64
  ) throws {
    backend.answer(.retry, to: harness.server)
    try harness.run(until: { false }, timeout: 0.05)
    try backend.caughtUp(applying: line, on: harness.server)
    #expect(try harness.run(until: { backend.committing.last == revision }))
  }

  func harness() throws -> (ServerHarness, AnsweredBackend) {
    let harness = try ServerHarness()
    let backend = AnsweredBackend()
    harness.server.backend = backend
    return (harness, backend)
  }

  /// A client whose `requests` make one group, handed to the backend as `revision`.
  func held(_ requests: String, committing revision: UInt64) throws -> (
    ServerHarness, AnsweredBackend, TestClient
  ) {
    let (harness, backend) = try harness()
    let client = try harness.connect()
    try client.send(requests)
    #expect(try harness.run(until: { backend.committing.last == revision }))
    return (harness, backend, client)
  }

  /// The group up to `revision` is committed, and `client` has had `replies` replies.
  func commit(
    _ revision: UInt64, _ harness: ServerHarness, _ backend: AnsweredBackend, _ client: TestClient,
    replies: Int
  )
    throws
  {
    backend.answer(.committed(revision: revision), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(replies) }))
  }

  /// Committed: the clients hear `OK` only then, and the state file has the group, as the copy
  /// of a list kept elsewhere.
  @Test func committedAnswersTheGroup() throws {
    let (harness, backend, client) = try held("OPEN a\nTOGGLE b\n", committing: 2)
    try harness.run(until: { false }, timeout: 0.05)
    client.receive()
    #expect(client.statuses.isEmpty, "\(client.received)")
    try commit(2, harness, backend, client, replies: 2)
    #expect(client.statuses == ["OK 1", "OK 2"])
    #expect(try harness.savedOpen() == ["a", "b"])
  }

  /// A connection waiting for its group stays watched for input, rather than its watch being
  /// dropped and restored around every commit (two epoll_ctl a change); input that comes
  /// meanwhile drops the watch (the socket would wake every poll), and is read once the group
  /// is answered.
  @Test func aWaitingConnectionStaysWatchedUntilInputComes() throws {
    let (harness, backend, client) = try held("TOGGLE a\n", committing: 1)
    try harness.run(until: { false }, timeout: 0.05)
    let connection = try #require(harness.server.connections.values.first)
    #expect(connection.isWaitingForSave)
    #expect(connection.watchedEvents.contains(.readable))
    try client.send("PING\n")
    #expect(try harness.run(until: { !connection.watchedEvents.contains(.readable) }))
    client.receive()
    #expect(client.statuses.isEmpty, "\(client.received)")
    try commit(1, harness, backend, client, replies: 2)
    #expect(client.statuses == ["OK 1", "OK"])
    #expect(connection.watchedEvents.contains(.readable))
  }

  /// Refused: every request of the group is answered with the refusal, and nothing of it stays.
  @Test func refusedAnswersEachRequestWithTheRefusal() throws {
    let (harness, backend, client) = try held("OPEN a\nTOGGLE b\n", committing: 2)
    backend.answer(.refused(ProtocolError(.unavailable, "no quorum")), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(2) }))
    #expect(client.statuses == ["ERR UNAVAILABLE no quorum", "ERR UNAVAILABLE no quorum"])
    #expect(harness.service.model.openIndices.isEmpty)
    #expect(try harness.savedOpen().isEmpty)
  }

  /// A lost compare: another host committed first. The TOGGLE runs again on the newer state,
  /// once, and toggles what is there then; its client hears only that run's `OK`.
  @Test func aRetryRunsTheToggleAgainOnTheNewerState() throws {
    let (harness, backend, client) = try held("TOGGLE a\n", committing: 1)
    // The other host's group toggled a open at revision 1: the TOGGLE now closes it.
    try Self.retry(harness, backend, after: "OPEN a", reranTo: 2)
    try commit(2, harness, backend, client, replies: 1)
    try harness.run(until: { false }, timeout: 0.05)
    client.receive()
    #expect(client.statuses == ["OK 2"])
    #expect(harness.service.model.revision == 2)
    #expect(try harness.savedOpen().isEmpty)
  }

  /// A BATCH begun behind a held group, not ended when the group is retried: the group's
  /// request runs again first, and the batch, ended later, runs once, whole.
  @Test func aBatchBegunBehindARetriedGroupRunsOnce() throws {
    let (harness, backend, client) = try held("TOGGLE a\nBATCH\nTOGGLE b\n", committing: 1)
    try Self.retry(harness, backend, after: "OPEN c", reranTo: 2)
    try commit(2, harness, backend, client, replies: 1)
    try client.send("END\n")
    #expect(try harness.run(until: { backend.committing == [1, 2, 3] }))
    try commit(3, harness, backend, client, replies: 2)
    #expect(client.statuses == ["OK 2", "OK 3"])
    #expect(try harness.savedOpen() == ["a", "b", "c"])
    #expect(try harness.saved()?.revision == 3)
  }

  /// A group retried twice: what ran again and was held again is run again once more, not lost.
  @Test func aGroupRetriedTwiceStillRunsOnce() throws {
    let (harness, backend, client) = try held("OPEN a\nTOGGLE b\n", committing: 2)
    try Self.retry(harness, backend, after: "OPEN c", reranTo: 3)
    try Self.retry(harness, backend, after: "CLOSE c", reranTo: 4)
    try commit(4, harness, backend, client, replies: 2)
    #expect(client.statuses == ["OK 3", "OK 4"])
    #expect(try harness.savedOpen() == ["a", "b"])
  }
}
