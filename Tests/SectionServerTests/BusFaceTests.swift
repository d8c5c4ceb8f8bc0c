import Glibc
import Posix
import Testing

@testable import SectionCore
@testable import SectionServer
@testable import ServerHarnessSupport
@testable import Systemd

/// The D-Bus face and the sockets as two fronts of one group commit, on a dbus-daemon of the
/// test's own (bench/dbus-private.conf.in) with a real caller (Python on Gio, as a desktop
/// program calls): the server runs in this process, driven a loop iteration at a time. One
/// test at a time: each points the process's session bus at its own.
@Suite(.serialized) struct BusFaceTests {
  /// A Toggle on the bus and a TOGGLE on a socket that arrive in one loop turn are saved
  /// once, together: one journal group holds both changes, and each
  /// answer (the bus's return, the socket's `OK`) names its own revision of that group. The
  /// caller's first call makes the daemon ask the bus who it is; the second, the one in the
  /// shared turn, is decided at once.
  @Test(
    .enabled(
      if: ServerHarness.busToolsPresent,
      "needs dbus-daemon and /usr/bin/python3 with python3-gi (scripts/deps.sh --test)"))
  func aBusCallAndASocketRequestInOneTurnShareOneSave() throws {
    let harness = try ServerHarness()
    try harness.withCaller { caller in try sharedTurn(harness, caller) }
  }

  /// A bus call's change in a retried group: the call's request runs again on the newer state,
  /// and the caller's one return names that run's result.
  @Test(
    .enabled(
      if: ServerHarness.busToolsPresent,
      "needs dbus-daemon and /usr/bin/python3 with python3-gi (scripts/deps.sh --test)"))
  func aRetriedBusCallRunsAgainOnTheNewerState() throws {
    let harness = try ServerHarness()
    let backend = CommitBackendTests.AnsweredBackend()
    harness.server.backend = backend
    try harness.withCaller { caller in
      // The caller's first call toggles c.
      #expect(try harness.run(until: { backend.committing == [1] }))
      try CommitBackendTests.retry(harness, backend, after: "OPEN c", reranTo: 2)
      backend.answer(.committed(revision: 2), to: harness.server)
      #expect(try harness.run(until: { try caller.answers().count == 1 }))
      #expect(try caller.answers() == ["False 2"])
      #expect(try harness.savedOpen().isEmpty)
    }
  }

  private func sharedTurn(_ harness: ServerHarness, _ caller: Caller) throws {
    // The first call: the caller's credentials are asked for and kept; its change is saved.
    #expect(try harness.run(until: { try caller.answers().count == 1 }))
    #expect(try caller.answers() == ["True 1"])
    #expect(try harness.journalCommits() == ["1"])
    // The loop idle, the caller's second call arrives while a socket client's request
    // waits: the next iteration finds both.
    try harness.run(until: { false }, timeout: 0.2)
    let client = try harness.connect()
    try caller.go()
    let busFD = try #require(harness.server.bus?.bus.descriptor)
    var ready = pollfd(fd: busFD, events: Int16(POLLIN), revents: 0)
    #expect(poll(&ready, 1, 20_000) == 1, "the caller's second call never reached the daemon")
    try client.send("TOGGLE a\n")
    #expect(try harness.run(until: { try caller.answers().count == 2 && client.hasReplies(1) }))

    // One save for both, whichever was handled first.
    #expect(try harness.journalCommits() == ["1", "3"])
    let socketRevision = client.statuses.first.flatMap { UInt64($0.split(separator: " ").last ?? "") }
    let answers = try caller.answers()
    let busRevision = answers.last.flatMap { UInt64($0.split(separator: " ").last ?? "") }
    #expect(Set([socketRevision, busRevision]) == [2, 3], "\(client.statuses) \(answers)")
    #expect(try harness.savedOpen() == ["a", "b", "c"])
  }
}
