/// What LIST and VIEW return: the sections in order (and, for VIEW, the items of the open
/// ones), as of `revision`.
public struct Listing: Equatable, Sendable {
  public var sections: [ListedSection]
  public var items: [ListedItem]
  public var revision: UInt64

  public init(sections: [ListedSection], items: [ListedItem], revision: UInt64) {
    self.sections = sections
    self.items = items
    self.revision = revision
  }
}

/// What VERSION returns.
public struct DaemonVersion: Equatable, Sendable {
  public var daemon: String
  public var protocolVersion: String

  public init(daemon: String, protocolVersion: String) {
    self.daemon = daemon
    self.protocolVersion = protocolVersion
  }
}
