import SectionClient

extension CommandSpec {
  /// `sectionctl view`.
  static let view = CommandSpec(
    usage: ["view [--json]"],
    summary: "the accordion as a person sees it: open sections show their items",
    details: """
      Each section is a header marked ▾ when open and ▸ when closed (- and + when the
      terminal is not UTF-8); the items of open sections are indented under it.
      With --json: like list, and each section has \"items\": its texts when open, [] when closed.
      """,
    example: "sectionctl view",
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .view)
      return .view
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.showView) })
}

extension Runner {
  fileprivate func showView() throws(ClientError) -> ExitStatus {
    let reply = try connect().perform(Request<Listing>.view.asReply).succeeded()
    show(
      text: TextRenderer.accordion(reply.sections, items: reply.items, style: style),
      json: JSONRenderer.view(reply.sections, items: reply.items, revision: reply.revision))
    return .success
  }
}
