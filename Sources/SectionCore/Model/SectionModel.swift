import SectionShared
/// Which sections are open, the mode, and the revision: the state sectiond exists to share.
///
/// A value type: a copy (what a reload's rollback keeps) is independent of the model. Other
/// rollbacks undo the changes one by one (`restore`), which costs what they changed.
public struct SectionModel: Equatable, Sendable {
  /// Chunked, so that an edit anywhere in a long list costs what it changed (see `ChunkedArray`).
  public internal(set) var sections: ChunkedArray<Section>
  public internal(set) var mode: Mode
  /// Grows by one for every section that opens or closes, every mode change and every edit;
  /// never past `maxRevision`.
  public internal(set) var revision: UInt64
  /// The highest revision there can be: the state file's reader takes whole numbers up to
  /// Int64.max, and a file the daemon could not read back would lose the state.
  public static let maxRevision = UInt64(Int64.max)
  /// For each section, the revision at which it was opened, or nil while it is closed.
  /// The highest is the most recently opened, which survives a switch to exclusive mode.
  public internal(set) var openedAt: ChunkedArray<UInt64?>
  /// Ids of config sections that clients deleted, so that a reload does not bring them back.
  public internal(set) var deletedConfigIDs: Set<String> = []
  /// Ids of config sections that clients renamed, moved or changed the items of: a reload
  /// leaves them as they are.
  public internal(set) var editedConfigIDs: Set<String> = []
  /// Items of all sections together, checked against `EditLimits.items`.
  public internal(set) var itemCount = 0
  /// Bytes of text of all sections together (`Section.textBytes`), checked against
  /// `EditLimits.textBytes`.
  public internal(set) var textBytes = 0
  /// The ids of `sections`, so that an INSERT checks its id is new without a scan of the list.
  var sectionIDs: Set<String> = []

  /// The sections of `config` (merged with clients' edits that `saved` holds, see `merged`) in
  /// the states `saved` remembers for them (by id). Sections the saved state does not know
  /// start as configured (see `arrange`); when the config opens one of them on top of a saved
  /// state, that opening is a change and takes one revision, so it counts as more recent than
  /// anything saved, unless the revision is at its limit, when they stay closed. Exclusive
  /// mode keeps only the most recent.
  public init(config: Config, saved: SavedState? = nil) {
    var sections = config.sections
    if let saved, let list = saved.list {
      (sections, deletedConfigIDs, editedConfigIDs) = SectionModel.merged(
        list, deleted: saved.deleted, edited: saved.edited, with: config.sections)
    }
    self.sections = ChunkedArray(sections)
    mode = saved?.mode ?? config.mode
    revision = saved?.revision ?? 0
    let room = SectionModel.hasRoom(at: revision, sections: sections.count)
    let opening: UInt64? = saved == nil ? 0 : room ? revision + 1 : nil
    let (arranged, opened) = SectionModel.arrange(
      sections, mode: mode, at: opening, known: { saved?.sections[$0] })
    openedAt = ChunkedArray(arranged)
    if opened, saved != nil, let opening { revision = opening }
    summarizeSections()
  }

  /// Whether any one request's changes stay within `maxRevision`. A request takes at most one
  /// revision per section (OPEN ALL, CLOSE ALL, a switch to exclusive) and a reload one, so room
  /// for one more than the section count always suffices.
  public var hasRoomForAChange: Bool { SectionModel.hasRoom(at: revision, sections: sections.count) }

  private static func hasRoom(at revision: UInt64, sections count: Int) -> Bool {
    revision < maxRevision - UInt64(count)
  }

  public func isOpen(_ index: Int) -> Bool { openedAt[index] != nil }

  public var openIndices: [Int] { openedAt.positions { $0 != nil } }

  /// The index of the section with id `id`.
  /// A scan of the list comparing hashes first, so that most sections cost one comparison.
  public func index(ofID id: some Collection<UInt8>) -> Int? {
    let hash = Section.hash(id)
    return sections.firstIndex { $0.idHash == hash && $0.id.utf8.elementsEqual(id) }
  }

  /// The open section opened last; among sections opened together (by one reload, or all
  /// configured open at revision 0), the first in list order.
  private var mostRecentlyOpened: Int? { SectionModel.mostRecent(in: openedAt) }

  private static func mostRecent(in openedAt: some Sequence<UInt64?>) -> Int? {
    var latest: (index: Int, revision: UInt64)?
    // Only a later opening replaces the one kept, which gives the list-order tie-break.
    for case (let index, let revision?) in openedAt.enumerated() {
      if let latest, latest.revision >= revision { continue }
      latest = (index, revision)
    }
    return latest?.index
  }

