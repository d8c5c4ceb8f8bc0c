import Glibc

/// An errno value, printed the way people expect to read it: `Address already in use (errno 98)`.
public struct Errno: Equatable, Sendable, CustomStringConvertible {
  public let rawValue: Int32

  public init(_ rawValue: Int32) { self.rawValue = rawValue }

  /// The calling thread's errno, read right after a failed call.
  public static var current: Errno { Errno(Glibc.errno) }

  public static let interrupted = Errno(EINTR)
  public static let wouldBlock = Errno(EAGAIN)
  public static let noEntry = Errno(ENOENT)
  public static let exists = Errno(EEXIST)
  public static let connectionRefused = Errno(ECONNREFUSED)
  public static let tooManyFiles = Errno(EMFILE)
  public static let tooManyFilesInSystem = Errno(ENFILE)
  public static let noSpace = Errno(ENOSPC)

  public var description: String {
    "\(String(cString: strerror(rawValue))) (errno \(rawValue))"
  }
}

/// A failed system call: which call, on what, and why.
///
/// Its description is the log line: `bind(/run/sectiond/control.sock): Address already in use (errno 98)`.
public struct PosixError: Error, Sendable, CustomStringConvertible {
  public let call: String
  public let subject: String?
  public let errno: Errno

  public init(_ call: String, _ subject: String? = nil, errno: Errno = .current) {
    self.call = call
    self.subject = subject
    self.errno = errno
  }

  public var description: String {
    "\(call)(\(subject ?? "")): \(errno)"
  }
}

/// The outcome of a non-blocking call: done, or the kernel said "try again later" (EAGAIN).
public enum IOResult<Value> {
  case done(Value)
  case wouldBlock
}

/// Runs `body` until it stops failing with EINTR; throws any other failure as a `PosixError`.
@inline(__always)
func retrying<T: BinaryInteger>(
  _ call: String, _ subject: @autoclosure () -> String? = nil, _ body: () -> T
) throws -> T {
  while true {
    let result = body()
    if result >= 0 { return result }
    let error = Errno.current
    if error != .interrupted { throw PosixError(call, subject(), errno: error) }
  }
}

/// Like `retrying`, but EAGAIN comes back as `.wouldBlock` instead of an error.
@inline(__always)
func retryingNonBlocking<T: BinaryInteger>(
  _ call: String, _ body: () -> T
) throws -> IOResult<T> {
  while true {
    let result = body()
    if result >= 0 { return .done(result) }
    let error = Errno.current
    if error == .wouldBlock { return .wouldBlock }
    if error != .interrupted { throw PosixError(call, errno: error) }
  }
}
