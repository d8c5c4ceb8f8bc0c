import Posix

/// The facts about the process that change sectionctl's behaviour, gathered in one value so tests can set them.
public struct Environment: Sendable {
  /// Looks up an environment variable.
  public var variable: @Sendable (String) -> String?
  public var userID: UInt32
  /// Whether standard output is a terminal: colour and screen redraws only go there.
  public var outputIsTerminal: Bool
  /// Whether standard input is a terminal: with output on one too, no command means `shell`.
  public var inputIsTerminal = false

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
