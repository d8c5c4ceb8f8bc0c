/// What a client may do, each level including the one before: `read` sees the list, the
/// history and the events; `operate` also opens and closes sections; `edit` also changes the
/// list itself, switches the mode and reloads the config. The daemon decides a socket
/// connection's level once, when it accepts it (docs/SECURITY.md); clients read it back from
/// `STATUS` and from `ERR DENIED <needs> <has>`, which name levels by `rawValue`.
public enum AccessLevel: String, Sendable, CaseIterable, Comparable {
  case read
  case operate
  case edit

  /// Its place in the order, for comparing.
  private var rank: UInt8 {
    switch self {
    case .read: 0
    case .operate: 1
    case .edit: 2
    }
  }

  public static func < (lhs: AccessLevel, rhs: AccessLevel) -> Bool { lhs.rank < rhs.rank }
}
