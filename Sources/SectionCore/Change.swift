/// One step of the state's history; each has its own revision, one more than the step before.
public enum Change: Equatable, Sendable {
  case opened(revision: UInt64, index: Int)
  case closed(revision: UInt64, index: Int)
  case mode(revision: UInt64, Mode)
  /// The sections themselves were replaced by a config reload.
  case reloaded(revision: UInt64)
}
