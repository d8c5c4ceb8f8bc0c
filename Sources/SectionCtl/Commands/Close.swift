import SectionClient

extension CommandSpec {
  /// `sectionctl close REF...`, `close --all`.
  static let close = CommandSpec(
    usage: ["close [--json] REF...", "close [--json] --all"],
    summary: "close sections",
    details: """
      Arguments:
        REF     a section's index or id; several are closed in the order given
      Options:
        --all   close every section
      Each REF is a request of its own, not all or nothing: one the daemon refuses (no such
      section) is reported and the others still happen; 'sectionctl batch' is all or nothing.
      Prints the sections named, as they are after the last change. With --json: {\"revision\", \"sections\": [...]}.
      """,
    example: "sectionctl close --all",
    arguments: [.sections],
    parse: { (arguments, options) throws(CommandLineError) in
      try SectionChange.parse(.close, arguments, all: options.all)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runChange) })
}
