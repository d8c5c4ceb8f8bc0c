/// One kept change as values: what its `history` line says, for a face that answers with
/// values (the D-Bus `History` and `ChangedBy`) rather than with the line.
public struct HistoryRecord {
  public let revision: UInt64
  /// Milliseconds since the epoch (`HistoryClock` writes it as the line does).
  public let time: UInt64
  public let who: Who
  /// The event's words, without `!` and LF.
  public let event: ArraySlice<UInt8>

  /// Who made a change, as its `history` line shows them: for the D-Bus answers, and for the
  /// journald entry of a run of changes (`--log-changes`), where authors shown alike are one.
  public struct Who: Equatable {
    public let via: Author.Via
    /// nil when unknown, or not shown to the asker (the read-only access: SECURITY.md).
    public let uid: UInt32?
    public let pid: Int32?
    /// The name the history shows (`Author.shownName`); empty when there is none, or it is not
    /// shown to the asker.
    public let name: [UInt8]

    /// `author` as shown; with `blanking`, its via alone (the read-only access).
    public init(_ author: Author, blanking: Bool = false, processName: (Int32) -> String?) {
      via = author.via
      uid = blanking ? nil : author.uid
      pid = blanking ? nil : author.pid.flatMap { $0 >= 0 ? $0 : nil }
      name = blanking ? [] : author.shownName(processName)
    }
  }
}
