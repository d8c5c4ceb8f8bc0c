extension History {
  /// The history of the changes waiting for their save (one group commit), in order: each
  /// change's record (its revision, the group's time, its author, and where its event is in the
  /// group's events, the service's `pendingEvents`); `History.append(_:events:)` keeps them once
  /// they are saved.
  ///
  /// Plain values, authors aside: a change refers to its author by an index into `authors`,
  /// which holds the author of each run of one author's changes once, added when the run
  /// begins (`begin(_:)`), not looked at for each change. A reference in each change, and
  /// comparing it with the last, cost every TOGGLE retains and releases (perf).
  struct Group {
    /// When the group's changes were made, in milliseconds since the epoch: all in one loop turn.
    var time: UInt64 = 0
    private(set) var authors: [Author] = []
    private(set) var changes: [Record] = []
    /// The index in `authors` of the author of the changes added now; -1 before `begin(_:)`.
    private var current: Int32 = -1

    var isEmpty: Bool { changes.isEmpty }
    var count: Int { changes.count }

    /// Whether the next change needs `begin(_:)` first: none has been added since the group
    /// was emptied or the author changed (`authorChanged()`).
    var awaitsAuthor: Bool { current < 0 }

    /// The changes added from now on are `author`'s.
    mutating func begin(_ author: Author) {
      authors.append(author)
      current = Int32(authors.count - 1)
    }

    /// The changes added from now on are another author's, given by `begin(_:)`.
    mutating func authorChanged() { current = -1 }

    /// Adds the change of `revision`, whose event is at `events`, made by the author begun last.
    mutating func add(revision: UInt64, events: Range<Int>) {
      changes.append(Record(revision: revision, time: time, author: current, events: events))
    }

    /// Forgets the changes from the `count`th on (a request that was undone).
    mutating func removeChanges(from count: Int) {
      changes.removeSubrange(count...)
      authors.removeSubrange(Int((changes.last?.author ?? -1) + 1)...)
      current = -1
    }

    /// Forgets every change, keeping the storage of up to `bytes` of them for the next group.
    mutating func removeAll(keepingUpTo bytes: Int) {
      changes.removeAll(keepingCapacity: changes.capacity * MemoryLayout<Record>.stride <= bytes)
      authors.removeAll(keepingCapacity: authors.capacity * MemoryLayout<Author>.stride <= bytes)
      current = -1
    }
  }
}
