import SectionClient

extension CommandSpec {
  /// `sectionctl open REF...`, `open --all`.
  static let open = CommandSpec(
    usage: ["open [--json] REF...", "open [--json] --all"],
    summary: "open sections (in exclusive mode the open one closes)",
    details: """
      Arguments:
        REF     a section's index or id; several are opened in the order given
      Options:
        --all   open every section (multi mode only)
      Each REF is a request of its own, not all or nothing: one the daemon refuses (no such
      section) is reported and the others still happen; 'sectionctl batch' is all or nothing.
      Prints the sections named, as they are after the last change. With --json: {\"revision\", \"sections\": [...]}.
      """,
    example: "sectionctl open fruit 2",
    arguments: [.sections],
    parse: { (arguments, options) throws(CommandLineError) in
      try SectionChange.parse(.open, arguments, all: options.all)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runChange) })
}
