import SectionClient

/// What the status line reports besides the state: where the ui is connected, how, and the
/// answer to the last thing a person asked for.
struct StatusBar: Equatable, Sendable {
  enum Link: Equatable, Sendable {
    case connected
    /// A SUBSCRIBE or VIEW is on its way; the screen shows what was known.
    case syncing
    /// The daemon went away; the ui tries again by itself.
    case disconnected
  }

  var socket: String
  var link: Link = .syncing
  /// The read-only socket: a viewer, whose keys cannot change state.
  var readonly: Bool
  /// The connection's level, as STATUS told it at the start, or as the daemon's last refusal
  /// above it (`ERR DENIED`) names it: the keys above it are refused here, and the key list
  /// leaves them out. Nil: not known.
  var level: AccessLevel?
  /// A refusal, an error or a confirmation; cleared by the next key.
  var message: String?
  /// The prompt line, which takes the status line's place while a person types into it.
  var prompt: String?
  /// Rows of the list below the screen's last: said in the status line, so that a list cut
  /// by the screen does not look complete.
  var below = 0
}
