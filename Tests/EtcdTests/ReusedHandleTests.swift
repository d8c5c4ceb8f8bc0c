import Foundation
import Glibc
import Testing

@testable import Etcd
@testable import EtcdLabSupport

/// An HTTP member on 127.0.0.1 that records every request (its request line, headers and body)
/// and answers a watch with a stream that stays open after its `created` line, anything else
/// with an empty header. A thread for each connection, as curl keeps one open per stream. No
/// etcd needed. `closingAfterEachAnswer` closes a connection after its first answer, without
/// saying so in the answer: a member that drops idle connections, or restarts between two
/// requests.
final class RecordingMember: @unchecked Sendable {
  let url: String
  private let fd: Int32
  private let closing: Bool
  private let lock = NSLock()
  private var recorded: [String] = []

  var requests: [String] { lock.withLock { recorded } }

  init(closingAfterEachAnswer: Bool = false) throws {
    let (fd, url) = try listenOnLoopback()
    self.fd = fd
    self.url = url
    closing = closingAfterEachAnswer
    Thread.detachNewThread { [weak self] in
      // Ends when the member goes and shuts its socket down.
      while case let client = accept(fd, nil, nil), client >= 0 {
        guard let self else {
          close(client)
          return
        }
        Thread.detachNewThread { self.serve(client) }
      }
    }
  }

  deinit {
    shutdown(fd, Int32(SHUT_RDWR))
    close(fd)
  }

  private func serve(_ client: Int32) {
    defer { close(client) }
    var input: [UInt8] = []
    while let request = Self.nextRequest(client, &input) {
      lock.withLock { recorded.append(request) }
      if request.hasPrefix("POST /v3/watch ") {
        let line = #"{"result":{"header":{"revision":"1"},"created":true}}"# + "\n"
        let chunk = String(line.utf8.count, radix: 16) + "\r\n" + line + "\r\n"
        send(
          client,
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk)
        // The stream stays open until the client ends it.
        var byte: UInt8 = 0
        while recv(client, &byte, 1, 0) > 0 {}
        return
      }
      let body = #"{"header":{"revision":"7"}}"#
      send(
        client,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
          + body)
      if closing { return }
    }
  }

  private func send(_ client: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// The next request on `client` (its head up to the blank line, then Content-Length bytes of
  /// body) as text; nil when the client closed.
  private static func nextRequest(_ client: Int32, _ input: inout [UInt8]) -> String? {
    let blank = Array("\r\n\r\n".utf8)
    func read() -> Bool {
      var buffer = [UInt8](repeating: 0, count: 4096)
      let count = recv(client, &buffer, buffer.count, 0)
      guard count > 0 else { return false }
      input += buffer[..<count]
      return true
    }
    var end: Int?
    while end == nil {
      end = input.indices.dropLast(3).first { input[$0..<($0 + 4)].elementsEqual(blank) }.map { $0 + 4 }
      if end == nil && !read() { return nil }
    }
    let head = String(decoding: input[..<end!], as: UTF8.self)
    let length =
      head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
      .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
    while input.count < end! + length {
      if !read() { return nil }
    }
    let request = String(decoding: input[..<(end! + length)], as: UTF8.self)
    input.removeSubrange(..<(end! + length))
    return request
  }
}

extension EtcdClientTests {
  /// libcurl's easy handles are reused without `curl_easy_reset` (`CurlMulti.recycle`): a
  /// handle that served a watch (no time bound, its own URL, body and write target) then
  /// serves a put exactly as a fresh handle does: the same request on the wire, the answer
  /// read, and the put's time bound kept. No etcd needed.
  @Test func aHandleThatServedAWatchServesAPutAsAFreshOne() throws {
    let member = try RecordingMember()
    let runner = try LoopRunner()
    let fresh = try EtcdClient(loop: runner.loop, configuration: .init(members: [member.url]))
    #expect(try runner.wait { fresh.put(key: bytes("k"), value: bytes("v"), completion: $0) }.value != nil)
    let freshRequest = try #require(member.requests.last)

    let client = try EtcdClient(loop: runner.loop, configuration: .init(members: [member.url]))
    var updates: [WatchUpdate] = []
    let watch = client.watch(WatchRequest.prefix(bytes("w"))) { updates.append($0) }
    #expect(try runner.run(until: { !updates.isEmpty }, timeout: 5))
    let handle = try #require(watch.transfer?.easy)
    watch.cancel()
    #expect(client.multi.idle.last == handle, "the watch's handle is the next one taken")
    #expect(try runner.wait { client.put(key: bytes("k"), value: bytes("v"), completion: $0) }.value != nil)
    #expect(member.requests.count == 3)
    #expect(member.requests.last == freshRequest)

    // The watch's unbounded time is not the put's: against a member that never answers, the
    // put on the watch's handle ends at the client's request timeout.
    let silent = try SilentMember()
    let bounded = try EtcdClient(
      loop: runner.loop, configuration: .init(members: [silent.url], requestTimeout: 300))
    let silentWatch = bounded.watch(WatchRequest(key: bytes("w"))) { _ in }
    try runner.run(until: { false }, timeout: 0.2)
    let silentHandle = try #require(silentWatch.transfer?.easy)
    silentWatch.cancel()
    #expect(bounded.multi.idle.last == silentHandle)
    let start = monotonicSeconds()
    let put = try #require(
      try runner.wait(timeout: 10) { bounded.put(key: bytes("k"), value: [], completion: $0) }.error)
    #expect(put.kind == .timedOut, "\(put)")
    #expect(monotonicSeconds() - start < 5)
  }
}
