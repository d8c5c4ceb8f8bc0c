/// How far clients may grow the list, and how much one request may do; each is a sectiond
/// flag. Going past one is `ERR LIMIT`, with nothing applied.
public struct EditLimits: Equatable, Sendable {
  public var sections = 10_000
  public var itemsPerSection = 10_000
  public var items = 1_000_000
  public var batchLines = 10_000
  /// Bytes of text (ids, titles and items) in the whole list. This is what bounds the state
  /// file (about twice the text at most, a `"` costing two bytes in JSON: see
  /// `SavedState.maximumSize`), and so what a start must read back and how long that takes:
  /// the other limits alone allowed a gigabyte that the daemon then refused to read.
  public var textBytes = 16 << 20
  /// Changes one request may make (OPEN ALL on 10,000 sections is 10,000; a BATCH is the sum
  /// of its lines). One loop turn does at most about twice this (see `SectionService.change`),
  /// so this is what bounds a turn: 100,000 OPEN/CLOSE changes take about 0.1 s of the release
  /// daemon here, where 10^7 took 7.5 s and 2 GB. At least `sections` + 1, so that OPEN ALL
  /// and a switch of mode always fit.
  public var requestChanges = 100_000
  /// Whether titles and items may hold bidirectional controls (see `Section.textProblem`):
  /// only when replaying a journal, which may hold text accepted before they were refused.
  var acceptsBidiControls = false

  public init() {}

  /// No limits: for replaying the journal, which holds only edits that were within them.
  static let none = EditLimits(
    sections: .max, itemsPerSection: .max, items: .max, batchLines: .max, textBytes: .max,
    requestChanges: .max)

  init(sections: Int, itemsPerSection: Int, items: Int, batchLines: Int, textBytes: Int, requestChanges: Int)
  {
    acceptsBidiControls = true
    self.sections = sections
    self.itemsPerSection = itemsPerSection
    self.items = items
    self.batchLines = batchLines
    self.textBytes = textBytes
    self.requestChanges = requestChanges
  }

  /// Refuses what one request has changed so far (`count` changes, up to `revision`) when it
  /// is more than a request may change, or takes the revision past the highest the state file
  /// can hold: a BATCH makes more changes than `SectionModel.hasRoomForAChange` allows for, one
  /// a line and up to one a section for each OPEN ALL in it. The caller undoes the changes.
  func checkRequest(_ count: Int, revision: UInt64) throws(ProtocolError) {
    if revision > SectionModel.maxRevision { throw ProtocolError.revisionsExhausted }
    guard count > requestChanges else { return }
    throw ProtocolError(
      .limit,
      "changes: at most \(requestChanges) in one request (sectiond --max-request-changes); nothing was applied"
    )
  }

  /// `ERR LIMIT` for an edit that would take the list's text to `total` bytes.
  func checkText(growingTo total: Int) throws(ProtocolError) {
    guard total > textBytes else { return }
    throw ProtocolError(
      .limit,
      "text: at most \(textBytes) bytes of ids, titles and items in all (sectiond --max-text-bytes); this would make \(total)"
    )
  }
}

/// Runtime edits: the list shaped by clients. Each checks everything before it changes
/// anything, so a refused edit leaves the model as it was; doing nothing appends no change.
extension SectionModel {
  /// Inserts a new, closed section with no items at `index` (0 through the count).
  public mutating func insert(
    id: String, title: String, at index: Int, limits: EditLimits, changes: inout [Change]
  ) throws(ProtocolError) {
    guard index <= sections.count else {
      throw ProtocolError(
        .range,
        "index \(index) is past the end: there are \(sections.count) sections; use 0-\(sections.count) or end"
      )
    }
    guard sections.count < limits.sections else {
      throw ProtocolError(.limit, "sections: at most \(limits.sections) (sectiond --max-sections)")
    }
    if let problem = Section.idProblem(id) { throw ProtocolError(.syntax, "id \(problem)") }
    if sectionIDs.contains(id), let other = self.index(ofID: id.utf8) {
      throw ProtocolError(.exists, "id \"\(id)\" is already used by section \(other); ids must be unique")
    }
    try checkText(title, "title", limits)
    let grown = textBytes + id.utf8.count + title.utf8.count
    try limits.checkText(growingTo: grown)
    let section = Section(id: id, title: title, items: [], origin: .client)
    revision += 1
    sections.insert(section, at: index)
    openedAt.insert(nil, at: index)
    sectionIDs.insert(id)
    textBytes = grown
    changes.append(.inserted(revision: revision, index: index, section: section))
  }

