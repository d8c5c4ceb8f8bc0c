/// A long answer from the history, sent as the client reads it, so that its memory is bounded: the `history` lines
/// of `HISTORY`, or the events `SUBSCRIBE FROM` replays. The server asks for the next part only
/// once the connection's output has drained (`SectionService.continueStream`), so a client that
/// does not read holds one part, not the whole history: 700 such clients asking for 100,000
/// changes held 4.8 GB when each answer was rendered whole.
///
/// It holds revisions, not positions: the changes it is still to send may move in the ring,
/// or go from it, while the client reads.
public struct HistoryStream: Sendable, Equatable {
  public enum Kind: Sendable, Equatable {
    /// `history` lines up to `through`, then `OK <revision>`; uid, pid and name blanked with
    /// `blankingWho`.
    case lines(through: UInt64, revision: UInt64, blankingWho: Bool)
    /// Events up to the newest change kept: then the subscriber is live.
    case replay
  }

  /// The revision of the next change to send.
  var next: UInt64
  public let kind: Kind

  public var isReplay: Bool { kind == .replay }

  /// Where a stream stands after a part.
  public enum Progress: Sendable {
    /// More to send: ask again once the output drains.
    case more
    /// All sent.
    case done
    /// The next change went from the history while the client was reading: a `HISTORY`
    /// reply ended with `ERR GONE`; a replay's subscriber is owed a `!state`.
    case gone
  }

  /// The bytes of output a part fills up to (plus at most one line): well under the 1 MiB a
  /// connection may hold, and under the 64 KiB a queue keeps its storage for.
  public static let partBytes = 48 << 10
  /// The next part is made once the output is below this.
  public static let lowWater = 16 << 10
}
