import SectionClient

extension CommandSpec {
  /// `sectionctl toggle REF...`.
  static let toggle = CommandSpec(
    usage: ["toggle [--json] REF..."],
    summary: "open closed sections, close open ones",
    details: """
      Arguments:
        REF   a section's index or id; several are toggled in the order given
      Each REF is a request of its own, not all or nothing (see 'sectionctl batch').
      Prints the sections named, as they are after the last change. With --json: {\"revision\", \"sections\": [...]}.
      """,
    example: "sectionctl toggle 0",
    arguments: [.sections],
    parse: { (arguments, options) throws(CommandLineError) in
      try SectionChange.parse(.toggle, arguments, all: options.all)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runChange) })
}
