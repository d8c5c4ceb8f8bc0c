import Foundation
import Glibc
import SectionClient
import Synchronization
import Testing

/// AsyncClient's bounds on a wait: a timeout (the client's, or the call's) and the task's
/// cancellation end it, against a silent peer and a stopped daemon, and the reply given up on
/// never reaches a later request.
@Suite struct LibraryTimeoutTests {
  @Test func aSilentPeerTimesOutWithinTheMargin() async throws {
    let peer = try ScriptedPeer()
    peer.script = { _, _ in .wait }
    let client = try AsyncClient(path: peer.path, timeout: 0.3)
    let ended = try await ending(within: 30) { try await client.ping() }
    #expect(ended.error == .timedOut(path: peer.path, seconds: 0.3))
    // The margins are for a loaded 2-core machine: unloaded, it ends within a few milliseconds.
    #expect(ended.seconds >= 0.29 && ended.seconds < 2.3, "\(ended.seconds) s")
    // A call's own timeout overrides the client's.
    let own = try await ending(within: 30) { try await client.perform(.ping, timeout: 0.1) }
    #expect(own.error == .timedOut(path: peer.path, seconds: 0.1))
    #expect(own.seconds >= 0.09 && own.seconds < 2.1, "\(own.seconds) s")
  }

  @Test func aCallsTimeoutBoundsAClientWithout() async throws {
    let peer = try ScriptedPeer()
    peer.script = { _, _ in .wait }
    let client = try AsyncClient(path: peer.path)
    let ended = try await ending(within: 30) { _ = try await client.send(["PING"], timeout: 0.2) }
    #expect(ended.error == .timedOut(path: peer.path, seconds: 0.2))
    await #expect(
      throws: ClientError.invalidArgument(
        argument: "timeout", value: "-1.0", rule: "a timeout is 0 (no limit) or more seconds")
    ) {
      try await client.perform(.ping, timeout: -1)
    }
  }

  /// The reply to a request given up on comes late: the connection it would come on is closed,
  /// so the next request, on a new one, gets its own reply.
  @Test func aLateReplyNeverReachesTheNextRequest() async throws {
    let peer = try ScriptedPeer()
    let late = Atomic<Bool>(false)
    peer.script = { connection, lines in
      if connection == 0 {
        while !late.load(ordering: .acquiring) { usleep(10_000) }
        return .answer("OK 99\n")
      }
      return lines.last == "VERSION" ? .answer("version 9.9 1\nOK\n") : .answer("OK\n")
    }
    let client = try AsyncClient(path: peer.path, timeout: 0.2)
    await #expect(throws: ClientError.timedOut(path: peer.path, seconds: 0.2)) { try await client.ping() }
    late.store(true, ordering: .releasing)
    try await Task.sleep(nanoseconds: 100_000_000)
    #expect(try await client.version().daemon == "9.9")
    #expect(peer.connections == 2)
  }

  @Test func aCancelledPingReturnsPromptly() async throws {
    let peer = try ScriptedPeer()
    peer.script = { _, _ in .wait }
    let client = try AsyncClient(path: peer.path)
    let ended = try await ending(within: 30, cancelAfter: 0.2) { try await client.ping() }
    #expect(ended.error == .cancelled(path: peer.path))
    #expect(ended.seconds < 2, "\(ended.seconds) s")
    // The others in flight on that connection fail with it; the next request connects again.
    peer.script = { _, _ in .answer("OK\n") }
    try await client.ping()
    #expect(peer.connections == 2)
  }

  @Test func aTaskCancelledBeforeItAsksSendsNothing() async throws {
    let peer = try ScriptedPeer()
    peer.script = { _, _ in .answer("OK\n") }
    let client = try AsyncClient(path: peer.path)
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      do throws(ClientError) {
        try await client.ping()
        return nil as ClientError?
      } catch {
        return error
      }
    }
    #expect(await task.value == .cancelled(path: peer.path))
    #expect(peer.received.joined().filter { $0 == "PING" }.isEmpty)
  }

  /// A daemon stopped with SIGSTOP holds its socket open and answers nothing: the timeout, or
  /// cancelling the task, ends the wait; once it runs again, so do requests.
  @Test func aStoppedDaemon() async throws {
    let daemon = try TestDaemon()
    let pid = daemon.process!.processIdentifier
    let timed = try AsyncClient(path: daemon.socketPath, timeout: 0.5)
    let plain = try AsyncClient(path: daemon.socketPath)
    try await timed.ping()
    try await plain.ping()
    kill(pid, SIGSTOP)
    defer { kill(pid, SIGCONT) }
    let timedOut = try await ending(within: 30) { try await timed.ping() }
    #expect(timedOut.error == .timedOut(path: daemon.socketPath, seconds: 0.5))
    #expect(timedOut.seconds >= 0.49 && timedOut.seconds < 2.5, "\(timedOut.seconds) s")
    let cancelled = try await ending(within: 30, cancelAfter: 0.2) { try await plain.toggle("first") }
    #expect(cancelled.error == .cancelled(path: daemon.socketPath))
    #expect(cancelled.seconds < 2, "\(cancelled.seconds) s")
    kill(pid, SIGCONT)
    try await timed.ping()
    try await plain.ping()
  }
}

