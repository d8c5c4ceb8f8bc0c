import SectionShared

/// What a view of the daemon needs, in one value: the sections in order, which are open, the
/// mode, and the revision they show. `AsyncClient.states()` keeps it current, as a diffable
/// data source is kept current by snapshots: bind a view to it and redraw on each new value.
///
/// It is made from a SUBSCRIBE snapshot and a LIST, and brought forward by events: opens,
/// closes and mode switches apply here; a change to the list itself (an edit, a reload, a
/// `!state` snapshot) asks for a LIST again (`apply` says `.needsList`). Events the state
/// already shows, by their revision, change nothing.
public struct SectionState: Equatable, Sendable {
  public private(set) var sections: [ListedSection]
  public private(set) var mode: Mode
  /// The revision of the last change the state shows.
  public private(set) var revision: UInt64
  /// The mode comes from SUBSCRIBE and `!mode`, not from LIST: its own revision.
  private var modeRevision: UInt64

  /// What `apply` did.
  public enum Outcome: Equatable, Sendable {
    case unchanged
    case changed
    /// The list itself changed: LIST again and pass the result to `relisted`.
    case needsList
  }

  public init(snapshot: StateSnapshot, listing: Listing) {
    sections = listing.sections
    mode = snapshot.mode
    modeRevision = snapshot.revision
    revision = max(snapshot.revision, listing.revision)
  }

  /// Ids of the open sections, in order.
  public var openIDs: [String] { sections.filter(\.isOpen).map(\.id) }

  /// Brings the state forward by one event.
  public mutating func apply(_ event: Event) -> Outcome {
    switch event {
    case .opened(let revision, let index, let id), .closed(let revision, let index, let id):
      guard revision > self.revision else { return .unchanged }
      self.revision = revision
      let found =
        sections.indices.contains(index) && sections[index].id == id
        ? index : sections.firstIndex { $0.id == id }
      guard let found else { return .needsList }
      let old = sections[found]
      let isOpen = if case .opened = event { true } else { false }
      sections[found] = ListedSection(
        index: old.index, id: old.id, isOpen: isOpen, itemCount: old.itemCount, title: old.title)
      return .changed
    case .mode(let revision, let mode):
      guard revision > modeRevision else { return .unchanged }
      modeRevision = revision
      self.revision = max(self.revision, revision)
      self.mode = mode
      return .changed
    case .state(let snapshot):
      if snapshot.revision > modeRevision {
        modeRevision = snapshot.revision
        mode = snapshot.mode
      }
      // In place of events the daemon skipped, which may have changed the list itself.
      return snapshot.revision > revision ? .needsList : .unchanged
    case .bye:
      return .unchanged
    default:
      guard let revision = event.revision ?? Self.revision(of: event), revision <= self.revision else {
        return .needsList
      }
      return .unchanged
    }
  }

  /// A LIST reply, asked for after `.needsList`.
  public mutating func relisted(_ listing: Listing) {
    sections = listing.sections
    revision = max(revision, listing.revision)
  }

  /// Events this library does not know carry their revision second, as every event with one does.
  private static func revision(of event: Event) -> UInt64? {
    guard case .other(let text) = event else { return nil }
    let words = text.split(separator: " ", maxSplits: 2)
    return words.count > 1 ? UInt64(words[1]) : nil
  }
}
