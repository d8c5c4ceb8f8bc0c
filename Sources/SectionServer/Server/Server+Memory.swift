import Posix

/// Memory given back after a burst of clients, so that a daemon's RSS falls back once they leave: their buffers, freed on
/// close, stay with the process otherwise (glibc keeps freed heap memory for reuse: 900
/// read-only clients flooding LIST left a fresh 8 MB daemon at 465 MB once they were gone).
extension Server {
  /// Closed connections since the heap was last given back that start a trim.
  static let closedBeforeTrim = 64
  /// How long after the burst's `closedBeforeTrim`-th close the trim comes: the rest of a
  /// burst closes meanwhile, and one walk over the heap gives back what all of them freed.
  static let trimDelay: UInt64 = 1_000_000

  /// A connection was closed: after a burst of them, the heap is trimmed once, a moment later.
  func noteClosed() {
    closedSinceTrim += 1
    guard closedSinceTrim == Server.closedBeforeTrim else { return }
    trimTimer = trimTimer ?? (try? loop.timer(after: Server.trimDelay) { [unowned self] in self.trimHeap() })
    trimTimer?.rearm(after: Server.trimDelay)
  }

  private func trimHeap() {
    closedSinceTrim = 0
    Heap.giveBack()
  }
}
