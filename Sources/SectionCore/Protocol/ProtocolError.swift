/// An `ERR <CODE> <message>` reply: the code for programs, the message for people.
public struct ProtocolError: Error, Equatable, Sendable {
  public enum Code: String, Sendable {
    case unknown = "UNKNOWN"
    case syntax = "SYNTAX"
    case noSection = "NOSECTION"
    case mode = "MODE"
    case readOnly = "READONLY"
    /// A request above the connection's `AccessLevel`: the message starts with the level it
    /// needs and the level the connection has (`denied`).
    case denied = "DENIED"
    case tooLong = "TOOLONG"
    case busy = "BUSY"
    case config = "CONFIG"
    /// An edit would pass one of the `EditLimits`.
    case limit = "LIMIT"
    /// INSERT with an id another section has.
    case exists = "EXISTS"
    /// An item position that the section does not have.
    case noItem = "NOITEM"
    /// An insertion or move index past the end of the list.
    case range = "RANGE"
    /// HISTORY FROM a revision whose later changes are not all kept; the message starts with
    /// the oldest revision kept.
    case gone = "GONE"
    /// A change could not be committed where the list's truth is (a shared list's store: no
    /// quorum, no member reachable) within its time; reads are still answered from what was
    /// applied.
    case unavailable = "UNAVAILABLE"
    case `internal` = "INTERNAL"
  }

  public let code: Code
  public let message: String

  /// `message` is kept as one printable line (`VisibleText.escape`): it may quote text from
  /// outside the daemon (an etcd member's error, a path), and a CR, LF or escape sequence in
  /// it would give the client a line the protocol does not define, or act on its terminal.
  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = VisibleText.escape(message)
  }

  /// The whole status line, LF included.
  public var line: [UInt8] { Array("ERR \(code.rawValue) \(message)\n".utf8) }

  /// `ERR DENIED <needs> <has> ...`: the two levels first, for programs; then, for people, the
  /// request and who can change the level. `line` is the request's line in a batch, which
  /// the refusal stops whole.
  static func denied(_ verb: String, needs: AccessLevel, has: AccessLevel, line: Int?) -> ProtocolError {
    let which = line.map { "line \($0) of the batch, \(verb)," } ?? verb
    return ProtocolError(
      .denied,
      "\(needs.rawValue) \(has.rawValue) \(which) needs the \(needs.rawValue) level and this connection has \(has.rawValue); nothing was changed; sectiond's access rules grant levels (sectiond(8), ACCESS)"
    )
  }

  public static let tooLong = ProtocolError(
    .tooLong, "request longer than \(LineFramer.maximumLineLength) bytes")
  public static let tooManyClients = ProtocolError(.busy, "too many clients")
  public static let revisionsExhausted = ProtocolError(
    .internal,
    "the revision is at its limit (\(SectionModel.maxRevision)); the change was not applied. "
      + "Stop sectiond and remove its state file to start again from revision 0")
}
