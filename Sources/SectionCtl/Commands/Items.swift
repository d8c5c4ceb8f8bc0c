import SectionClient

extension CommandSpec {
  /// `sectionctl items REF`.
  static let items = CommandSpec(
    usage: ["items [--json] REF"],
    summary: "every item of one section, open or not",
    details: """
      Arguments:
        REF   a section's index as 'sectionctl list' shows it, or its id
      With --json: {\"revision\", \"items\": [{\"section\", \"position\", \"text\"}]}.
      """,
    example: "sectionctl items fruit",
    arguments: [.section],
    parse: { (arguments, _) throws(CommandLineError) in
      guard arguments.count == 1 else {
        throw .usage("items needs exactly one section (an index or an id), got \(arguments.count)")
      }
      return .items(try ArgumentParser.reference(arguments[0]))
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.showItems) })
}

extension Runner {
  fileprivate func showItems() throws(ClientError) -> ExitStatus {
    guard case .items(let ref) = invocation.command else { preconditionFailure("items runs .items") }
    let reply = try connect().perform(Request<[ListedItem]>.items(ref).asReply).succeeded()
    show(
      text: TextRenderer.items(reply.items), json: JSONRenderer.items(reply.items, revision: reply.revision)
    )
    return .success
  }
}
