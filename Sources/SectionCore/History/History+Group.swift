extension History {
  /// The history of the changes waiting for their save (one group commit), in order: each
  /// change's revision, its author, and where its event is in the group's events (the service's
  /// `pendingEvents`); `History.append(_:events:)` keeps them once they are saved.
  ///
  /// Plain values, authors aside: a change refers to its author by an index into `authors`,
  /// which holds each run of one author's changes' author once. A reference in each change cost
  /// every TOGGLE a retain and a release when it was kept and again when it was forgotten (perf).
  struct Group {
    /// When the group's changes were made, in milliseconds since the epoch: all in one loop turn.
    var time: UInt64 = 0
    private(set) var authors: [Author] = []
    private(set) var changes: [Entry] = []

    struct Entry {
      let revision: UInt64
      /// Its index in `authors`.
      let author: Int32
      let events: Range<Int>
    }

    var isEmpty: Bool { changes.isEmpty }
    var count: Int { changes.count }

    /// Adds the change of `revision` made by `author`, whose event is at `events`.
    mutating func add(revision: UInt64, by author: Author, events: Range<Int>) {
      if authors.isEmpty || authors[authors.count - 1] !== author { authors.append(author) }
      changes.append(Entry(revision: revision, author: Int32(authors.count - 1), events: events))
    }

    /// Forgets the changes from the `count`th on (a request that was undone).
    mutating func removeChanges(from count: Int) {
      changes.removeSubrange(count...)
      authors.removeSubrange(Int((changes.last?.author ?? -1) + 1)...)
    }

    /// Forgets every change, keeping the storage of up to `bytes` of them for the next group.
    mutating func removeAll(keepingUpTo bytes: Int) {
      changes.removeAll(keepingCapacity: changes.capacity * MemoryLayout<Entry>.stride <= bytes)
      authors.removeAll(keepingCapacity: authors.capacity * MemoryLayout<Author>.stride <= bytes)
    }
  }
}
