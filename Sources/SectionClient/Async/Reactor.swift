import Glibc
import Posix
import Synchronization

/// The one thread that does the I/O of every `AsyncClient` connection in the process, and a
/// task executor for the tasks that prefer it (`AsyncClient.executor`).
///
/// It takes the sockets epoll says have something, in turn: reads each once (epoll reports it
/// again while more waits), hands each reply to its request, runs the tasks that resumed, and
/// writes what they asked for (a connection's requests of the moment in one write(2)) before
/// the next socket. A task that runs here makes a request and gets its reply without a thread
/// between them, as bench/loadgen.c does in C: one thread, one epoll, a read and a write per
/// socket and turn. Tasks elsewhere work the same, but each reply then crosses to their thread.
final class Reactor: TaskExecutor, @unchecked Sendable {
  static let shared = Reactor()

  private let epoll: Epoll?
  private let wakeUp: EventDescriptor?
  private let links = Mutex(Links())
  /// Jobs enqueued from other threads, and whether this thread sleeps in epoll_wait (and so
  /// must be woken for them).
  private let incoming = Mutex(Incoming())
  /// Whether `incoming` holds jobs: read without the lock each time the thread looks for jobs,
  /// once per socket served; set and cleared under it.
  private let hasIncoming = Atomic<Bool>(false)
  /// This thread's pthread_t once it runs: how `enqueue` and `Link` know they are on it.
  private let thread = Atomic<UInt>(0)
  /// False when epoll or the thread could not be had: `Link` then refuses to connect.
  private let running = Atomic<Bool>(false)
  /// When this thread next looks for requests past their deadline (`monotonicMicroseconds()`),
  /// `UInt64.max` for never: the earliest deadline it knows of. No timer per request: a
  /// request whose deadline is earlier than the alarm lowers it (and wakes the thread), one
  /// atomic load otherwise; a client without a timeout never touches it.
  private let alarm = Atomic<UInt64>(.max)

  // Touched by this thread only, so without the runtime's exclusivity checks (as `Link.Reading`):
  // they were 4% of client-load's CPU at one request in flight, with the thread-local lookups
  // they make.
  @exclusivity(unchecked) private var jobs: [UnownedJob] = []
  @exclusivity(unchecked) private var turn: [UnownedJob] = []
  @exclusivity(unchecked) private var unflushed: [Link] = []

  private struct Incoming {
    var jobs: [UnownedJob] = []
    var sleeping = false
  }

  private init() {
    epoll = try? Epoll()
    wakeUp = try? EventDescriptor()
    guard let epoll, let wakeUp, (try? epoll.add(wakeUp.fd, events: .readable)) != nil,
      let thread = try? Thread.start({ [self] in run() })
    else { return }
    thread.detach()
    running.store(true, ordering: .releasing)
  }

  /// True on the reactor's thread.
  var isCurrent: Bool { pthread_self() == thread.load(ordering: .acquiring) }

  /// Reads `link`'s socket from now on, until its end (`Link.readAvailable` returns false).
  func add(_ link: Link, fd: FileDescriptor) -> Bool {
    guard let epoll, running.load(ordering: .acquiring) else { return false }
    links.withLock { $0[fd] = link }
    do {
      try epoll.add(fd, events: .readable)
      return true
    } catch {
      links.withLock { $0[fd] = nil }
      return false
    }
  }

  /// Watches `fd` for room to write too (`Link.flush` left bytes the socket would not take),
  /// or no longer.
  func watch(_ fd: FileDescriptor, writable: Bool) {
    try? epoll?.modify(fd, events: writable ? [.readable, .writable] : .readable)
  }

  /// On this thread: `link` has requests to write once the jobs running now have run.
  func flushLater(_ link: Link) { unflushed.append(link) }

  /// A request with a `deadline` was queued on a link: the alarm goes off by then. Called after
  /// the request is in the link's queue, so that a check that raised the alarm (`expire`)
  /// either saw the request or left the alarm for this call to lower.
  func expect(_ deadline: UInt64) {
    var alarm = self.alarm.load(ordering: .sequentiallyConsistent)
    while deadline < alarm {
      let (exchanged, now) = self.alarm.compareExchange(
        expected: alarm, desired: deadline, ordering: .sequentiallyConsistent)
      if exchanged { return wake() }
      alarm = now
    }
  }

  /// Wakes this thread if it sleeps in epoll_wait (or is about to), to see a new alarm.
  private func wake() {
    guard !isCurrent else { return }
    let sleeping = incoming.withLock { incoming in
      defer { incoming.sleeping = false }
      return incoming.sleeping
    }
    if sleeping { wakeUp?.signal() }
  }

