import Glibc
import Testing

@testable import Posix

/// The one loop every wrapped call goes through: EINTR retried inside, EAGAIN a value, any
/// other failure a `PosixError` naming the call, its subject and the errno.
@Suite struct RetryingTests {
  /// A call that fails with each errno of `failures` in turn, then returns `result`.
  final class Call {
    var failures: [Int32]
    let result: Int
    var count = 0

    init(failing failures: [Int32], then result: Int) {
      self.failures = failures
      self.result = result
    }

    func callAsFunction() -> Int {
      count += 1
      guard !failures.isEmpty else { return result }
      Glibc.errno = failures.removeFirst()
      return -1
    }
  }

  @Test func anInterruptedCallIsMadeAgain() throws {
    let call = Call(failing: [EINTR, EINTR], then: 7)
    #expect(try retrying("read", "x") { call() } == 7)
    #expect(call.count == 3)
  }

  @Test func anyOtherFailureNamesTheCallAndItsSubject() {
    let call = Call(failing: [EINTR, EACCES], then: 0)
    let error = thrown(PosixError.self) { _ = try retrying("open", "/etc/shadow") { call() } }
    #expect(error?.call == "open")
    #expect(error?.subject == "/etc/shadow")
    #expect(error?.errno == .permissionDenied)
    #expect(error?.description == "open(/etc/shadow): Permission denied (errno 13)")
    #expect(call.count == 2)
  }

  @Test func wouldBlockIsAnAnswerNotAnError() throws {
    let call = Call(failing: [EINTR, EAGAIN], then: 5)
    guard case .wouldBlock = try retryingNonBlocking("read", { call() }) else {
      Issue.record("EAGAIN was not .wouldBlock")
      return
    }
    guard case .done(let count) = try retryingNonBlocking("read", { call() }) else {
      Issue.record("a success was not .done")
      return
    }
    #expect(count == 5)
    #expect(call.count == 3)
  }

  @Test func aNonBlockingFailureIsThrown() {
    let call = Call(failing: [ECONNRESET], then: 0)
    let error = thrown(PosixError.self) { _ = try retryingNonBlocking("write") { call() } }
    #expect(error?.call == "write")
    #expect(error?.errno == Errno(ECONNRESET))
  }

  @Test func anErrnoReadsAsTextAndNumber() {
    #expect(Errno(EADDRINUSE).description == "Address already in use (errno 98)")
    #expect(
      PosixError("bind", nil, errno: Errno(EADDRINUSE)).description
        == "bind(): Address already in use (errno 98)")
  }
}
