/// Whether a connection receives events.
public enum Subscription: UInt8, Sendable {
  case none = 0
  case live = 1
  /// Events were dropped because the client read too slowly: it is owed a `!state` snapshot,
  /// which goes out before anything else that is queued after the drop.
  case owedSnapshot = 2
  /// `SUBSCRIBE FROM` is replaying the history to it, paced by its reading (`HistoryStream`):
  /// live events wait in the history until the replay reaches them.
  case replaying = 3
}
