import Testing

@testable import SectionClient

/// What the library refuses before anything is sent, naming the argument: the daemon would
/// refuse it too, or (a client's name) quietly record something else.
@Suite struct ArgumentTests {
  @Test func aNameTheDaemonRefusesIsRefusedAtConnect() {
    // Checked before the socket is looked at: the path need not exist.
    #expect(throws: ClientError.invalidArgument(argument: "name", value: "my panel", rule: ClientName.rule)) {
      _ = try AsyncClient(path: "/nonexistent/control.sock", name: "my panel")
    }
    #expect(throws: ClientError.invalidArgument(argument: "name", value: "", rule: ClientName.rule)) {
      _ = try AsyncClient.connect(socket: "/nonexistent/control.sock", name: "")
    }
    // `-` alone is what the history shows for a hidden name: the daemon refuses it (ERR SYNTAX).
    #expect(throws: ClientError.invalidArgument(argument: "name", value: "-", rule: ClientName.rule)) {
      _ = try Client(path: "/nonexistent/control.sock", name: "-")
    }
    let long = String(repeating: "n", count: ClientName.maximumLength + 1)
    #expect(throws: ClientError.invalidArgument(argument: "name", value: long, rule: ClientName.rule)) {
      _ = try Client(path: "/nonexistent/control.sock", name: long)
    }
    // A valid name gets as far as the socket.
    #expect(throws: ClientError.cannotConnect(path: "/nonexistent/control.sock", errno: .noEntry)) {
      _ = try AsyncClient(path: "/nonexistent/control.sock", name: "web:127.0.0.1:8080")
    }
  }

  @Test func theRefusalNamesTheArgumentAndTheRule() {
    let error = ClientError.invalidArgument(argument: "name", value: "my\u{1B}panel", rule: ClientName.rule)
    #expect(
      error.message
        == "invalid name \"my\\x1bpanel\": a client's name is 1 to 64 of the characters A-Z a-z 0-9 . _ : @ -, "
        + "but not \"-\" alone, which the history shows for a hidden name; nothing was sent"
    )
    #expect(error.code == "USAGE")
  }

  @Test func anInvalidListNameIsRefusedNamingTheArgument() {
    #expect(throws: ClientError.invalidArgument(argument: "list", value: "Media", rule: ListName.rule)) {
      _ = try AsyncClient.connect(socket: "/nonexistent/control.sock", list: "Media")
    }
  }

  @Test func negativeCountsAndPositionsAreRefused() {
    #expect(
      Request.history(last: -5).problem
        == .invalidArgument(argument: "history(last:)", value: "-5", rule: "a count or position is 0 or more")
    )
    #expect(Request.history(last: 0).problem == nil)
    #expect(Request.history(last: Int.max).problem == nil)
    #expect(Request.move("a", to: -1).problem?.message.hasPrefix("invalid move(to:) \"-1\"") == true)
    #expect(Request.insert(id: "a", title: "A", at: -1).problem != nil)
    #expect(Request.insertItem("x", in: "a", at: -2).problem != nil)
    #expect(Request.deleteItem(at: -1, in: "a").problem != nil)
    #expect(Request.setItem(at: -1, to: "x", in: "a").problem != nil)
    #expect(
      Request.moveItem(from: 0, to: -1, in: "a").problem?.message.hasPrefix("invalid moveItem(to:)") == true)
    #expect(
      Request.moveItem(from: -3, to: 1, in: "a").problem?.message.hasPrefix("invalid moveItem(from:)") == true
    )
    // In a batch, the change's problem is the batch's.
    #expect(Request.batch([.open("a"), .move("a", to: -1)]).problem != nil)
  }

}
