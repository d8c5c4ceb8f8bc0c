import Foundation
import Glibc

/// A test-owned NOTIFY_SOCKET: a datagram socket that records what the daemon tells systemd.
final class NotifyRecorder {
  let path: String
  private let fd: Int32
  /// Every datagram received so far, with the time the kernel received it.
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
    // Each datagram carries the time it arrived (SO_TIMESTAMP, 29: Glibc's macro is too
    // involved for Swift to import), so a test descheduled while datagrams queue still sees
    // the gaps the daemon left between them, not the gaps of its own reading.
    var on: Int32 = 1
    if setsockopt(fd, SOL_SOCKET, NotifyRecorder.soTimestamp, &on, socklen_t(MemoryLayout<Int32>.size)) != 0 {
      throw TestFailure("setsockopt(SO_TIMESTAMP): errno \(errno)")
    }
  }

  private static let soTimestamp: Int32 = 29

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
      let (text, arrival) = receiveOne()
      if let text {
        messages.append((arrival ?? Date(), text))
        received.append(text)
      }
    } while received.isEmpty || poll(&poller, 1, 0) > 0
    return received
  }

  /// One datagram, and the arrival time its SCM_TIMESTAMP control message gives.
  private func receiveOne() -> (text: String?, arrival: Date?) {
    var data = [UInt8](repeating: 0, count: 4096)
    var control = [UInt8](repeating: 0, count: 64)
    let count = data.withUnsafeMutableBytes { data in
      control.withUnsafeMutableBytes { control in
        var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
        return withUnsafeMutablePointer(to: &vector) { vector in
          var header = msghdr(
            msg_name: nil, msg_namelen: 0, msg_iov: vector, msg_iovlen: 1, msg_control: control.baseAddress,
            msg_controllen: control.count, msg_flags: 0)
          return recvmsg(fd, &header, 0)
        }
      }
    }
    guard count > 0 else { return (nil, nil) }
    // The first control message: cmsghdr (length, level, type: 8 + 4 + 4 bytes), then a timeval.
    let arrival = control.withUnsafeBytes { bytes -> Date? in
      guard bytes.load(fromByteOffset: 8, as: Int32.self) == SOL_SOCKET,
        bytes.load(fromByteOffset: 12, as: Int32.self) == NotifyRecorder.soTimestamp
      else { return nil }
      let seconds = bytes.load(fromByteOffset: 16, as: Int.self)
      let microseconds = bytes.load(fromByteOffset: 24, as: Int.self)
      return Date(timeIntervalSince1970: Double(seconds) + Double(microseconds) / 1e6)
    }
    return (String(decoding: data[..<count], as: UTF8.self), arrival)
  }
}
