import SectionClient

extension CommandSpec {
  /// `sectionctl status`.
  static let status = CommandSpec(
    usage: ["status [--json]"],
    summary: "daemon version, socket, revision, mode and counts",
    details: """
      With --json: {\"daemon_version\", \"protocol\", \"socket\", \"revision\", \"mode\", \"sections\",
      \"open\", \"open_ids\", \"items\", \"visible_items\"}.
      """,
    example: "sectionctl status",
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .status)
      return .status
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.showStatus) })
}

extension Runner {
  fileprivate func showStatus() throws(ClientError) -> ExitStatus {
    let status = try daemonStatus()
    show(text: TextRenderer.status(status), json: JSONRenderer.status(status))
    return .success
  }
}
