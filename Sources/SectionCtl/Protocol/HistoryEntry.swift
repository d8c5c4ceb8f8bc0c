/// One `history <rev> <time> <via> <uid> <pid> <name> <event>` line of a HISTORY reply: a
/// saved change, who made it and when. On the read-only socket uid, pid and name are `-`
/// (nil here).
struct HistoryEntry: Equatable, Sendable {
  let revision: UInt64
  /// RFC 3339 in UTC with milliseconds, as the daemon wrote it.
  let time: String
  /// `socket`, `bus` or `reload`.
  let via: String
  let uid: UInt32?
  let pid: Int32?
  let name: String?
  /// The change's event, as subscribers got it.
  let event: Event
}
