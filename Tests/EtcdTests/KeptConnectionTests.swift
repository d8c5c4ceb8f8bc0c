import Glibc
import Testing

@testable import Etcd
@testable import EtcdLabSupport

/// A loop and a client of `member` that has put once: its connection is made and kept.
private func clientAfterOnePut(to member: RecordingMember) throws -> (LoopRunner, EtcdClient) {
  let runner = try LoopRunner()
  let client = try EtcdClient(loop: runner.loop, configuration: .init(members: [member.url]))
  #expect(try runner.wait { client.put(key: bytes("k"), value: bytes("1"), completion: $0) }.value != nil)
  return (runner, client)
}

extension EtcdClientTests {
  /// A connection curl keeps between requests stays registered in the loop while it waits
  /// (`CurlMulti.sockets`): the next request on it adds nothing to epoll, and its source is
  /// the one the first request made. No etcd needed.
  @Test func aKeptConnectionStaysInTheLoopBetweenRequests() throws {
    let member = try RecordingMember()
    let (runner, client) = try clientAfterOnePut(to: member)
    let (fd, first) = try #require(client.multi.sockets.first, "the kept connection's socket is registered")
    #expect(first.parked && first.on)
    #expect(try runner.wait { client.put(key: bytes("k"), value: bytes("2"), completion: $0) }.value != nil)
    #expect(member.requests.count == 2)
    #expect(client.multi.sockets.count == 1)
    let second = try #require(client.multi.sockets[fd], "the same connection served the second request")
    #expect(second.source === first.source)
    #expect(second.parked)
  }

  /// A member that closes a kept connection between two requests: its socket leaves epoll at
  /// once (a closed socket is readable for ever, which would spin the loop), and the next
  /// request is answered on a new connection with a registration of its own, even when its
  /// socket has the old one's number. No etcd needed.
  @Test func aKeptConnectionTheMemberClosesIsLeftAndReplaced() throws {
    let member = try RecordingMember(closingAfterEachAnswer: true)
    let (runner, client) = try clientAfterOnePut(to: member)
    let (fd, first) = try #require(client.multi.sockets.first)
    #expect(try runner.run(until: { client.multi.sockets[fd]?.on == false }, timeout: 5))
    #expect(try runner.wait { client.put(key: bytes("k"), value: bytes("2"), completion: $0) }.value != nil)
    #expect(member.requests.count == 2)
    #expect(client.multi.sockets.count == 1)
    let replacement = try #require(client.multi.sockets.first?.value)
    #expect(replacement.source !== first.source)
    #expect(replacement.parked && replacement.on)
    // And a third request after the second connection closed too.
    #expect(try runner.wait { client.put(key: bytes("k"), value: bytes("3"), completion: $0) }.value != nil)
    #expect(member.requests.count == 3)
  }
}

extension EtcdClientTests {
  /// A request started from inside a loop handler (as the fleet starts its txn from the end
  /// of the server's iteration) leaves on the kept connection when that handler returns,
  /// without another turn of the loop: the member has it while the loop does not run. No etcd
  /// needed.
  @Test func aRequestStartedInAHandlerLeavesWhenItReturns() throws {
    let member = try RecordingMember()
    let (runner, client) = try clientAfterOnePut(to: member)
    var answered = false
    var started = false
    let start = try runner.loop.deferred {
      started = true
      client.put(key: bytes("k"), value: bytes("2")) { _ in answered = true }
    }
    start.trigger()
    #expect(try runner.run(until: { started }, timeout: 5))
    // The loop stands still now: only a request already sent reaches the member.
    let deadline = monotonicSeconds() + 5
    while member.requests.count < 2 && monotonicSeconds() < deadline { usleep(2000) }
    #expect(member.requests.count == 2, "the request waited for a turn of the loop")
    #expect(try runner.run(until: { answered }, timeout: 5))
    start.cancel()
  }
}