  /// The open state of `sections`: what `known` says for the ids it knows; for the rest, the
  /// config's `open`, as opened at revision `opening` (closed when that is nil). In exclusive
  /// mode a configured section never displaces one that is known open: it opens only when
  /// none is, and then only the first such in list order. Also says whether any opened.
  private static func arrange(
    _ sections: some Sequence<Section>, mode: Mode, at opening: UInt64?, known: (String) -> UInt64??
  ) -> (openedAt: [UInt64?], opened: Bool) {
    var openedAt: [UInt64?] = []
    var configured: [Int] = []
    for (index, section) in sections.enumerated() {
      if let state = known(section.id) {
        openedAt.append(state)
      } else {
        openedAt.append(nil)
        if section.initiallyOpen { configured.append(index) }
      }
    }
    if opening == nil { configured = [] }
    if mode == .exclusive {
      if let keep = mostRecent(in: openedAt) {
        for index in openedAt.indices where index != keep { openedAt[index] = nil }
        configured = []
      }
      configured = Array(configured.prefix(1))
    }
    for index in configured { openedAt[index] = opening }
    return (openedAt, !configured.isEmpty)
  }

  // MARK: Changes. Each appends what happened to `changes`; doing nothing appends nothing.

  public mutating func open(_ index: Int, changes: inout [Change]) {
    guard openedAt[index] == nil else { return }
    if mode == .exclusive {
      for other in openIndices { close(other, changes: &changes) }
    }
    revision += 1
    openedAt[index] = revision
    changes.append(.opened(revision: revision, index: index))
  }

  public mutating func close(_ index: Int, changes: inout [Change]) {
    guard let openSince = openedAt[index] else { return }
    revision += 1
    openedAt[index] = nil
    changes.append(.closed(revision: revision, index: index, openSince: openSince))
  }

  public mutating func toggle(_ index: Int, changes: inout [Change]) {
    if isOpen(index) { close(index, changes: &changes) } else { open(index, changes: &changes) }
  }

  /// Opens every section; only meaningful, and only allowed, in multi mode.
  public mutating func openAll(changes: inout [Change]) {
    precondition(mode == .multi, "openAll in exclusive mode")
    for index in openedAt.indices { open(index, changes: &changes) }
  }

  public mutating func closeAll(changes: inout [Change]) {
    for index in openedAt.indices { close(index, changes: &changes) }
  }

  /// Switches mode. Into exclusive, every section but the most recently opened closes first,
  /// so that no client ever sees exclusive mode with two sections open.
  public mutating func setMode(_ newMode: Mode, changes: inout [Change]) {
    guard newMode != mode else { return }
    if newMode == .exclusive, let keep = mostRecentlyOpened {
      for index in openIndices where index != keep { close(index, changes: &changes) }
    }
    revision += 1
    mode = newMode
    changes.append(.mode(revision: revision, newMode))
  }

  /// Replaces the sections with those of a reloaded config, merged with clients' edits (see
  /// `merged`), keeping each surviving section's state by id. Counts as one change when the
  /// list of sections differs at all. `dropsEdits` (RELOAD FRESH): the config's list as it is,
  /// as if no client had edited anything, which counts as a change whenever there were edits.
  public mutating func reload(_ config: Config, dropsEdits: Bool = false, changes: inout [Change]) {
    let previous = Dictionary(uniqueKeysWithValues: zip(sections.map(\.id), openedAt))
    let hadEdits =
      dropsEdits
      && (!deletedConfigIDs.isEmpty || !editedConfigIDs.isEmpty || sections.contains { $0.origin == .client })
    let (merged, deleted, edited) =
      dropsEdits
      ? (config.sections, [], [])
      : SectionModel.merged(
        sections, deleted: deletedConfigIDs, edited: editedConfigIDs, with: config.sections)
    deletedConfigIDs = deleted
    editedConfigIDs = edited
    let (newOpenedAt, _) = SectionModel.arrange(
      merged, mode: mode, at: revision + 1, known: { previous[$0] })
    guard hadEdits || !merged.elementsEqual(sections) || !newOpenedAt.elementsEqual(openedAt) else { return }
    sections = ChunkedArray(merged)
    openedAt = ChunkedArray(newOpenedAt)
    summarizeSections()
    revision += 1
    changes.append(.reloaded(revision: revision))
  }

  /// The sections changed while no process served them (the config was edited across a
  /// planned restart): one change, as a reload that finds other sections is.
  public mutating func markReloaded(changes: inout [Change]) {
    revision += 1
    changes.append(.reloaded(revision: revision))
  }
}
