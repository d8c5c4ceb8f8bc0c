import Foundation
import Glibc

/// A test-owned NOTIFY_SOCKET: a datagram socket that records what the daemon tells systemd.
final class NotifyRecorder {
  let path: String
  private let fd: Int32
  /// Every datagram received so far, with the time it arrived.
  private(set) var messages: [(time: Date, text: String)] = []

  init(directory: TemporaryDirectory) throws {
    path = directory.file("notify")
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    if result != 0 { throw TestFailure("bind \(path): errno \(errno)") }
  }

  deinit { close(fd) }

  /// Reads datagrams until one contains `needle` or `timeout` passes; returns that message.
  @discardableResult
  func waitFor(_ needle: String, timeout: Double = 5) throws -> String {
    if let found = messages.first(where: { $0.text.contains(needle) }) { return found.text }
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      for message in receive(timeout: deadline.timeIntervalSinceNow) where message.contains(needle) {
        return message
      }
    }
    throw TestFailure("no \(needle) on NOTIFY_SOCKET within \(timeout) s; got \(messages.map(\.text))")
  }

  /// Collects whatever arrives within `timeout` seconds.
  @discardableResult
  func receive(timeout: Double) -> [String] {
    var received: [String] = []
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let deadline = Date().addingTimeInterval(max(timeout, 0))
    repeat {
      let wait = Int32(max(deadline.timeIntervalSinceNow, 0) * 1000)
      guard poll(&poller, 1, wait) > 0 else { break }
      var buffer = [UInt8](repeating: 0, count: 4096)
      let count = recv(fd, &buffer, buffer.count, 0)
      if count > 0 {
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        messages.append((Date(), text))
        received.append(text)
      }
    } while received.isEmpty || poll(&poller, 1, 0) > 0
    return received
  }
}
