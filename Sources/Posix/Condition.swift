import Glibc

/// A mutex with its condition variable (pthread), for the state between the loop and the one
/// thread the daemon starts (see `Thread`). Timed waits count on the monotonic clock, so that
/// setting the wall clock neither stretches nor cuts them.
public final class Condition: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  public init() {
    pthread_mutex_init(mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  /// Runs `body` holding the mutex.
  public func withLock<T>(_ body: () throws -> T) rethrows -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }

  /// Inside `withLock`: lets go of the mutex until signalled (or woken spuriously).
  public func wait() {
    pthread_cond_wait(condition, mutex)
  }

  /// Inside `withLock`: as `wait()`, or until `deadline`, in `monotonicMicroseconds()`.
  public func wait(until deadline: UInt64) {
    var time = timespec(tv_sec: Int(deadline / 1_000_000), tv_nsec: Int(deadline % 1_000_000) * 1000)
    pthread_cond_timedwait(condition, mutex, &time)
  }

  /// Wakes every thread waiting.
  public func broadcast() {
    pthread_cond_broadcast(condition)
  }
}

/// A thread of the daemon's own (pthread). Every signal is blocked in it, so that signals stay
/// with the main thread, which reads them from a signalfd: a SIGTERM delivered to this thread
/// would otherwise end the process without the orderly stop.
public struct Thread: Sendable {
  private let handle: pthread_t

  private final class Body {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }

  public static func start(_ body: @escaping @Sendable () -> Void) throws -> Thread {
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    // The new thread inherits the mask in force when it is created: all blocked.
    var all = sigset_t()
    var previous = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_SETMASK, &all, &previous)
    var handle = pthread_t()
    let result = pthread_create(
      &handle, nil,
      { context in
        Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
        return nil
      }, context)
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    guard result == 0 else {
      Unmanaged<Body>.fromOpaque(context).release()
      throw PosixError("pthread_create", errno: Errno(result))
    }
    return Thread(handle: handle)
  }

  /// Lets the thread's resources go when it returns, for a thread nobody will join.
  public func detach() {
    pthread_detach(handle)
  }

  /// Waits for the thread to return.
  public func join() {
    pthread_join(handle, nil)
  }
}
