import SectionShared
/// One step of the state's history; each has its own revision, one more than the step before.
///
/// Each carries what a replay of the journal needs to repeat it (see `Journal`), what its
/// event shows, as it was at that step (later steps of the same batch may move things again),
/// and what undoing it needs (`SectionModel.undo`): a failed save or batch is undone change by
/// change, at the cost of what changed, rather than by keeping a copy of the whole list.
public enum Change: Equatable, Sendable {
  case opened(revision: UInt64, index: Int)
  /// `openSince` is the revision the section had been opened at.
  case closed(revision: UInt64, index: Int, openSince: UInt64)
  case mode(revision: UInt64, Mode)
  /// The sections themselves were replaced by a config reload.
  case reloaded(revision: UInt64)
  /// A client inserted `section` (closed) at `index`.
  case inserted(revision: UInt64, index: Int, section: Section)
  /// The section at `index` was deleted; `section` is what it was, `openSince` the revision it
  /// had been opened at (nil when it was closed).
  case deleted(revision: UInt64, index: Int, section: Section, openSince: UInt64?)
  case moved(revision: UInt64, from: Int, to: Int, id: String)
  case renamed(revision: UInt64, index: Int, id: String, title: String, previous: String)
  /// One item of the section at `index` changed; `count` is its number of items after, and
  /// `previous` the text a delete or set replaced.
  case items(revision: UInt64, index: Int, id: String, edit: ItemEdit, count: Int, previous: String?)

  public var revision: UInt64 {
    switch self {
    case .opened(let revision, _), .closed(let revision, _, _), .mode(let revision, _),
      .reloaded(let revision),
      .inserted(let revision, _, _), .deleted(let revision, _, _, _), .moved(let revision, _, _, _),
      .renamed(let revision, _, _, _, _), .items(let revision, _, _, _, _, _):
      revision
    }
  }

  /// The id of the section the change names, where the change holds it: nil for a mode switch,
  /// a reload, and an open or close, which hold the section's index only (a TOGGLE costs no
  /// copy of the id: `SavedGroup.sectionIDs` finds it when a consumer asks).
  public var sectionID: String? {
    switch self {
    case .opened, .closed, .mode, .reloaded: nil
    case .inserted(_, _, let section), .deleted(_, _, let section, _): section.id
    case .moved(_, _, _, let id), .renamed(_, _, let id, _, _), .items(_, _, let id, _, _, _): id
    }
  }
}

/// One change to a section's items, positions counted before it.
public enum ItemEdit: Equatable, Sendable {
  case insert(at: Int, text: String)
  case delete(at: Int)
  case move(from: Int, to: Int)
  case set(at: Int, text: String)
}
