import Glibc
import Posix
import Testing

@testable import Systemd

/// sd-event behind the loop's Swift surface: each kind of source runs its handler when it
/// should, a source cancels itself from inside its handler, and the loop's exit code comes
/// back. Every test arms a timer that ends the loop, so a source that never fires fails the
/// test instead of hanging it.
@Suite struct EventLoopTests {
  /// Runs `loop` until a handler exits it, or until `seconds` have passed (exit code 99).
  func run(_ loop: EventLoop, seconds: UInt64 = 10) throws -> Int32 {
    let guardTimer = try loop.timer(after: seconds * 1_000_000) { loop.exit(code: 99) }
    defer { guardTimer.cancel() }
    return try loop.run()
  }

  @Test func aTimerFiresAndIsRearmed() throws {
    let loop = try EventLoop()
    var fired = 0
    var timer: EventSource?
    timer = try loop.timer(after: 1000) {
      fired += 1
      if fired == 3 { loop.exit(code: 3) } else { timer?.rearm(after: 1000) }
    }
    #expect(try run(loop) == 3)
    #expect(fired == 3)
    timer?.cancel()
    // The handler holds the variable that holds its source: let go of it, or the source, its
    // handler and the loop it captured are never freed (LeakSanitizer, make asan).
    timer = nil
  }

  @Test func aWatchedDescriptorReportsItsEvents() throws {
    let loop = try EventLoop()
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    let (reader, writer) = (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    defer { reader.close() }
    var seen = IOEvents(rawValue: 0)
    let source = try loop.watch(reader, events: .readable) { events in
      seen = events
      loop.exit(code: 1)
    }
    try writer.writeAll([1])
    writer.close()
    #expect(try run(loop) == 1)
    #expect(seen.contains(.readable))
    source.cancel()
  }

  /// A deferred source runs once per trigger; the after-iteration hook runs after the
  /// iteration its sources ran in, and a source may cancel itself from its own handler.
  @Test func aDeferredSourceRunsOncePerTriggerAndTheHookAfterIt() throws {
    let loop = try EventLoop()
    var order: [String] = []
    var deferred: EventSource?
    deferred = try loop.deferred {
      order.append("deferred")
      if order.filter({ $0 == "deferred" }).count == 2 {
        deferred?.cancel()
        loop.exit(code: 2)
      }
    }
    let hook = try loop.afterEachIteration {
      order.append("after")
      if order.count == 2 { deferred?.trigger() }
    }
    deferred?.trigger()
    #expect(try run(loop) == 2)
    #expect(order.prefix(3) == ["deferred", "after", "deferred"])
    hook.cancel()
    deferred?.cancel()
    deferred = nil  // as in aTimerFiresAndIsRearmed: the handler holds it
  }

  /// Work asked for from a handler runs when that handler returns, before the loop's next
  /// turn (the iteration's end comes after it); work that work asks for waits for the next
  /// handler's return (here the iteration's end's).
  @Test func workAskedForInAHandlerRunsWhenItReturns() throws {
    let loop = try EventLoop()
    var order: [String] = []
    let deferred = try loop.deferred {
      order.append("handler")
      loop.whenHandlerReturns {
        order.append("returned")
        loop.whenHandlerReturns { order.append("again") }
      }
    }
    let hook = try loop.afterEachIteration { order.append("after") }
    let end = try loop.timer(after: 50_000) { loop.exit(code: 5) }
    deferred.trigger()
    #expect(try run(loop) == 5)
    #expect(order.prefix(4) == ["handler", "returned", "after", "again"])
    end.cancel()
    hook.cancel()
    deferred.cancel()
  }

  @Test func aDisabledSourceDoesNotFire() throws {
    let loop = try EventLoop()
    var fired = false
    let timer = try loop.timer(after: 1000) { fired = true }
    timer.setEnabled(false)
    let end = try loop.timer(after: 50_000) { loop.exit(code: 4) }
    #expect(try run(loop) == 4)
    #expect(!fired)
    end.cancel()
    timer.cancel()
  }

  /// sd-event's calls return -errno; the error names the call, its subject and the errno.
  @Test func aNegativeResultIsThePosixErrorOfTheCall() throws {
    #expect(try check(5, "sd_x") == 5)
    do {
      try check(-ENOENT, "sd_bus_open_system", "/run/dbus")
      Issue.record("no error")
    } catch let error as PosixError {
      #expect(error.errno == .noEntry)
      #expect(error.description == "sd_bus_open_system(/run/dbus): No such file or directory (errno 2)")
    }
  }

  /// Outside systemd (no WATCHDOG_USEC, no LISTEN_FDS) there is no watchdog and nothing inherited.
  @Test func withoutAServiceManagerThereIsNoWatchdogAndNothingInherited() throws {
    #expect(ProcessInfo.environment("WATCHDOG_USEC") == nil)
    #expect(ProcessInfo.environment("LISTEN_FDS") == nil)
    #expect(try EventLoop().enableWatchdog() == false)
    #expect(try SocketActivation.inherited().isEmpty)
  }
}
