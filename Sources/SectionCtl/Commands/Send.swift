import SectionClient

extension CommandSpec {
  /// `sectionctl send LINE...`.
  static let send = CommandSpec(
    usage: ["send LINE..."],
    summary: "send raw protocol lines and print the raw replies",
    details: """
      Arguments:
        LINE   a request such as 'TOGGLE 1'; each is sent in turn and its reply printed as it
               came (control characters shown as escapes)
      Exits 1 if any reply is ERR. 'sectionctl send HELP' lists the daemon's commands.
      """,
    example: "sectionctl send 'OPEN 1' LIST",
    arguments: [.values(noun: "line")],
    check: { (options) throws(CommandLineError) in
      if options.json {
        throw .usage("--json does not apply to send, which prints the daemon's lines as they are")
      }
    },
    parse: { (arguments, _) throws(CommandLineError) in
      let lines = arguments.flatMap {
        $0.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
      }
      guard !lines.isEmpty else { throw .usage("send needs at least one protocol line, such as 'PING'") }
      try checkSession(lines)
      return .send(lines)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.send) })
}

/// Raw lines for `send` that would leave it waiting for a reply that never comes, or
/// sending into a closed connection: lines after QUIT, a BATCH without END.
private func checkSession(_ lines: [String]) throws(CommandLineError) {
  var inBatch = false
  for (number, line) in lines.enumerated() {
    if SendLine.quits(line) && !inBatch && number < lines.count - 1 {
      throw .usage("QUIT must be the last line: the daemon closes the connection after it")
    } else if SendLine.opensBatch(line) && !inBatch {
      inBatch = true
    } else if SendLine.closesBatch(line) {
      inBatch = false
    }
  }
  if inBatch { throw .usage("a BATCH needs its END: the daemon applies nothing until it reads END") }
}

extension Runner {
  /// Raw lines, one request at a time so that even a long list never fills the socket both ways.
  /// The lines of a BATCH get no reply until its END; QUIT's OK is the last line (the parser
  /// made sure nothing follows it).
  /// The connection is named first (`CLIENT NAME`, its reply read apart: a busy daemon's
  /// `ERR BUSY` is reported as such), so the history tells these lines apart too; a `CLIENT
  /// NAME` among the lines renames it from there on.
  fileprivate func send() throws(ClientError) -> ExitStatus {
    guard case .send(let lines) = invocation.command else { preconditionFailure("send runs .send") }
    let client = try Client(path: socket().path, timeout: timeout, name: clientName)
    _ = try client.request([], replies: 0)
    let connection = client.connection
    var status = ExitStatus.success
    var inBatch = false
    for line in lines {
      try connection.send([line])
      if inBatch && !SendLine.closesBatch(line) { continue }
      // On the read-only socket BATCH is refused at once, and each line after it is a request.
      if SendLine.opensBatch(line) && !invocation.readonly {
        inBatch = true
        continue
      }
      inBatch = false
      if SendLine.verb(line).isEmpty { continue }
      while true {
        guard let reply = try connection.readLine() else { throw .connectionLost(path: connection.path) }
        output.print(VisibleText.escape(reply) + "\n")
        if Connection.endsReply(reply) {
          if SendLine.isError(reply) { status = .daemonError }
          break
        }
      }
    }
    return status
  }
}
