import Posix

/// The facts about the process that decide where the daemon is looked for (`SocketLocation`)
/// and how a command line behaves, gathered in one value so that a test can set them.
public struct Environment: Sendable {
  /// Looks up an environment variable.
  public var variable: @Sendable (String) -> String?
  /// The real user id: root looks for the system daemon only.
  public var userID: UInt32
  /// Whether standard output is a terminal: colour and screen redraws only go there.
  public var outputIsTerminal: Bool
  /// Whether standard input is a terminal: with output on one too, no command means `shell`.
  public var inputIsTerminal = false

  /// Made up facts, for a test: `variable` stands for the environment.
  public init(
    variable: @escaping @Sendable (String) -> String?, userID: UInt32, outputIsTerminal: Bool,
    inputIsTerminal: Bool = false
  ) {
    self.variable = variable
    self.userID = userID
    self.outputIsTerminal = outputIsTerminal
    self.inputIsTerminal = inputIsTerminal
  }

  /// This process's own.
  public static var current: Environment {
    Environment(
      variable: { ProcessInfo.environment($0) }, userID: ProcessInfo.userID,
      outputIsTerminal: FileDescriptor.standardOutput.isTerminal,
      inputIsTerminal: FileDescriptor.standardInput.isTerminal)
  }

  /// A variable's value, with an empty value treated as unset (as NO_COLOR and the locale variables define).
  public func nonEmpty(_ name: String) -> String? {
    guard let value = variable(name), !value.isEmpty else { return nil }
    return value
  }
}
