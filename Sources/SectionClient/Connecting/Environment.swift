import Posix

/// The facts about the process that change sectionctl's behaviour, gathered in one value so tests can set them.
package struct Environment: Sendable {
  /// Looks up an environment variable.
  package var variable: @Sendable (String) -> String?
  package var userID: UInt32
  /// Whether standard output is a terminal: colour and screen redraws only go there.
  package var outputIsTerminal: Bool
  /// Whether standard input is a terminal: with output on one too, no command means `shell`.
  package var inputIsTerminal = false

  package static var current: Environment {
    Environment(
      variable: { ProcessInfo.environment($0) }, userID: ProcessInfo.userID,
      outputIsTerminal: FileDescriptor.standardOutput.isTerminal,
      inputIsTerminal: FileDescriptor.standardInput.isTerminal)
  }

  /// A variable's value, with an empty value treated as unset (as NO_COLOR and the locale variables define).
  package func nonEmpty(_ name: String) -> String? {
    guard let value = variable(name), !value.isEmpty else { return nil }
    return value
  }
}