  /// How long epoll_wait may wait: not at all when there is more to run, else until the alarm
  /// if there is one (rounded up to a millisecond, so it wakes after it), for ever if not. When
  /// the alarm has gone off, every link is checked first (`expire`); without one, not even the
  /// clock is read.
  private func pollTimeout(idle: Bool) -> Int32 {
    var alarm = alarm.load(ordering: .sequentiallyConsistent)
    guard alarm != .max else { return idle ? -1 : 0 }
    var now = monotonicMicroseconds()
    if now >= alarm {
      expire(now)
      alarm = self.alarm.load(ordering: .sequentiallyConsistent)
      now = monotonicMicroseconds()
    }
    guard idle else { return 0 }
    if alarm == .max { return -1 }
    return alarm <= now ? 0 : Int32(clamping: (alarm - now + 999) / 1000)
  }

  /// Ends every connection with a request past its deadline (`Link.expire`), and sets the alarm
  /// for the earliest deadline left. The alarm is raised before the links are looked at: a
  /// request queued meanwhile either is seen here or lowers it again (`expect`).
  private func expire(_ now: UInt64) {
    alarm.store(.max, ordering: .sequentiallyConsistent)
    var earliest = UInt64.max
    for link in links.withLock({ $0.all }) {
      earliest = min(earliest, link.expire(now))
    }
    if earliest != .max { expect(earliest) }
  }

  /// A job of a task that prefers this thread (`TaskExecutor`): run here, in order, by
  /// `runJobs`; another thread's job wakes the thread if it sleeps in epoll_wait.
  func enqueue(_ job: consuming ExecutorJob) {
    // No thread to run it (epoll or the thread could not be had): it runs where tasks run by default.
    guard running.load(ordering: .acquiring) else { return globalConcurrentExecutor.enqueue(job) }
    let job = UnownedJob(job)
    if isCurrent { return jobs.append(job) }
    let sleeping = incoming.withLock { incoming in
      incoming.jobs.append(job)
      hasIncoming.store(true, ordering: .releasing)
      defer { incoming.sleeping = false }
      return incoming.sleeping
    }
    if sleeping { wakeUp?.signal() }
  }

  private func run() {
    guard let epoll, let wakeUp else { return }
    thread.store(pthread_self(), ordering: .releasing)
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      runJobs()
      let idle = isIdle()
      defer { if idle { incoming.withLock { $0.sleeping = false } } }
      epoll.poll(waiting: pollTimeout(idle: idle)) { fd, events in
        if fd == wakeUp.fd { return wakeUp.reset() }
        guard let link = links.withLock({ $0[fd] }) else { return }
        if events.contains(.writable) { link.roomToWrite() }
        // The tasks its replies resumed run at once, and their next requests leave before the
        // next socket is read, as loadgen.c answers each socket in turn: waiting for the end
        // of the turn made each round trip longer at one request in flight.
        guard !link.readAvailable(into: &chunk) else { return runJobs() }
        // Removed before the link can go (and close its socket): the number is not reused yet.
        epoll.remove(fd)
        links.withLock { $0[fd] = nil }
        link.ended()
      }
    }
  }

  /// Runs the jobs queued so far, then writes what they asked for; those they queue (a task
  /// resumed here) wait for the next call, after more I/O.
  private func runJobs() {
    if hasIncoming.load(ordering: .acquiring) {
      incoming.withLock { incoming in
        hasIncoming.store(false, ordering: .relaxed)
        jobs += incoming.jobs
        incoming.jobs.removeAll(keepingCapacity: true)
      }
    }
    swap(&jobs, &turn)
    for job in turn { job.runSynchronously(on: asUnownedTaskExecutor()) }
    // Emptied from the end, which keeps the capacity as `removeAll(keepingCapacity:)` does,
    // without its general path: a turn has a job or two.
    while turn.popLast() != nil {}
    // Popped, not emptied after: emptying an array of references cost 1% of client-load's CPU.
    while let link = unflushed.popLast() { link.flush() }
  }

  /// True when nothing is left to run: the thread may then sleep until a socket or `enqueue`
  /// wakes it.
  private func isIdle() -> Bool {
    guard jobs.isEmpty else { return false }
    return incoming.withLock { incoming in
      incoming.sleeping = incoming.jobs.isEmpty
      return incoming.sleeping
    }
  }
}

/// The links by descriptor number. A descriptor is a small number, reused once closed, so an
/// array indexed by it holds them in the space of the process's highest, and finds one without
/// hashing (a dictionary's lookup was 5% of client-load's instructions).
private struct Links {
  private var byNumber: [Link?] = []

  /// Every link.
  var all: [Link] { byNumber.compactMap { $0 } }

  subscript(fd: FileDescriptor) -> Link? {
    get { Int(fd.rawValue) < byNumber.count ? byNumber[Int(fd.rawValue)] : nil }
    set {
      let index = Int(fd.rawValue)
      if index >= byNumber.count {
        guard newValue != nil else { return }
        byNumber += repeatElement(nil, count: index + 1 - byNumber.count)
      }
      byNumber[index] = newValue
    }
  }
}
