import SectionShared

/// What a view of the daemon needs, in one value: the sections in order, which are open, the
/// mode, the revision they show, and (for a state made from a VIEW) the items of the open
/// sections. `AsyncClient.states()` keeps it current, as a diffable data source is kept current
/// by snapshots: bind a view to it and redraw on each new value; `Follower` does the same
/// for a program with a poll(2) loop of its own.
///
/// It is made from a SUBSCRIBE snapshot and a LIST (or a VIEW), and brought forward by events:
/// opens, closes and mode switches apply here; a change to the list itself (an edit, a reload,
/// a `!state` snapshot in place of events the daemon skipped) asks for the list again (`apply`
/// says `.needsList`; `listRequest` is what to send). Events the state already shows, by their
/// revision, change nothing: so events that came while a LIST was on its way may be applied
/// after it.
public struct SectionState: Equatable, Sendable {
  public private(set) var sections: [ListedSection]
  public private(set) var mode: Mode
  /// The revision of the last change the state shows.
  public private(set) var revision: UInt64
  /// Item texts by section id, in order, for a state made from a VIEW (`init(snapshot:view:)`):
  /// the open sections' items, and those of sections closed since they were known. Empty for a
  /// state made from a LIST.
  public private(set) var items: [String: [String]] = [:]
  /// Whether the state follows the open sections' items (made from a VIEW).
  public let followsItems: Bool
  /// The mode comes from SUBSCRIBE and `!mode`, not from LIST: its own revision.
  private var modeRevision: UInt64
  /// Where each id is in `sections`: the ui looks sections up by id on every frame.
  private var indexByID: [String: Int] = [:]

  /// What `apply` did.
  public enum Outcome: Equatable, Sendable {
    case unchanged
    case changed
    /// The list itself changed: send `listRequest` and pass the result to `relisted`.
    case needsList
  }

  public init(snapshot: StateSnapshot, listing: Listing) {
    self.init(snapshot: snapshot, listing: listing, followsItems: false)
  }

  /// A state that follows the items of the open sections too: made from a VIEW reply (which
  /// has them), it is brought back in line by VIEW (`listRequest`), and a section opened since
  /// is named by `missingItems` until its items are `received`.
  public init(snapshot: StateSnapshot, view: Listing) {
    self.init(snapshot: snapshot, listing: view, followsItems: true)
  }

  private init(snapshot: StateSnapshot, listing: Listing, followsItems: Bool) {
    sections = []
    mode = snapshot.mode
    modeRevision = snapshot.revision
    revision = snapshot.revision
    self.followsItems = followsItems
    relisted(listing)
  }

  /// Ids of the open sections, in order.
  public var openIDs: [String] { sections.filter(\.isOpen).map(\.id) }

  /// Where the section `id` is in `sections`.
  public func index(of id: String) -> Int? { indexByID[id] }

  /// What to send after `.needsList`: VIEW for a state that follows items, else LIST.
  public var listRequest: Request<Listing> { followsItems ? .view : .list }

  /// The open sections whose items a state that follows items lacks (opened since the last
  /// VIEW): ask for each (`Request.items`) and pass the reply to `received`. Kept as events
  /// come, not searched for: a program asks after every event.
  public private(set) var missingItems: [String] = []

  /// Brings the state forward by one event.
  public mutating func apply(_ event: Event) -> Outcome {
    switch event {
    case .opened(let revision, let index, let id), .closed(let revision, let index, let id):
      guard revision > self.revision else { return .unchanged }
      self.revision = revision
      let found = sections.indices.contains(index) && sections[index].id == id ? index : indexByID[id]
      guard let found else { return .needsList }
      let old = sections[found]
      let isOpen = if case .opened = event { true } else { false }
      sections[found] = ListedSection(
        index: old.index, id: old.id, isOpen: isOpen, itemCount: old.itemCount, title: old.title)
      if !isOpen {
        missingItems.removeAll { $0 == id }
      } else if followsItems && items[id] == nil && !missingItems.contains(id) {
        missingItems.append(id)
      }
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

  /// A LIST (or VIEW) reply, asked for after `.needsList`. A VIEW's items replace those known.
  public mutating func relisted(_ listing: Listing) {
    sections = listing.sections
    indexByID = Dictionary(sections.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
    revision = max(revision, listing.revision)
    guard followsItems else { return }
    missingItems = []
    let grouped = Dictionary(grouping: listing.items, by: \.sectionIndex)
    items = [:]
    for (index, section) in sections.enumerated() where section.isOpen {
      items[section.id] = (grouped[index] ?? []).sorted { $0.position < $1.position }.map(\.text)
    }
  }

  /// The reply to `ITEMS <id>`, asked for because of `missingItems`; its count replaces the
  /// section's. Ignored for a section the state no longer has.
  public mutating func received(_ listed: [ListedItem], of id: String) {
    guard followsItems, let index = indexByID[id] else { return }
    let texts = listed.sorted { $0.position < $1.position }.map(\.text)
    items[id] = texts
    missingItems.removeAll { $0 == id }
    let old = sections[index]
    sections[index] = ListedSection(
      index: old.index, id: old.id, isOpen: old.isOpen, itemCount: texts.count, title: old.title)
  }

  /// Events this library does not know carry their revision second, as every event with one does.
  private static func revision(of event: Event) -> UInt64? {
    guard case .other(let text) = event else { return nil }
    let words = text.split(separator: " ", maxSplits: 2)
    return words.count > 1 ? UInt64(words[1]) : nil
  }
}
