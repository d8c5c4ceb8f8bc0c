import SectionShared

/// The whole state in one line, `state <rev> <mode> <ids|->`: what SUBSCRIBE starts with and `!state` replaces events with.
public struct StateSnapshot: Equatable, Sendable {
  public let revision: UInt64
  public let mode: Mode
  /// Ids of the open sections, in list order.
  public let openIDs: [String]

  public init(revision: UInt64, mode: Mode, openIDs: [String]) {
    self.revision = revision
    self.mode = mode
    self.openIDs = openIDs
  }
}
