import Posix
import Synchronization

/// The one thread that reads the replies of every `AsyncClient` connection in the process:
/// epoll says which sockets have something, and each is read once per turn (epoll reports
/// it again while more waits). Replies that arrive together are handed on together, with one
/// wake-up of this thread for all of them rather than one per connection and reply.
final class Reactor: @unchecked Sendable {
  static let shared = Reactor()

  private let epoll: Epoll?
  private let links = Mutex<[Int32: Link]>([:])
  /// False when epoll or the thread could not be had: `Link` then refuses to connect.
  private let running = Atomic<Bool>(false)

  private init() {
    epoll = try? Epoll()
    guard epoll != nil, let thread = try? Thread.start({ [self] in run() }) else { return }
    thread.detach()
    running.store(true, ordering: .releasing)
  }

  /// Reads `link`'s socket from now on, until its end (`Link.readAvailable` returns false).
  func add(_ link: Link, fd: FileDescriptor) -> Bool {
    guard let epoll, running.load(ordering: .acquiring) else { return false }
    links.withLock { $0[fd.rawValue] = link }
    do {
      try epoll.add(fd, events: .readable)
      return true
    } catch {
      links.withLock { $0[fd.rawValue] = nil }
      return false
    }
  }

  private func run() {
    guard let epoll else { return }
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      guard (try? Poll.wait([(epoll.fd, .readable)], milliseconds: -1)) != nil else { continue }
      epoll.poll { fd, _ in
        guard let link = links.withLock({ $0[fd.rawValue] }) else { return }
        guard !link.readAvailable(into: &chunk) else { return }
        // Removed before the link can go (and close its socket): the number is not reused yet.
        epoll.remove(fd)
        links.withLock { $0[fd.rawValue] = nil }
        link.ended()
      }
    }
  }
}
