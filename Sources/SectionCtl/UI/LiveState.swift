import SectionClient

/// The daemon's state as the ui last heard it: the sections, which are open, the mode, the
/// revision, and the items of the sections whose items it has asked for.
///
/// It is brought in line by a VIEW reply (`synced`) and kept in line by events. Events that
/// arrive while a VIEW is on its way wait and are replayed after it; each carries a revision,
/// so one the VIEW already reflects is recognised and skipped. The mode is not part of VIEW:
/// it comes from SUBSCRIBE, `!mode` and `!state`, and has its own revision.
struct LiveState {
  /// One section, as LIST and VIEW describe it.
  struct Section: Equatable {
    var id: String
    var title: String
    var itemCount: Int
    var isOpen: Bool
  }

  /// What the ui must ask the daemon for to stay in line.
  enum Need: Equatable {
    /// `ITEMS <id>`: a section opened whose items are not known.
    case items(String)
    /// VIEW again: the sections themselves changed, or an event could not be placed.
    case resync
  }

  private(set) var sections: [Section] = []
  private var indexByID: [String: Int] = [:]
  /// Item texts by section id, for the sections whose items arrived since the last VIEW.
  private(set) var items: [String: [String]] = [:]
  private var itemsAsked: Set<String> = []
  private(set) var mode: Mode?
  /// The revision of the mode shown; nil when any mode heard next is to be taken (a new connection).
  private var modeRevision: UInt64?
  private var sectionRevision: UInt64 = 0
  /// False from the moment a VIEW is asked for until its reply; events wait in `waiting` meanwhile.
  private(set) var isSynced = false
  private var waiting: [Event] = []

  /// The latest revision heard of, from any reply or event.
  var revision: UInt64 { max(modeRevision ?? 0, sectionRevision) }

  func index(of id: String) -> Int? { indexByID[id] }

  /// A VIEW was sent (to resync, or on a new connection): events wait until its reply. A new
  /// connection (`afresh`) may be to a daemon that restarted with older revisions (`--no-state`):
  /// what it says next is taken whatever its revision, and events of the old connection are dropped.
  mutating func awaitView(afresh: Bool = false) {
    isSynced = false
    if afresh {
      waiting = []
      modeRevision = nil
      sectionRevision = 0
    }
  }

  /// What a new connection sends to pick up where the screen is: `SUBSCRIBE FROM` the revision
  /// it shows, so that only the changes missed come (as events), not the whole view again; nil
  /// while a VIEW was still awaited, when there is nothing to pick up from.
  var resumption: String? {
    isSynced && revision > 0 ? Subscribing.request(after: revision) : nil
  }

  /// The reply to `resumption`: true when the daemon resumed (the missed changes follow as
  /// events). Otherwise the daemon no longer keeps them, or restarted with older revisions, or
  /// predates SUBSCRIBE FROM: the state then waits for a VIEW, as on a first connection.
  mutating func resumed(_ start: Subscribing.Start) -> Bool {
    if start == .resumed { return true }
    awaitView(afresh: true)
    if case .snapshot(let snapshot) = start { subscribed(snapshot) }
    return false
  }

  /// The `state` line of the SUBSCRIBE reply.
  mutating func subscribed(_ snapshot: StateSnapshot) {
    applyMode(snapshot.mode, revision: snapshot.revision)
  }

  /// The VIEW reply: sections and the items of the open ones replace what was known; the
  /// events that waited are then replayed.
  mutating func synced(_ listed: [ListedSection], items listedItems: [ListedItem], revision: UInt64) -> [Need]
  {
    sections = listed.map { Section(id: $0.id, title: $0.title, itemCount: $0.itemCount, isOpen: $0.isOpen) }
    indexByID = Dictionary(sections.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
    let grouped = Dictionary(grouping: listedItems, by: \.sectionIndex)
    items = [:]
    for (index, section) in sections.enumerated() where section.isOpen {
      items[section.id] = (grouped[index] ?? []).sorted { $0.position < $1.position }.map(\.text)
    }
    itemsAsked = []
    sectionRevision = max(sectionRevision, revision)
    isSynced = true
    let replay = waiting
    waiting = []
    var needs: [Need] = []
    for event in replay { needs += apply(event) }
    return needs
  }

  /// The reply to `ITEMS <id>`.
  mutating func received(items texts: [String], of id: String) {
    itemsAsked.remove(id)
    guard let index = indexByID[id] else { return }
    items[id] = texts
    sections[index].itemCount = texts.count
  }

  /// An `ITEMS` request failed (the section went away meanwhile): it may be asked for again.
  mutating func itemsFailed(_ id: String) {
    itemsAsked.remove(id)
  }

  /// Applies one event and says what to ask the daemon for. `!bye` changes nothing here.
  mutating func apply(_ event: Event) -> [Need] {
    guard isSynced else {
      waiting.append(event)
      return []
    }
    switch event {
    case .opened(let revision, _, let id), .closed(let revision, _, let id):
      guard revision > sectionRevision else { return [] }
      sectionRevision = revision
      guard let index = indexByID[id] else { return [.resync] }
      let opened = if case .opened = event { true } else { false }
      sections[index].isOpen = opened
      return opened ? askItems(id) : []
    case .mode(let revision, let mode):
      applyMode(mode, revision: revision)
      return []
    case .state(let snapshot):
      applyMode(snapshot.mode, revision: snapshot.revision)
      guard snapshot.revision > sectionRevision else { return [] }
      sectionRevision = snapshot.revision
      let open = Set(snapshot.openIDs)
      guard open.allSatisfy({ indexByID[$0] != nil }) else { return [.resync] }
      var needs: [Need] = []
      for index in sections.indices {
        sections[index].isOpen = open.contains(sections[index].id)
        if sections[index].isOpen { needs += askItems(sections[index].id) }
      }
      return needs
    case .reload(let revision), .edited(_, let revision, _, _), .moved(let revision, _, _, _),
      .items(let revision, _, _, _):
      // A reload or a runtime edit changes the list itself: VIEW again (the cursor stays on its
      // section by id), unless the last VIEW already shows the change.
      return revision > sectionRevision ? [.resync] : []
    case .bye:
      return []
    case .other(let text):
      // Events this sectionctl does not know carry the revision second, as every event with a
      // revision does; one the last VIEW reflects needs nothing.
      let words = text.split(separator: " ", maxSplits: 2)
      if words.count > 1, let revision = UInt64(words[1]), revision <= sectionRevision { return [] }
      return [.resync]
    }
  }

  private mutating func applyMode(_ mode: Mode, revision: UInt64) {
    if let modeRevision, revision <= modeRevision { return }
    self.mode = mode
    modeRevision = revision
  }

  private mutating func askItems(_ id: String) -> [Need] {
    guard items[id] == nil, !itemsAsked.contains(id) else { return [] }
    itemsAsked.insert(id)
    return [.items(id)]
  }
}
