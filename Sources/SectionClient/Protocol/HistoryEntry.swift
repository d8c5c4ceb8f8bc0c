/// One `history <rev> <time> <via> <uid> <pid> <name> <event>` line of a HISTORY reply: a
/// saved change, who made it and when. On the read-only socket uid, pid and name are `-`
/// (nil here).
public struct HistoryEntry: Equatable, Sendable {
  public let revision: UInt64
  /// RFC 3339 in UTC with milliseconds, as the daemon wrote it.
  public let time: String
  /// `socket`, `bus` or `reload`.
  public let via: String
  public let uid: UInt32?
  public let pid: Int32?
  public let name: String?
  /// The change's event, as subscribers got it.
  public let event: Event
}
