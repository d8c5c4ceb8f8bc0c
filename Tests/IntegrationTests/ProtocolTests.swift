import Foundation
import Glibc
import Posix
import Testing

/// Protocol 1 against the real daemon on a real socket.
@Suite struct ProtocolTests {
  @Test func demoSetIsServedWithoutConfig() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    #expect(try client.request("PING") == ["OK"])
    #expect(try client.request("version") == ["version 0.1.0 1", "OK"])
    #expect(
      try client.request("LIST") == [
        "section 0 first closed 10 First", "section 1 second closed 8 Second",
        "section 2 third closed 6 Third",
        "OK 0",
      ])
    #expect(try client.request("ITEMS second").count == 9)
    #expect(try client.request("TOGGLE\t1") == ["section 1 second open 8 Second", "OK 1"])
    #expect(try client.request("VIEW").count == 3 + 8 + 1)
  }

  @Test func pipelinedRequestsAreAnsweredInOrder() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    var batch = ""
    for index in 0..<200 { batch += index % 2 == 0 ? "TOGGLE 0\n" : "PING\n" }
    try client.send(batch)
    for index in 0..<200 {
      let reply = try client.readReply()
      if index % 2 == 0 {
        let state = index % 4 == 0 ? "open" : "closed"
        #expect(reply == ["section 0 first \(state) 10 First", "OK \(index / 2 + 1)"])
      } else {
        #expect(reply == ["OK"])
      }
    }
  }

  @Test func everySubscriberSeesEveryChangeInOrder() throws {
    let daemon = try TestDaemon(config: #"{"mode":"exclusive","sections":[{"title":"A"},{"title":"B"}]}"#)
    let subscribers = try (0..<3).map { _ in try daemon.connect() }
    for subscriber in subscribers {
      #expect(try subscriber.request("SUBSCRIBE") == ["state 0 exclusive -", "OK 0"])
    }
    let writer = try daemon.connect()
    _ = try writer.request("OPEN a")
    _ = try writer.request("OPEN b")
    _ = try writer.request("MODE multi")
    _ = try writer.request("CLOSE ALL")
    let expected = ["!opened 1 0 a", "!closed 2 0 a", "!opened 3 1 b", "!mode 4 multi", "!closed 5 1 b"]
    for subscriber in subscribers {
      #expect(try expected.map { _ in try subscriber.readEvent() } == expected)
    }
    #expect(try writer.request("UNSUBSCRIBE") == ["OK"])
  }

  @Test func unsubscribeStopsEvents() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    _ = try client.request("SUBSCRIBE")
    #expect(try client.request("UNSUBSCRIBE") == ["OK"])
    #expect(try client.request("TOGGLE 0") == ["section 0 first open 10 First", "OK 1"])
    #expect(try client.request("PING") == ["OK"])
    #expect(client.events.isEmpty)
  }

  @Test func subscriberThatNeverReadsDoesNotBlockOthers() throws {
    let daemon = try TestDaemon()
    let stalled = try daemon.connect()
    #expect(try stalled.request("SUBSCRIBE") == ["state 0 multi -", "OK 0"])
    let writer = try daemon.connect()
    let changes = 20_000  // about 400 KB of events: more than the socket and the 64 KiB event limit hold
    var slowest = 0.0
    for _ in 0..<changes {
      let start = Date()
      _ = try writer.request("TOGGLE 0")
      slowest = max(slowest, Date().timeIntervalSince(start))
    }
    // Blocked, a request would wait for the stalled reader for ever; 3 s is a margin a loaded
    // machine meets (how fast a TOGGLE is, is bench's to say).
    #expect(slowest < 3, "a request took \(slowest) s while a subscriber did not read")
    // The stalled subscriber catches up: the events it could not take became one snapshot.
    var expectedRevision = 1
    var line = try stalled.readLine(timeout: 5)
    while let event = line, !event.hasPrefix("!state") {
      #expect(Int(event.split(separator: " ")[1]) == expectedRevision, "event \(event)")
      expectedRevision += 1
      line = try stalled.readLine(timeout: 5)
    }
    #expect(line == "!state \(changes) multi -")
    #expect(
      expectedRevision > 1 && expectedRevision < changes, "snapshot after \(expectedRevision - 1) events")
    #expect(try writer.request("SUBSCRIBE") == ["state \(changes) multi -", "OK \(changes)"])
  }

  @Test func overLongLineIsRefusedAndTheConnectionStaysUsable() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    try client.send(String(repeating: "x", count: 10_000) + "\nPING\n")
    #expect(try client.readReply() == ["ERR TOOLONG request longer than 4096 bytes"])
    #expect(try client.readReply() == ["OK"])
    #expect(
      try client.request("PING " + String(repeating: "y", count: 4096)) == [
        "ERR TOOLONG request longer than 4096 bytes"
      ])
  }

  @Test func binaryGarbageGetsSyntaxErrors() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    try client.send(bytes: [0x50, 0x00, 0x4E, 0x0A, 0xFF, 0xFE, 0x0A, 0x01, 0x02, 0x0A])
    #expect(try client.readReply() == ["ERR SYNTAX NUL byte in request"])
    #expect(try client.readReply() == ["ERR SYNTAX request is not valid UTF-8"])
    #expect(try client.readReply() == ["ERR SYNTAX control character 0x1 in request"])
    #expect(try client.request("PING\r") == ["OK"])
  }

  @Test func errorsNameTheProblem() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    #expect(try client.request("OPEN 7") == [#"ERR NOSECTION no section "7": there are 3 (0-2)"#])
    #expect(try client.request("FROB") == [#"ERR UNKNOWN unknown command "FROB"; HELP lists the commands"#])
    #expect(try client.request("PING now") == [#"ERR SYNTAX unexpected "now": PING takes no arguments"#])
    #expect(try client.request("MODE exclusive") == ["mode exclusive", "OK 1"])
    #expect(try client.request("OPEN ALL").first?.hasPrefix("ERR MODE ") == true)
  }

  @Test func blankLinesGetNoReply() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    try client.send("\n \t\n\r\nPING\n")
    #expect(try client.readReply() == ["OK"])
  }

  @Test func quitClosesAfterTheReply() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    try client.send("QUIT\nPING\n")
    #expect(try client.readLine() == "OK")
    #expect(try client.readLine() == nil)
  }

  @Test func endOfInputStillAnswersEveryRequest() throws {
    let daemon = try TestDaemon()
    let client = try daemon.connect()
    try client.send("TOGGLE 1\nTOGGLE 2\nLIST")
    UnixSocket.shutdownWrite(client.fd)
    #expect(try client.readReply() == ["section 1 second open 8 Second", "OK 1"])
    #expect(try client.readReply() == ["section 2 third open 6 Third", "OK 2"])
    #expect(try client.readReply().last == "OK 2")
    #expect(try client.readLine() == nil)
  }

  @Test func clientVanishingMidReplyIsRoutine() throws {
    let daemon = try TestDaemon()
    for _ in 0..<20 {
      let client = try daemon.connect()
      try client.send(String(repeating: "VIEW\nHELP\n", count: 2000))
    }
    let survivor = try daemon.connect()
    #expect(try survivor.request("PING") == ["OK"])
  }

  @Test func maxClientsPlusOneIsTurnedAway() throws {
    let daemon = try TestDaemon(arguments: ["--max-clients", "3"])
    let clients = try (0..<3).map { _ in try daemon.connect() }
    for client in clients { #expect(try client.request("PING") == ["OK"]) }
    let extra = try daemon.connect()
    #expect(try extra.readLine() == "ERR BUSY too many clients")
    #expect(try extra.readLine() == nil)
    #expect(try clients[0].request("PING") == ["OK"])
  }
}
