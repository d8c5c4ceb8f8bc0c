import SectionClient

extension CommandSpec {
  /// `sectionctl mode [exclusive|multi]`.
  static let mode = CommandSpec(
    usage: ["mode [--json] [exclusive|multi]"],
    summary: "show the mode, or switch between exclusive and multi",
    details: """
      Arguments:
        exclusive   at most one section open: opening one closes the other
                    (switching keeps only the most recently opened section open)
        multi       every section opens and closes on its own
      With --json: {\"revision\", \"mode\"}.
      """,
    example: "sectionctl mode exclusive",
    arguments: [.choice(noun: "mode", words: [Mode.exclusive, .multi].map(\.rawValue))],
    parse: { (arguments, _) throws(CommandLineError) in
      guard arguments.count <= 1 else { throw .usage("mode takes at most one argument: exclusive or multi") }
      guard let wanted = arguments.first else { return .mode(nil) }
      guard let mode = Mode(rawValue: wanted.lowercased()) else {
        throw .usage("unknown mode '\(wanted)'; the modes are exclusive and multi")
      }
      return .mode(mode)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runMode) })
}

extension Runner {
  fileprivate func runMode() throws(ClientError) -> ExitStatus {
    guard case .mode(let wanted) = invocation.command else { preconditionFailure("mode runs .mode") }
    let request = wanted.map { Request<UInt64>.setMode($0).asReply } ?? Request<Mode>.mode.asReply
    let reply = try connect().perform(request).succeeded()
    // Either way the reply's mode line says the mode now, read as MODE's reply is.
    let mode = try Request<Mode>.mode.value(from: [reply])
    show(text: mode.rawValue + "\n", json: JSONRenderer.mode(mode, revision: reply.revision))
    return .success
  }
}
