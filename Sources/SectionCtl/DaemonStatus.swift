import SectionCore

/// What `sectionctl status` reports, gathered from VERSION, MODE and LIST.
struct DaemonStatus: Equatable, Sendable {
  let daemonVersion: String
  let protocolVersion: String
  let socket: String
  let revision: UInt64
  let mode: Mode
  let sections: [ListedSection]

  var openSections: [ListedSection] { sections.filter(\.isOpen) }
  var itemCount: Int { sections.reduce(0) { $0 + $1.itemCount } }
  /// Items an accordion shows: those of open sections.
  var visibleItemCount: Int { openSections.reduce(0) { $0 + $1.itemCount } }
}
