import SectionClient

/// What `sectionctl status` and `lists` report, gathered from VERSION, MODE, LIST and STATUS
/// (`Runner.daemonStatus`): sectionctl's own, not the library's.
struct DaemonStatus: Equatable, Sendable {
  let daemonVersion: String
  let protocolVersion: String
  let socket: String
  let revision: UInt64
  let mode: Mode
  let sections: [ListedSection]
  /// Whose daemon the socket belongs to, as sectionctl found it.
  var kind: SocketLocation.Kind = .given
  /// The daemon's STATUS lines: pid, uid, systemd, uptime, config, state, clients, subscribers.
  var facts: [String: String] = [:]

  var openSections: [ListedSection] { sections.filter(\.isOpen) }
  var itemCount: Int { sections.reduce(0) { $0 + $1.itemCount } }
  /// Items an accordion shows: those of open sections.
  var visibleItemCount: Int { openSections.reduce(0) { $0 + $1.itemCount } }
}
