import SectionShared

/// What `sectionctl status` reports, gathered from VERSION, MODE and LIST.
package struct DaemonStatus: Equatable, Sendable {
  package let daemonVersion: String
  package let protocolVersion: String
  package let socket: String
  package let revision: UInt64
  package let mode: Mode
  package let sections: [ListedSection]
  /// Whose daemon the socket belongs to, as sectionctl found it.
  package var kind: SocketLocation.Kind = .given
  /// The daemon's STATUS lines: pid, uid, systemd, uptime, config, state, clients, subscribers.
  package var facts: [String: String] = [:]

  package init(
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

  package var openSections: [ListedSection] { sections.filter(\.isOpen) }
  package var itemCount: Int { sections.reduce(0) { $0 + $1.itemCount } }
  /// Items an accordion shows: those of open sections.
  package var visibleItemCount: Int { openSections.reduce(0) { $0 + $1.itemCount } }
}
