import Posix
import Testing

@testable import SectionClient

/// A library error speaks to the program that made the call: it names the socket and the fix
/// in the library's terms, never sectionctl's options or commands (SectionCtl adds those).
@Suite struct ErrorTextTests {
  static let path = "/tmp/sdx/control.sock"
  static let errors: [ClientError] = [
    .cannotConnect(path: path, errno: .noEntry), .cannotConnect(path: path, errno: .connectionRefused),
    .cannotConnect(path: path, errno: .permissionDenied), .cannotConnect(path: path, errno: .nameTooLong),
    .cannotConnect(path: path, errno: .notDirectory), .noDaemon(paths: [path, "/run/sectiond/control.sock"]),
    .notASocket(path: path, kind: "a regular file"), .connectionLost(path: path),
    .timedOut(path: path, seconds: 2), .cancelled(path: path), .lineTooLong(path: path),
    .malformedReply("HELLO"),
  ]

  @Test(arguments: errors) func namesNoCommandLine(_ error: ClientError) {
    let message = error.message
    // sectionctl and its options (the daemon's, as in 'sectiond --socket', are a fix for both).
    for word in [
      "sectionctl", "(-s)", "(-r)", "--timeout", "--readonly", "use a shorter --socket", "check --socket",
    ] {
      #expect(!message.contains(word), "\(message)")
    }
  }

  @Test func namesTheSocketAndTheFix() {
    #expect(
      ClientError.noDaemon(paths: [Self.path]).message.hasSuffix(
        "or name another daemon's control socket (the socket path, or SECTIOND_SOCKET)"))
    #expect(
      ClientError.timedOut(path: Self.path, seconds: 2).message.contains(
        "\(Self.path) did not answer within 2 s"))
    #expect(
      ClientError.timedOut(path: Self.path, seconds: 2).message.hasSuffix("(give a longer timeout, or none)"))
    #expect(
      ClientError.malformedReply("HELLO").message.hasSuffix(
        "(its VERSION reply (AsyncClient.version()) says what it speaks)"))
    #expect(
      ClientError.cannotConnect(path: Self.path, errno: .permissionDenied).message.hasSuffix(
        "connect to the read-only socket (readonly: true) to read and watch"))
    #expect(
      ClientError.invalidArgument(argument: "SECTIOND_LIST", value: "A", rule: ListName.rule).message
        == "invalid SECTIOND_LIST \"A\": \(ListName.rule); nothing was sent")
  }
}
