import Testing

@testable import SectionCore

/// An `ERR` reply is one line whatever its message quotes: a CR LF (one Character in Swift),
/// an LF or an escape sequence from outside the daemon would give the client a line the
/// protocol does not define.
@Suite struct ProtocolErrorTests {
  @Test func theReplyIsOnePrintableLine() {
    let error = ProtocolError(.unavailable, "etcd: no \u{1B}]0;PWNED\u{07}\r\nOK 31337\nSECOND\u{9B}6n")
    let line = String(decoding: error.line, as: UTF8.self)
    #expect(line == "ERR UNAVAILABLE etcd: no \\x1b]0;PWNED\\x07\\x0d\\x0aOK 31337\\x0aSECOND\\x9b6n\n")
    #expect(error.line.filter { $0 < 0x20 } == [0x0A])
    #expect(ProtocolError(.noSection, "no section \"x\"").message == "no section \"x\"")
  }
}