/// How `body` ended, run in a task of its own (cancelled after `cancelAfter` seconds, if
/// given): its error, and the seconds from its start (or its cancellation) to its end. The
/// task, and the watch that cancels it, prefer the library's thread, and the times are taken
/// there: with the whole suite running, the tests that block the default pool's two threads
/// held a task's start and resumption back by seconds (measured: 8 s; under ASan, more than
/// 30 s, which made a watch on the default pool miss its moment to cancel), which is not what
/// is measured here. Fails the test, saying how far it got, if it had not ended after
/// `seconds` (the task is then left behind, as a wait that never ends would leave it).
private func ending(
  within seconds: Double, cancelAfter: Double? = nil,
  _ body: @escaping @Sendable () async throws -> Void
) async throws -> (error: ClientError?, seconds: Double) {
  let call = Call()
  let start = Date()
  let task = Task(executorPreference: AsyncClient.executor) {
    call.started.withLock { $0 = Date() }
    do {
      try await body()
      call.result.withLock { $0 = (nil, Date()) }
    } catch {
      // Anything but a ClientError reads as `.malformedReply`, which no test expects.
      let error = error as? ClientError ?? .malformedReply("\(error)")
      call.result.withLock { $0 = (error, Date()) }
    }
  }
  let watch = Task(executorPreference: AsyncClient.executor) { () throws -> (ClientError?, Double) in
    var cancelled: Date?
    func ended() -> (ClientError?, Double)? {
      guard let ended = call.result.withLock({ $0 }), let began = call.started.withLock({ $0 }) else {
        return nil
      }
      return (ended.error, ended.end.timeIntervalSince(cancelled ?? began))
    }
    while Date().timeIntervalSince(start) < seconds {
      if let ended = ended() { return ended }
      if let cancelAfter, cancelled == nil, let began = call.started.withLock({ $0 }),
        Date().timeIntervalSince(began) >= cancelAfter
      {
        cancelled = Date()
        task.cancel()
      }
      try? await Task.sleep(nanoseconds: 10_000_000)
    }
    if let ended = ended() { return ended }
    let began =
      call.started.withLock { $0 }.map { "began at \($0.timeIntervalSince(start)) s" } ?? "never began"
    let cancel = cancelled.map { ", cancelled at \($0.timeIntervalSince(start)) s" } ?? ""
    throw TestFailure("the call had not ended after \(seconds) s (\(began)\(cancel))")
  }
  return try await watch.value
}

/// What `ending` learns of its call, from the call's task and read by the watch's.
private final class Call: Sendable {
  let started = Mutex<Date?>(nil)
  let result = Mutex<(error: ClientError?, end: Date)?>(nil)
}
