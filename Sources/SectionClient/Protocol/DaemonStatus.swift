import SectionCore

/// What `sectionctl status` reports, gathered from VERSION, MODE and LIST.
public struct DaemonStatus: Equatable, Sendable {
  public let daemonVersion: String
  public let protocolVersion: String
  public let socket: String
  public let revision: UInt64
  public let mode: Mode
  public let sections: [ListedSection]
  /// Whose daemon the socket belongs to, as sectionctl found it.
  public var kind: SocketLocation.Kind = .given
  /// The daemon's STATUS lines: pid, uid, systemd, uptime, config, state, clients, subscribers.
  public var facts: [String: String] = [:]

  public init(
    daemonVersion: String, protocolVersion: String, socket: String, revision: UInt64, mode: Mode,
    sections: [ListedSection], kind: SocketLocation.Kind = .given, facts: [String: String] = [:]
  ) {
    self.daemonVersion = daemonVersion
    self.protocolVersion = protocolVersion
    self.socket = socket
    self.revision = revision
    self.mode = mode
    self.sections = sections
    self.kind = kind
    self.facts = facts
  }

  public var openSections: [ListedSection] { sections.filter(\.isOpen) }
  public var itemCount: Int { sections.reduce(0) { $0 + $1.itemCount } }
  /// Items an accordion shows: those of open sections.
  public var visibleItemCount: Int { openSections.reduce(0) { $0 + $1.itemCount } }
}
