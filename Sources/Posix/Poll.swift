import Glibc

/// poll(2) over a handful of descriptors: what a client with one socket and one terminal needs.
/// `IOEvents` carries the same bits, which Linux defines alike for poll and epoll.
public enum Poll {
  /// Waits until one of `watched` is ready or `milliseconds` pass (-1: no limit); returns what
  /// each is ready for, in the same order, empty when ready for nothing. A signal ends the wait
  /// early with nothing ready, so the caller's loop looks at its timers again.
  public static func wait(_ watched: [(FileDescriptor, IOEvents)], milliseconds: Int) throws -> [IOEvents] {
    var descriptors = watched.map { pollfd(fd: $0.0.rawValue, events: Int16($0.1.rawValue), revents: 0) }
    let count = Glibc.poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: milliseconds))
    if count < 0 {
      let error = Errno.current
      if error == .interrupted { return watched.map { _ in [] } }
      throw PosixError("poll", errno: error)
    }
    return descriptors.map { IOEvents(rawValue: UInt32(UInt16(bitPattern: $0.revents))) }
  }
}
