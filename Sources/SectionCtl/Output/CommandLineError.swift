import SectionClient

/// What stops sectionctl: an error of the library's (`ClientError`, what any program meets
/// talking to the daemon), or one that only a command line meets, which the library has no
/// business carrying.
enum CommandLineError: Error, Equatable {
  /// The library's error, reported with sectionctl's options as the fixes.
  case client(ClientError)
  /// The command line is wrong; the message says what to type instead.
  case usage(String)
  /// `ui` cannot use the terminal (there is none, or it is dumb); the message suggests view or watch.
  case terminal(String)

  /// A word for scripts (`--json` errors): the library's code, or what went wrong here.
  var code: String {
    switch self {
    case .client(let error): error.code
    case .usage: "USAGE"
    case .terminal: "TERMINAL"
    }
  }

  /// The exit status a script reads for the error: who is to blame (`ExitStatus`).
  var exitStatus: ExitStatus {
    switch self {
    case .client(let error): error.exitStatus
    case .usage, .terminal: .usage
    }
  }

  /// The diagnostic as sectionctl shows it, without the `sectionctl: ` prefix.
  var diagnostic: String {
    switch self {
    case .client(let error): error.diagnostic
    case .usage(let text): text + "\nTry 'sectionctl --help' for more information."
    case .terminal(let text): text
    }
  }

  /// The error as sectionctl --readonly reports it (`ClientError.onReadonlySocket`).
  var onReadonlySocket: CommandLineError {
    guard case .client(let error) = self else { return self }
    return .client(error.onReadonlySocket)
  }
}

extension CommandLineError {
  /// What `body` returns, its error as sectionctl's: for the library calls among those that
  /// can also fail as only a command line does.
  static func lifting<T>(_ body: () throws(ClientError) -> T) throws(CommandLineError) -> T {
    do {
      return try body()
    } catch {
      throw .client(error)
    }
  }
}
