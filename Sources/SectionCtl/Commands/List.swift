import SectionClient

extension CommandSpec {
  /// `sectionctl list`, and what sectionctl does without a command.
  static let list = CommandSpec(
    usage: ["list [--json]"],
    summary: "table of sections: index, id, state, item count, title (the default)",
    details:
      "With --json: {\"revision\", \"sections\": [{\"index\", \"id\", \"title\", \"open\", \"item_count\"}]}.",
    example: "sectionctl --json list | jq -r '.sections[] | select(.open) | .id'",
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .list)
      return .list
    },
    run: { (runner) throws(CommandLineError) in
      if !runner.invocation.commandGiven && runner.environment.inputIsTerminal
        && runner.environment.outputIsTerminal
      {
        return try Shell(runner: runner).run()
      }
      return try runner.lifting(runner.showList)
    })
}

extension Runner {
  fileprivate func showList() throws(ClientError) -> ExitStatus {
    let reply = try connect().perform(Request<Listing>.list.asReply).succeeded()
    show(
      text: TextRenderer.table(reply.sections, style: style),
      json: JSONRenderer.sections(reply.sections, revision: reply.revision))
    return .success
  }
}
