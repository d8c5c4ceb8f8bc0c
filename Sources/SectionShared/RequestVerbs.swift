/// The verbs of protocol 1, upper case, in the order of the daemon's table (`Verb`, whose
/// cases SectionCoreTests hold this list to): for clients that offer them, as the shell's
/// completion does.
package enum RequestVerbs {
  package static let names = [
    "PING", "VERSION", "LIST", "ITEMS", "VIEW", "OPEN", "CLOSE", "TOGGLE", "MODE", "SUBSCRIBE", "UNSUBSCRIBE",
    "HELP", "QUIT", "RELOAD", "STATUS", "HISTORY", "CLIENT", "INSERT", "DELETE", "MOVE", "RENAME", "ITEM",
    "BATCH", "END",
  ]
}
