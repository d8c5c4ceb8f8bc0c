import SectionShared

/// A change the daemon announces to subscribers, from a line starting with `!`.
public enum Event: Equatable, Sendable {
  case opened(revision: UInt64, index: Int, id: String)
  case closed(revision: UInt64, index: Int, id: String)
  case mode(revision: UInt64, mode: Mode)
  /// A full snapshot, sent instead of the events a slow subscriber did not read in time.
  case state(StateSnapshot)
  /// The sections themselves changed; a client should list them again.
  case reload(revision: UInt64)
  /// A runtime edit of one section: `inserted`, `deleted` or `renamed`.
  case edited(SectionEdit, revision: UInt64, index: Int, id: String)
  case moved(revision: UInt64, from: Int, to: Int, id: String)
  /// A section's items changed; `count` is how many it has now.
  case items(revision: UInt64, index: Int, id: String, count: Int)
  /// The daemon is about to close the connection.
  case bye(reason: String)
  /// An event this sectionctl does not know, kept whole (without the `!`) so newer daemons still work.
  case other(String)

  /// True for events that report a change: the ones `watch --count` counts.
  public var isChange: Bool {
    switch self {
    case .bye: false
    default: true
    }
  }
}

/// The runtime edits announced by `!inserted`, `!deleted` and `!renamed`, named as in the event.
public enum SectionEdit: String, CaseIterable, Sendable {
  case inserted, deleted, renamed
}

extension Event {
  /// The revision the change made; nil for `!bye` and events this library does not know.
  public var revision: UInt64? {
    switch self {
    case .opened(let revision, _, _), .closed(let revision, _, _), .mode(let revision, _),
      .reload(let revision), .edited(_, let revision, _, _), .moved(let revision, _, _, _),
      .items(let revision, _, _, _):
      revision
    case .state(let snapshot): snapshot.revision
    case .bye, .other: nil
    }
  }
}
