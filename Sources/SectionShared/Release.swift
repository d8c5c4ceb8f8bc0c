/// The version of sectiond and of the protocol it speaks, as the daemon answers `VERSION` and
/// `sectionctl version` prints them: one release, both sides. Public, so that a program can
/// say which library it was built with beside what `VERSION` says of the daemon.
public enum Release {
  /// sectiond's version, which this library is released with.
  public static let daemonVersion = "0.1.0"
  /// The protocol this library speaks.
  public static let protocolVersion = 1
}
