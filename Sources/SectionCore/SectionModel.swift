/// Which sections are open, the mode, and the revision: the state sectiond exists to share.
///
/// A value type: a copy (what a reload's rollback keeps) is independent of the model. Other
/// rollbacks undo the changes one by one (`restore`), which costs what they changed.
public struct SectionModel: Equatable, Sendable {
  public internal(set) var sections: [Section]
  public internal(set) var mode: Mode
  /// Grows by one for every section that opens or closes, every mode change and every edit.
  public internal(set) var revision: UInt64
  /// For each section, the revision at which it was opened, or nil while it is closed.
  /// The highest is the most recently opened, which survives a switch to exclusive mode.
  public internal(set) var openedAt: [UInt64?]
  /// Ids of config sections that clients deleted, so that a reload does not bring them back.
  public internal(set) var deletedConfigIDs: Set<String> = []
  /// Ids of config sections that clients renamed, moved or changed the items of: a reload
  /// leaves them as they are.
  public internal(set) var editedConfigIDs: Set<String> = []
  /// Items of all sections together, checked against `EditLimits.items`.
  public internal(set) var itemCount = 0

  /// The sections of `config` (merged with clients' edits that `saved` holds, see `merged`) in
  /// the states `saved` remembers for them (by id); sections the saved state does not know
  /// start as configured. Exclusive mode keeps only the most recent.
  public init(config: Config, saved: SavedState? = nil) {
    sections = config.sections
    if let saved, let list = saved.list {
      (sections, deletedConfigIDs, editedConfigIDs) = SectionModel.merged(
        list, deleted: saved.deleted, edited: saved.edited, with: config.sections)
    }
    mode = saved?.mode ?? config.mode
    revision = saved?.revision ?? 0
    openedAt = sections.map { section in
      if let saved, let known = saved.sections[section.id] { return known }
      return section.initiallyOpen ? 0 : nil
    }
    if mode == .exclusive, let keep = mostRecentlyOpened {
      for index in openedAt.indices where index != keep { openedAt[index] = nil }
    }
    itemCount = SectionModel.countItems(sections)
  }

  public func isOpen(_ index: Int) -> Bool { openedAt[index] != nil }

  public var openIndices: [Int] { openedAt.indices.filter { openedAt[$0] != nil } }

  /// The index of the section with id `id`.
  /// A scan of the list comparing hashes first, so that most sections cost one comparison.
  public func index(ofID id: some Collection<UInt8>) -> Int? {
    let hash = Section.hash(id)
    return sections.firstIndex { $0.idHash == hash && $0.id.utf8.elementsEqual(id) }
  }

  private var mostRecentlyOpened: Int? {
    openedAt.indices.filter { openedAt[$0] != nil }.max { openedAt[$0]! < openedAt[$1]! }
  }

  // MARK: Changes. Each appends what happened to `changes`; doing nothing appends nothing.

  public mutating func open(_ index: Int, changes: inout [Change]) {
    guard openedAt[index] == nil else { return }
    if mode == .exclusive {
      for other in openedAt.indices where openedAt[other] != nil { close(other, changes: &changes) }
    }
    revision += 1
    openedAt[index] = revision
    changes.append(.opened(revision: revision, index: index))
  }

  public mutating func close(_ index: Int, changes: inout [Change]) {
    guard openedAt[index] != nil else { return }
    revision += 1
    openedAt[index] = nil
    changes.append(.closed(revision: revision, index: index))
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
      for index in openedAt.indices where index != keep { close(index, changes: &changes) }
    }
    revision += 1
    mode = newMode
    changes.append(.mode(revision: revision, newMode))
  }

  /// Replaces the sections with those of a reloaded config, merged with clients' edits (see
  /// `merged`), keeping each surviving section's state by id. Counts as one change when the
  /// list of sections differs at all.
  public mutating func reload(_ config: Config, changes: inout [Change]) {
    let previous = Dictionary(uniqueKeysWithValues: zip(sections.map(\.id), openedAt))
    let (merged, deleted, edited) = SectionModel.merged(
      sections, deleted: deletedConfigIDs, edited: editedConfigIDs, with: config.sections)
    deletedConfigIDs = deleted
    editedConfigIDs = edited
    var newOpenedAt = merged.map { section in
      previous[section.id] ?? (section.initiallyOpen ? revision : nil)
    }
    if mode == .exclusive {
      let open = newOpenedAt.indices.filter { newOpenedAt[$0] != nil }
      if let keep = open.max(by: { newOpenedAt[$0]! < newOpenedAt[$1]! }) {
        for index in open where index != keep { newOpenedAt[index] = nil }
      }
    }
    guard merged != sections || newOpenedAt != openedAt else { return }
    sections = merged
    openedAt = newOpenedAt
    itemCount = SectionModel.countItems(sections)
    revision += 1
    changes.append(.reloaded(revision: revision))
  }
}