  /// Removes the section at `index`; a config section is remembered so that reloads keep it gone.
  public mutating func delete(_ index: Int, changes: inout [Change]) {
    let section = sections.remove(at: index)
    let openSince = openedAt.remove(at: index)
    sectionIDs.remove(section.id)
    itemCount -= section.items.count
    textBytes -= section.textBytes
    if section.origin == .config {
      deletedConfigIDs.insert(section.id)
      editedConfigIDs.remove(section.id)
    }
    revision += 1
    changes.append(.deleted(revision: revision, index: index, section: section, openSince: openSince))
  }

  /// Moves the section at `from` to `to` (an index of the list as it is).
  public mutating func move(_ from: Int, to: Int, changes: inout [Change]) throws(ProtocolError) {
    guard to < sections.count else {
      throw ProtocolError(
        .range, "index \(to) is past the end: there are \(sections.count) sections (0-\(sections.count - 1))")
    }
    guard from != to else { return }
    let section = sections.remove(at: from)
    sections.insert(section, at: to)
    openedAt.insert(openedAt.remove(at: from), at: to)
    markEdited(to)
    revision += 1
    changes.append(.moved(revision: revision, from: from, to: to, id: section.id))
  }

  public mutating func rename(
    _ index: Int, to title: String, limits: EditLimits, changes: inout [Change]
  ) throws(ProtocolError) {
    try checkText(title, "title", limits)
    let previous = sections[index].title
    guard previous != title else { return }
    let grown = textBytes - previous.utf8.count + title.utf8.count
    try limits.checkText(growingTo: grown)
    sections[index].title = title
    textBytes = grown
    markEdited(index)
    revision += 1
    changes.append(
      .renamed(revision: revision, index: index, id: sections[index].id, title: title, previous: previous))
  }

  /// Changes one item of the section at `index`.
  public mutating func editItems(
    _ index: Int, _ edit: ItemEdit, limits: EditLimits, changes: inout [Change]
  ) throws(ProtocolError) {
    let count = sections[index].items.count
    var previous: String?
    func check(_ position: Int, below end: Int) throws(ProtocolError) {
      guard position < end else {
        let valid = end == 0 ? "it has none" : "use 0-\(end - 1)\(end > count ? " or end" : "")"
        throw ProtocolError(
          .noItem, "no item \(position) in section \"\(sections[index].id)\": it has \(count) items; \(valid)"
        )
      }
    }
    switch edit {
    case .insert(let position, let text):
      try check(position, below: count + 1)
      guard count < limits.itemsPerSection else {
        throw ProtocolError(
          .limit, "items per section: at most \(limits.itemsPerSection) (sectiond --max-section-items)")
      }
      guard itemCount < limits.items else {
        throw ProtocolError(.limit, "items: at most \(limits.items) in all (sectiond --max-items)")
      }
      try checkText(text, "item", limits)
      try limits.checkText(growingTo: textBytes + text.utf8.count)
      sections[index].items.insert(text, at: position)
      itemCount += 1
      textBytes += text.utf8.count
    case .delete(let position):
      try check(position, below: count)
      previous = sections[index].items.remove(at: position)
      itemCount -= 1
      textBytes -= previous!.utf8.count
    case .move(let from, let to):
      try check(from, below: count)
      try check(to, below: count)
      guard from != to else { return }
      sections[index].items.insert(sections[index].items.remove(at: from), at: to)
    case .set(let position, let text):
      try check(position, below: count)
      try checkText(text, "item", limits)
      guard sections[index].items[position] != text else { return }
      let replaced = sections[index].items[position]
      let grown = textBytes - replaced.utf8.count + text.utf8.count
      try limits.checkText(growingTo: grown)
      previous = replaced
      sections[index].items[position] = text
      textBytes = grown
    }
    markEdited(index)
    revision += 1
    changes.append(
      .items(
        revision: revision, index: index, id: sections[index].id, edit: edit,
        count: sections[index].items.count, previous: previous))
  }

  private func checkText(_ text: String, _ what: String, _ limits: EditLimits) throws(ProtocolError) {
    if let problem = Section.textProblem(text, allowingBidi: limits.acceptsBidiControls) {
      throw ProtocolError(.syntax, "\(what) \(problem)")
    }
  }

