import SectionShared
/// Undoing changes that were not saved (a failed save) or that a batch must take back (one of
/// its lines failed), at the cost of what they changed.
///
/// Keeping a copy of the model to restore would be simpler, but the first change after the
/// copy then copies every section (and every item of an edited section) to keep the copy
/// intact: with 1,000 sections of 100 items that made an ITEM INSERT cost 20 µs of the
/// daemon's CPU instead of 3.
extension SectionModel {
  /// The parts of the model that are small, as they were at one moment: restored whole. The
  /// sections and their open state are restored by undoing the changes since, so that taking
  /// a checkpoint before every change copies nothing the size of the list.
  public struct Checkpoint: Sendable {
    let mode: Mode
    let revision: UInt64
    let deleted: Set<String>
    let edited: Set<String>
    let itemCount: Int
    let textBytes: Int
  }

  public var checkpoint: Checkpoint {
    Checkpoint(
      mode: mode, revision: revision, deleted: deletedConfigIDs, edited: editedConfigIDs,
      itemCount: itemCount,
      textBytes: textBytes)
  }

  /// Goes back to `checkpoint` by undoing `changes`, every change made since it, newest last.
  /// A reload that replaced the sections cannot be undone this way (the caller keeps a copy of
  /// the model for it); one that only announces sections changed across a restart
  /// (`markReloaded`) can.
  public mutating func restore(
    _ checkpoint: Checkpoint, undoing changes: some BidirectionalCollection<Change>
  ) {
    for change in changes.reversed() { undo(change) }
    mode = checkpoint.mode
    revision = checkpoint.revision
    deletedConfigIDs = checkpoint.deleted
    editedConfigIDs = checkpoint.edited
    itemCount = checkpoint.itemCount
    textBytes = checkpoint.textBytes
  }

  /// Undoes what `change` did to the sections and their open state (the rest comes back with
  /// the checkpoint).
  private mutating func undo(_ change: Change) {
    switch change {
    case .mode, .reloaded: break
    case .opened(_, let index): openedAt[index] = nil
    case .closed(_, let index, let openSince): openedAt[index] = openSince
    case .inserted(_, let index, let section):
      sections.remove(at: index)
      openedAt.remove(at: index)
      sectionIDs.remove(section.id)
    case .deleted(_, let index, let section, let openSince):
      sections.insert(section, at: index)
      openedAt.insert(openSince, at: index)
      sectionIDs.insert(section.id)
    case .moved(_, let from, let to, _):
      sections.insert(sections.remove(at: to), at: from)
      openedAt.insert(openedAt.remove(at: to), at: from)
    case .renamed(_, let index, _, _, let previous): sections[index].title = previous
    case .items(_, let index, _, let edit, _, let previous):
      switch edit {
      case .insert(let position, _): sections[index].items.remove(at: position)
      case .delete(let position): sections[index].items.insert(previous!, at: position)
      case .move(let from, let to):
        sections[index].items.insert(sections[index].items.remove(at: to), at: from)
      case .set(let position, _): sections[index].items[position] = previous!
      }
    }
  }
}
