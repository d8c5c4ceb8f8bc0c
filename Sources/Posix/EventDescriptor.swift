import CShim
import Glibc

/// An eventfd(2): one thread signals it to wake another that waits for it in epoll (where it
/// reads as readable until reset). A plain value: whoever made it closes it, once.
public struct EventDescriptor: Sendable {
  public let fd: FileDescriptor

  public init() throws {
    fd = FileDescriptor(rawValue: try retrying("eventfd") { cshim_eventfd() })
  }

  /// Wakes the waiter. Cannot fail short of a counter at 2^64 - 2, which `reset` prevents.
  public func signal() {
    var one: UInt64 = 1
    _ = Glibc.write(fd.rawValue, &one, 8)
  }

  /// Sets the counter back to zero, so that epoll stops reporting it.
  public func reset() {
    var count: UInt64 = 0
    _ = Glibc.read(fd.rawValue, &count, 8)
  }
}
