import Glibc

/// The errno values a client tells apart, so it can say what went wrong and what to do about it.
extension Errno {
  public static let permissionDenied = Errno(EACCES)
  public static let nameTooLong = Errno(ENAMETOOLONG)
  public static let notDirectory = Errno(ENOTDIR)
  /// Writing to a pipe whose reader is gone, as in `sectionctl watch | head -1`.
  public static let brokenPipe = Errno(EPIPE)
}
