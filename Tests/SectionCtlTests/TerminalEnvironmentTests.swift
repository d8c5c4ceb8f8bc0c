import Glibc
import Posix
import Testing

@testable import SectionClient
@testable import SectionCtl

/// What sectionctl makes of the environment for a person: colour, markers, diagnostics that
/// name its options (SectionClientTests' EnvironmentTests find the socket).
@Suite struct TerminalEnvironmentTests {
  @Test func colourNeedsATerminalAndNoNO_COLOR() {
    #expect(Style(environment: Fixtures.environment(terminal: true)).color)
    #expect(!Style(environment: Fixtures.environment(terminal: false)).color)
    #expect(!Style(environment: Fixtures.environment(["NO_COLOR": "1"], terminal: true)).color)
    #expect(Style(environment: Fixtures.environment(["NO_COLOR": ""], terminal: true)).color)
    #expect(!Style(environment: Fixtures.environment(["TERM": "dumb"], terminal: true)).color)
  }

  @Test func unicodeMarkersNeedAUTF8Locale() {
    #expect(Style(environment: Fixtures.environment(["LANG": "en_US.UTF-8"])).unicode)
    #expect(Style(environment: Fixtures.environment(["LANG": "C.utf8"])).unicode)
    #expect(!Style(environment: Fixtures.environment(["LANG": "C"])).unicode)
    #expect(!Style(environment: Fixtures.environment()).unicode)
    #expect(!Style(environment: Fixtures.environment(["LC_ALL": "C", "LANG": "en_US.UTF-8"])).unicode)
    #expect(Style(environment: Fixtures.environment(["LC_CTYPE": "de_DE.UTF-8@euro", "LANG": "C"])).unicode)
  }

  /// A fleet that cannot take a change is not a refused request: a status of its own.
  @Test func anUnavailableFleetHasItsOwnExitStatus() {
    #expect(ClientError.daemon(code: "UNAVAILABLE", message: "no quorum").exitStatus == .fleetUnavailable)
    #expect(ExitStatus.fleetUnavailable.rawValue == 6)
    #expect(ClientError.daemon(code: "NOSECTION", message: "no such section").exitStatus == .daemonError)
  }

  @Test func connectErrorsNameTheSocketAndTheFix() {
    let missing = ClientError.cannotConnect(path: "/run/s.sock", errno: .noEntry).diagnostic
    #expect(missing.hasPrefix("no daemon is listening on /run/s.sock"))
    #expect(missing.contains("start one with 'sectiond --socket'"))
    let system = ClientError.cannotConnect(path: "/run/sectiond/control.sock", errno: .noEntry).diagnostic
    #expect(system.contains("'sudo systemctl start sectiond.socket'"))
    let user = ClientError.cannotConnect(path: "/run/user/7/sectiond/readonly.sock", errno: .noEntry)
      .diagnostic
    #expect(user.contains("'systemctl --user start sectiond-readonly.socket'"))
    let neither = ClientError.noDaemon(paths: [
      "/run/user/7/sectiond/control.sock", "/run/sectiond/control.sock",
    ])
    #expect(neither.exitStatus == .unavailable)
    #expect(
      neither.diagnostic.contains("systemctl --user start sectiond.socket")
        && neither.diagnostic.contains("sudo systemctl start sectiond.socket"))
    let stale = ClientError.cannotConnect(path: "/run/s.sock", errno: .connectionRefused).diagnostic
    #expect(stale.hasPrefix("no daemon is listening on /run/s.sock"))
    #expect(ClientError.cannotConnect(path: "/s", errno: .permissionDenied).diagnostic.contains("--readonly"))
    #expect(ClientError.cannotConnect(path: "/s", errno: .nameTooLong).diagnostic.contains("shorter"))
    #expect(ClientError.cannotConnect(path: "/s", errno: .noEntry).exitStatus == .unavailable)
    #expect(ClientError.connectionLost(path: "/s").exitStatus == .unavailable)
    let file = ClientError.notASocket(path: "/s", kind: ClientError.kind(of: S_IFREG | 0o644))
    #expect(file.diagnostic.hasPrefix("cannot connect to /s: it is a regular file, not a socket"))
    #expect(file.exitStatus == .unavailable)
    #expect(ClientError.kind(of: S_IFDIR | 0o755) == "a directory")
    #expect(
      ClientError.daemon(code: "MODE", message: "not in exclusive mode").message == "not in exclusive mode")
    #expect(ClientError.daemon(code: "MODE", message: "").message == "the daemon answered MODE")
    #expect(ClientError.daemon(code: "MODE", message: "x").exitStatus == .daemonError)
  }

  /// sectionctl's diagnostics name its options where the library's messages name a program's
  /// arguments (ErrorTextTests checks those).
  @Test func diagnosticsNameSectionctlsOptions() {
    #expect(
      ClientError.noDaemon(paths: ["/s"]).diagnostic.hasSuffix(
        "; or point at another daemon with --socket (-s) PATH or SECTIOND_SOCKET"))
    #expect(
      ClientError.malformedReply("HELLO").diagnostic.hasSuffix(
        "('sectionctl send VERSION' shows what it speaks)"))
    #expect(ClientError.timedOut(path: "/s", seconds: 2).diagnostic.contains("--timeout SECONDS"))
    #expect(CommandLineError.usage("bad").diagnostic == "bad\nTry 'sectionctl --help' for more information.")
    #expect(!ClientError.noDaemon(paths: ["/s"]).message.contains("--socket (-s)"))
  }

  /// A dumb terminal stops `ui` with sectionctl's own error, before any connection: exit 2,
  /// TERMINAL for scripts, advice to use view or watch (the library has no terminal error).
  @Test func uiRefusesADumbTerminalAsACommandLineError() {
    let runner = Runner(
      invocation: Invocation(command: .ui, socket: "/nonexistent/s.sock"),
      environment: Fixtures.environment(["TERM": "dumb"], terminal: true), output: Output())
    #expect {
      _ = try runner.run()
    } throws: { error in
      guard let error = error as? CommandLineError, case .terminal(let text) = error else { return false }
      return error.code == "TERMINAL" && error.exitStatus == .usage && error.diagnostic == text
        && text.hasPrefix("ui needs a terminal") && text.hasSuffix("'sectionctl watch' to follow changes")
    }
    let lost = CommandLineError.client(.connectionLost(path: "/s"))
    #expect(lost.code == "UNAVAILABLE" && lost.exitStatus == .unavailable)
    #expect(lost.diagnostic == ClientError.connectionLost(path: "/s").diagnostic)
  }
}

/// `--list-from-query` is pipe's alone (the query itself: SectionClientTests' QueryListTests).
@Suite struct QueryOptionTests {
  @Test func onlyPipeTakesIt() throws {
    #expect(try ArgumentParser.parse(["pipe", "--list-from-query"]).listFromQuery)
    #expect(throws: CommandLineError.self) { try ArgumentParser.parse(["view", "--list-from-query"]) }
  }
}
