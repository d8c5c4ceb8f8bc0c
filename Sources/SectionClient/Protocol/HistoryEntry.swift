/// One change the daemon keeps, a `history <rev> <time> <via> <uid> <pid> <name> <event>` line
/// of HISTORY: what changed, when, and who changed it through which face.
public struct HistoryEntry: Equatable, Sendable {
  public var revision: UInt64
  /// As the daemon wrote it.
  public var time: String
  /// The face the change came through (socket, bus, ...).
  public var via: String
  public var uid: String
  public var pid: String
  /// The name the client gave itself with CLIENT NAME (`-` for none).
  public var name: String
  /// The change, as subscribers saw it.
  public var event: Event

  public init(
    revision: UInt64, time: String, via: String, uid: String, pid: String, name: String, event: Event
  ) {
    self.revision = revision
    self.time = time
    self.via = via
    self.uid = uid
    self.pid = pid
    self.name = name
    self.event = event
  }
}
