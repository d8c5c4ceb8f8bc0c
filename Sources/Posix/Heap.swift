import CShim

/// The process's heap, as glibc's malloc keeps it.
public enum Heap {
  /// Gives the free memory of the heap back to the system (malloc_trim(0)). glibc keeps what
  /// was freed for reuse: after a burst of clients whose buffers came from the heap, the
  /// process stays at its peak though nothing is in use (465 MB kept after 900
  /// clients flooding LIST had gone, measured). Costs a walk over the free memory: call it after a
  /// burst, not after each free. Returns whether any memory was given back.
  @discardableResult
  public static func giveBack() -> Bool {
    cshim_malloc_trim() == 1
  }
}
