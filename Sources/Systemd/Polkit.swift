import CSystemd
import Glibc

/// What polkit said about a caller and an action.
public enum PolkitAnswer: Sendable, Equatable {
  /// The action is allowed.
  case authorized
  /// It would be allowed after the caller authenticates, which the caller's message did not
  /// allow (no interactive authorization).
  case challenge
  /// It is not allowed.
  case notAuthorized
  /// polkit is not on this machine: org.freedesktop.PolicyKit1 is neither on the bus nor
  /// activatable.
  case absent
}

extension BusCall {
  /// Whether the caller allows an authentication dialog for this call (its message's
  /// ALLOW_INTERACTIVE_AUTHORIZATION flag; busctl and gdbus set it on request).
  public var allowsInteractiveAuthorization: Bool {
    sd_bus_message_get_allow_interactive_authorization(message) > 0
  }

  /// Asks polkit whether the caller may do `action`, as systemd's daemons ask it: over the
  /// bus (org.freedesktop.PolicyKit1.Authority.CheckAuthorization), the caller named by its
  /// unique name (subject `system-bus-name`, which polkit resolves to its process, user and
  /// seat), with AllowUserInteraction when the caller's message allows it. Without waiting:
  /// the loop goes on serving while polkit decides (and a person types a password); `answer`
  /// runs with its decision, `.absent` when there is no polkit, or the error of a polkit that
  /// failed or did not answer in time. It does not run when the connection to the bus goes first.
  public func checkAuthorization(
    _ action: String, _ answer: @escaping (Result<PolkitAnswer, any Error>) -> Void
  ) throws {
    let interactive = allowsInteractiveAuthorization
    try callAsync(
      "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
      "org.freedesktop.PolicyKit1.Authority",
      "CheckAuthorization", timeout: interactive ? BusCall.interactiveTimeout : BusCall.polkitTimeout,
      arguments: { [sender] writer in
        try writer.container("r", "sa{sv}") { subject in
          try subject.append("system-bus-name")
          try subject.container("a", "{sv}") { details in
            try details.container("e", "sv") { entry in
              try entry.append("name")
              try entry.container("v", "s") { try $0.append(sender) }
            }
          }
        }
        try writer.append(action)
        try writer.container("a", "{ss}") { _ in }
        // AllowUserInteraction = 1.
        try writer.append(UInt32(interactive ? 1 : 0))
        // No cancellation id: a call that goes away is answered by nobody.
        try writer.append("")
      }
    ) { reply in
      switch reply {
      case .failure(let error as BusErrorReply) where BusCall.noService.contains(error.name):
        answer(.success(.absent))
      case .failure(let error): answer(.failure(error))
      case .success(let reply):
        answer(Result { try BusCall(reply).readAuthorization(interactive: interactive) })
      }
    }
  }

  /// polkit's own limit for a decision without a person is far shorter; one that does not
  /// answer in this time is not working, and the call is refused.
  static let polkitTimeout: UInt64 = 25_000_000
  /// How long a person may take to authenticate in polkit's dialog.
  static let interactiveTimeout: UInt64 = 300_000_000
  /// The errors of a bus on which polkit is neither running nor activatable.
  static let noService = [
    "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
  ]

  /// CheckAuthorization's `(bba{ss})`: is_authorized, is_challenge, details (not read). A
  /// challenge to a call that allowed interaction means that no authentication agent could
  /// ask for the password: a refusal, not a reason to call again.
  fileprivate func readAuthorization(interactive: Bool) throws -> PolkitAnswer {
    try enter("r", "bba{ss}")
    var authorized: Int32 = 0
    var challenge: Int32 = 0
    try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &authorized), "read_basic")
    try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &challenge), "read_basic")
    return authorized != 0 ? .authorized : challenge != 0 && !interactive ? .challenge : .notAuthorized
  }
}
