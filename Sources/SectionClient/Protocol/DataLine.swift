import SectionShared

/// A data line of a reply: everything before the status line.
public enum DataLine: Equatable, Sendable {
  case section(ListedSection)
  case item(ListedItem)
  case state(StateSnapshot)
  case mode(Mode)
  case version(daemon: String, protocolVersion: String)
  /// One line of HELP, `help <syntax> - <what it does>`, without the keyword.
  case help(String)
  /// One saved change of a HISTORY reply.
  indirect case history(HistoryEntry)
  /// A keyword this sectionctl does not know, kept whole so newer daemons still work.
  case other(String)
}
