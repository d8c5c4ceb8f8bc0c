import SectionClient

extension CommandSpec {
  /// `sectionctl help [COMMAND]`, and what `--help` and `--version` print.
  static let help = CommandSpec(
    usage: ["help [COMMAND]"],
    summary: "help on sectionctl or on one command",
    details: """
      Arguments:
        COMMAND   the command to explain; every command also takes -h or --help
      """,
    example: "sectionctl help watch",
    arguments: [.command],
    parse: { (arguments, _) throws(CommandLineError) in
      guard arguments.count <= 1 else { throw .usage("help takes at most one command") }
      guard let topic = arguments.first else { return .help(nil) }
      guard let topicCommand = Subcommand(rawValue: topic) else {
        throw .usage("no help on '\(topic)': no such command")
      }
      return .help(topicCommand)
    },
    run: { (runner) throws(CommandLineError) in
      if case .help(let topic) = runner.invocation.command {
        runner.output.print(topic.map(HelpText.command) ?? HelpText.general())
      } else {
        runner.output.print("sectionctl \(Release.daemonVersion) (protocol \(Release.protocolVersion))\n")
      }
      return .success
    })
}
