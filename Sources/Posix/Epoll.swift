import CShim
import Glibc

/// The epoll events a descriptor is watched for and reported with.
public struct IOEvents: OptionSet, Sendable {
  public let rawValue: UInt32
  @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

  // Inlinable, so that the daemon's module folds them to constants: as stored properties of
  // another module each use was a call to a lazy initializer's accessor (callgrind: 20
  // instructions a request).
  @inlinable public static var readable: IOEvents { IOEvents(rawValue: EPOLLIN.rawValue) }
  @inlinable public static var writable: IOEvents { IOEvents(rawValue: EPOLLOUT.rawValue) }
  /// The peer hung up or the socket failed: reading will tell which.
  @inlinable public static var hangUp: IOEvents { IOEvents(rawValue: EPOLLHUP.rawValue | EPOLLERR.rawValue) }
}

/// An epoll set for the many client sockets, drained in batches.
///
/// sd-event calls epoll_wait once per event source it dispatches, and each call re-polls
/// every ready descriptor: with N busy clients that is N² socket polls per loop turn. The
/// daemon therefore registers this one epoll descriptor with sd-event and, when it is
/// readable, takes up to `batchSize` ready clients from it with a single epoll_wait.
public final class Epoll {
  public static let batchSize = 256
  public let fd: FileDescriptor
  private let ready = UnsafeMutablePointer<epoll_event>.allocate(capacity: Epoll.batchSize)

  public init() throws {
    fd = FileDescriptor(rawValue: try retrying("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
  }

  deinit {
    ready.deallocate()
    fd.close()
  }

  public func add(_ watched: FileDescriptor, events: IOEvents) throws {
    try control(EPOLL_CTL_ADD, watched, events)
  }

  public func modify(_ watched: FileDescriptor, events: IOEvents) throws {
    try control(EPOLL_CTL_MOD, watched, events)
  }

  /// Closing a descriptor removes it too; this is for descriptors that stay open.
  public func remove(_ watched: FileDescriptor) {
    _ = epoll_ctl(fd.rawValue, EPOLL_CTL_DEL, watched.rawValue, nil)
  }

  /// Hands each ready descriptor to `body`; returns how many there were. Waits up to
  /// `milliseconds` for one (-1: until one is), by default not at all.
  @discardableResult
  public func poll(waiting milliseconds: Int32 = 0, _ body: (FileDescriptor, IOEvents) -> Void) -> Int {
    let count = cshim_epoll_ready(fd.rawValue, ready, Int32(Epoll.batchSize), milliseconds)
    guard count > 0 else { return 0 }
    for index in 0..<Int(count) {
      let event = ready[index]
      body(FileDescriptor(rawValue: event.data.fd), IOEvents(rawValue: event.events))
    }
    return Int(count)
  }

  private func control(_ operation: Int32, _ watched: FileDescriptor, _ events: IOEvents) throws {
    var event = epoll_event()
    event.events = events.rawValue
    event.data.fd = watched.rawValue
    _ = try retrying("epoll_ctl") { epoll_ctl(fd.rawValue, operation, watched.rawValue, &event) }
  }
}
