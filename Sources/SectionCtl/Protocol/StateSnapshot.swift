import SectionCore

/// The whole state in one line, `state <rev> <mode> <ids|->`: what SUBSCRIBE starts with and `!state` replaces events with.
struct StateSnapshot: Equatable, Sendable {
  let revision: UInt64
  let mode: Mode
  /// Ids of the open sections, in list order.
  let openIDs: [String]
}
