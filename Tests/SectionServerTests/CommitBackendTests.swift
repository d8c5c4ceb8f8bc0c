import Testing

@testable import SectionCore
@testable import SectionServer

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

  func harness() throws -> (ServerHarness, AnsweredBackend) {
    let harness = try ServerHarness()
    let backend = AnsweredBackend()
    harness.server.backend = backend
    return (harness, backend)
  }

  /// Committed: the clients hear `OK` only then, and the state file has the group, as the copy
  /// of a list kept elsewhere.
  @Test func committedAnswersTheGroup() throws {
    let (harness, backend) = try harness()
    let client = try harness.connect()
    try client.send("OPEN a\nTOGGLE b\n")
    #expect(try harness.run(until: { backend.committing == [2] }))
    try harness.run(until: { false }, timeout: 0.05)
    client.receive()
    #expect(client.statuses.isEmpty, "\(client.received)")
    backend.answer(.committed(revision: 2), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(2) }))
    #expect(client.statuses == ["OK 1", "OK 2"])
    #expect(try harness.savedOpen() == ["a", "b"])
  }

  /// Refused: every request of the group is answered with the refusal, and nothing of it stays.
  @Test func refusedAnswersEachRequestWithTheRefusal() throws {
    let (harness, backend) = try harness()
    let client = try harness.connect()
    try client.send("OPEN a\nTOGGLE b\n")
    #expect(try harness.run(until: { backend.committing == [2] }))
    backend.answer(.refused(ProtocolError(.unavailable, "no quorum")), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(2) }))
    #expect(client.statuses == ["ERR UNAVAILABLE no quorum", "ERR UNAVAILABLE no quorum"])
    #expect(harness.service.model.openIndices.isEmpty)
    #expect(try harness.savedOpen().isEmpty)
  }

  /// A lost compare: another host committed first. The TOGGLE runs again on the newer state,
  /// once, and toggles what is there then; its client hears only that run's `OK`.
  @Test func aRetryRunsTheToggleAgainOnTheNewerState() throws {
    let (harness, backend) = try harness()
    let client = try harness.connect()
    try client.send("TOGGLE a\n")
    #expect(try harness.run(until: { backend.committing == [1] }))
    backend.answer(.retry, to: harness.server)
    try harness.run(until: { false }, timeout: 0.05)
    // The other host's group toggled a open at revision 1: the TOGGLE now closes it.
    try backend.caughtUp(applying: "OPEN a", on: harness.server)
    #expect(try harness.run(until: { backend.committing == [1, 2] }))
    backend.answer(.committed(revision: 2), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(1) }))
    try harness.run(until: { false }, timeout: 0.05)
    client.receive()
    #expect(client.statuses == ["OK 2"])
    #expect(harness.service.model.revision == 2)
    #expect(try harness.savedOpen().isEmpty)
  }

  /// A BATCH begun behind a held group, not ended when the group is retried: the group's
  /// request runs again first, and the batch, ended later, runs once, whole.
  @Test func aBatchBegunBehindARetriedGroupRunsOnce() throws {
    let (harness, backend) = try harness()
    let client = try harness.connect()
    try client.send("TOGGLE a\nBATCH\nTOGGLE b\n")
    #expect(try harness.run(until: { backend.committing == [1] }))
    backend.answer(.retry, to: harness.server)
    try backend.caughtUp(applying: "OPEN c", on: harness.server)
    #expect(try harness.run(until: { backend.committing == [1, 2] }))
    backend.answer(.committed(revision: 2), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(1) }))
    try client.send("END\n")
    #expect(try harness.run(until: { backend.committing == [1, 2, 3] }))
    backend.answer(.committed(revision: 3), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(2) }))
    #expect(client.statuses == ["OK 2", "OK 3"])
    #expect(try harness.savedOpen() == ["a", "b", "c"])
    #expect(try harness.saved()?.revision == 3)
  }

  /// A group retried twice: what ran again and was held again is run again once more, not lost.
  @Test func aGroupRetriedTwiceStillRunsOnce() throws {
    let (harness, backend) = try harness()
    let client = try harness.connect()
    try client.send("OPEN a\nTOGGLE b\n")
    #expect(try harness.run(until: { backend.committing == [2] }))
    backend.answer(.retry, to: harness.server)
    try backend.caughtUp(applying: "OPEN c", on: harness.server)
    #expect(try harness.run(until: { backend.committing == [2, 3] }))
    backend.answer(.retry, to: harness.server)
    try backend.caughtUp(applying: "CLOSE c", on: harness.server)
    #expect(try harness.run(until: { backend.committing == [2, 3, 4] }))
    backend.answer(.committed(revision: 4), to: harness.server)
    #expect(try harness.run(until: { client.hasReplies(2) }))
    #expect(client.statuses == ["OK 3", "OK 4"])
    #expect(try harness.savedOpen() == ["a", "b"])
  }
}
