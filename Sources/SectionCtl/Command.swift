import SectionCore

/// What one run of sectionctl is to do, as the command line asked.
enum Command: Equatable, Sendable {
  case list
  case view
  case items(String)
  /// Open, close or toggle the sections named, in order.
  case change(SectionAction, refs: [String])
  /// `open --all` or `close --all`.
  case changeAll(SectionAction)
  /// Show the mode, or switch to the one given.
  case mode(Mode?)
  case status
  case reload
  case ping
  case watch(count: Int?, view: Bool)
  /// The full-screen, live accordion.
  case ui
  case send([String])
  /// Relay standard input and output to the socket.
  case pipe
  /// A runtime edit: the request line to send (INSERT, DELETE, MOVE, RENAME or ITEM ...).
  case edit(String)
  /// Request lines read from standard input, sent as one BATCH.
  case batch
  /// Help on sectionctl, or on one subcommand.
  case help(Subcommand?)
  case version
}
