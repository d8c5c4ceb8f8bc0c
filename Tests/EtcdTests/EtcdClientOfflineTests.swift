import Glibc
import Testing

@testable import Etcd
@testable import EtcdLabSupport

/// A TCP socket listening on 127.0.0.1 at a port the kernel picks, and its URL.
func listenOnLoopback() throws -> (fd: Int32, url: String) {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
    }
  }
  guard bound else {
    close(fd)
    throw EtcdLabFailure("cannot listen on 127.0.0.1: errno \(errno)")
  }
  return (fd, "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")
}

/// A TCP listener on 127.0.0.1 that accepts connections (the kernel does) and never answers:
/// a frozen member. No etcd needed.
final class SilentMember {
  let fd: Int32
  let url: String

  init() throws { (fd, url) = try listenOnLoopback() }

  deinit { close(fd) }
}

extension EtcdClientTests {
  /// No member listening: the call fails at once as unavailable, naming the call and every
  /// member, with its outcome known (nothing was sent). No etcd needed.
  @Test func noMemberReachable() throws {
    let runner = try LoopRunner()
    let dead = ["http://127.0.0.1:1", "http://127.0.0.1:9"]
    let client = try EtcdClient(loop: runner.loop, configuration: .init(members: dead))
    let result = try runner.wait { client.put(key: bytes("k"), value: [], completion: $0) }
    let error = try #require(result.error)
    #expect(error.kind == .unavailable)
    #expect(!error.outcomeUnknown)
    #expect(error.call == "put")
    #expect(error.description.contains(dead[0]) && error.description.contains(dead[1]), "\(error)")
    var updates: [WatchUpdate] = []
    _ = client.watch(WatchRequest(key: bytes("k"))) { updates.append($0) }
    #expect(try runner.run(until: { !updates.isEmpty }))
    guard case .failed(let failure) = updates.first else {
      Issue.record("a watch with no member saw \(updates)")
      return
    }
    #expect(failure.kind == .unavailable)

    // A member URL of another scheme is not followed: curl would read a file:// URL.
    let file = try EtcdClient(loop: runner.loop, configuration: .init(members: ["file:///etc/hostname"]))
    let read = try #require(try runner.wait { file.put(key: bytes("k"), value: [], completion: $0) }.error)
    #expect(read.kind == .unavailable, "\(read)")
    #expect(!read.outcomeUnknown)
  }

  /// A member that takes the connection and never answers: a change (a txn that writes) times
  /// out with its outcome unknown, a read (a txn that only reads) times out with it known; a client dropped with calls under way runs none
  /// of their completions, and a watch of it can still be cancelled.
  @Test func silentMemberTimesOut() throws {
    let silent = try SilentMember()
    let runner = try LoopRunner()
    var client: EtcdClient? = try EtcdClient(
      loop: runner.loop, configuration: .init(members: [silent.url], requestTimeout: 300))
    let start = monotonicSeconds()
    let put = try #require(try runner.wait { client!.put(key: bytes("k"), value: [], completion: $0) }.error)
    #expect(put.kind == .timedOut)
    #expect(put.outcomeUnknown)
    #expect(monotonicSeconds() - start < 5)
    let range = try #require(
      try runner.wait { client!.range(RangeRequest(key: bytes("k")), completion: $0) }.error)
    #expect(range.kind == .timedOut)
    #expect(!range.outcomeUnknown)
    // A txn is a change only when a branch of it writes: one that only reads (a fleet's
    // catch-up) times out as a read does.
    let reading = try #require(
      try runner.wait {
        client!.txn(Txn(compare: [], success: [.range(RangeRequest(key: bytes("k")))]), completion: $0)
      }.error)
    #expect(reading.kind == .timedOut)
    #expect(!reading.outcomeUnknown, "\(reading)")
    let writing = try #require(
      try runner.wait {
        client!.txn(Txn(compare: [], success: [.put(key: bytes("k"), value: [])]), completion: $0)
      }.error)
    #expect(writing.outcomeUnknown, "\(writing)")

    var updates: [WatchUpdate] = []
    let watch = client!.watch(WatchRequest(key: bytes("k"))) { updates.append($0) }
    var completed = false
    client!.put(key: bytes("k"), value: []) { _ in completed = true }
    try runner.run(until: { false }, timeout: 0.2)
    client = nil
    try runner.run(until: { false }, timeout: 0.5)
    watch.cancel()
    #expect(!completed)
    #expect(updates.isEmpty)
  }
}