  private mutating func markEdited(_ index: Int) {
    if sections[index].origin == .config { editedConfigIDs.insert(sections[index].id) }
  }

  // MARK: The config and clients' edits

  /// The list a config reload (or a start with a changed config) leads to, from the list as it
  /// is, the ids of config sections clients deleted, and the config's sections. Clients' edits
  /// win, and nothing a client did is dropped:
  /// - the config's sections no client touched come as the config has them, in its order;
  ///   those it no longer lists go;
  /// - a config section a client deleted stays deleted while the config lists it;
  /// - a section a client inserted, and a config section a client renamed, moved or changed
  ///   the items of, stays as it is, after the section it follows now (at the start when none
  ///   does), even when the config no longer lists it.
  /// With no edits, the result is the config's list, as it was before runtime edits.
  /// Returns the new list, and the deleted and edited ids the config still lists.
  static func merged(
    _ current: some Collection<Section>, deleted: Set<String>, edited: Set<String>, with config: [Section]
  ) -> ([Section], Set<String>, Set<String>) {
    let configIDs = Set(config.map(\.id))
    func pinned(_ section: Section) -> Bool { section.origin == .client || edited.contains(section.id) }
    let pinnedIDs = Set(current.lazy.filter(pinned).map(\.id))
    let base = config.filter { !pinnedIDs.contains($0.id) && !deleted.contains($0.id) }
    // Each pinned section goes after the nearest section before it that stays.
    let staying = pinnedIDs.union(base.map(\.id))
    var followers: [String: [Section]] = [:]
    var atStart: [Section] = []
    var anchor: String?
    for section in current {
      if pinned(section) {
        if let anchor { followers[anchor, default: []].append(section) } else { atStart.append(section) }
      }
      if staying.contains(section.id) { anchor = section.id }
    }
    var result: [Section] = []
    result.reserveCapacity(base.count + pinnedIDs.count)
    func emit(_ section: Section) {
      result.append(section)
      for follower in followers[section.id] ?? [] { emit(follower) }
    }
    for section in atStart { emit(section) }
    for section in base { emit(section) }
    return (result, deleted.filter { configIDs.contains($0) }, edited.filter { pinnedIDs.contains($0) })
  }

  /// Derives what the model keeps about the whole list (the item count, the text, the ids)
  /// once the list has been replaced; edits keep them up to date themselves.
  mutating func summarizeSections() {
    itemCount = sections.reduce(0) { $0 + $1.items.count }
    textBytes = sections.reduce(0) { $0 + $1.textBytes }
    sectionIDs = Set(sections.lazy.map(\.id))
  }

  // MARK: Replay

  /// Repeats a change read back from the journal, checking that it leads where it did then
  /// (the same journal line; what undoing needs is not in the journal).
  /// Throws when it does not apply (a journal of another list, or a damaged one).
  public mutating func replay(_ change: Change) throws(ProtocolError) {
    var produced: [Change] = []
    try replay(change, into: &produced)
  }

  /// `replay(_:)`, appending the change as made here (with what undoing it needs) to `changes`:
  /// for a group another host committed, applied as this host's own changes are.
  mutating func replay(_ change: Change, into produced: inout [Change]) throws(ProtocolError) {
    let start = produced.count
    func index(_ index: Int) throws(ProtocolError) -> Int {
      guard sections.indices.contains(index) else { throw ProtocolError(.internal, "no section \(index)") }
      return index
    }
    switch change {
    case .opened(_, let at): open(try index(at), changes: &produced)
    case .closed(_, let at, _): close(try index(at), changes: &produced)
    case .mode(_, let newMode): setMode(newMode, changes: &produced)
    case .reloaded: throw ProtocolError(.internal, "a reload is saved as a whole state, never journaled")
    case .inserted(_, let at, let section):
      try insert(id: section.id, title: section.title, at: at, limits: .none, changes: &produced)
    case .deleted(_, let at, _, _): delete(try index(at), changes: &produced)
    case .moved(_, let from, let to, _): try move(try index(from), to: to, changes: &produced)
    case .renamed(_, let at, _, let title, _):
      try rename(try index(at), to: title, limits: .none, changes: &produced)
    case .items(_, let at, _, let edit, _, _):
      try editItems(try index(at), edit, limits: .none, changes: &produced)
    }
    guard produced.count == start + 1, Journal.line(produced[start]) == Journal.line(change) else {
      throw ProtocolError(.internal, "change at revision \(change.revision) does not repeat")
    }
  }
}
