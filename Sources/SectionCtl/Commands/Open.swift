import SectionClient

extension CommandSpec {
  /// `sectionctl open REF...`, `open --all`.
  static let open = CommandSpec(
    usage: ["open [--json] REF...", "open [--json] --all"],
    summary: "open sections (in exclusive mode the open one closes)",
    details: SectionChange.details(done: "opened", all: "open every section (multi mode only)"),
    example: "sectionctl open fruit 2",
    arguments: [.sections],
    parse: { (arguments, options) throws(CommandLineError) in
      try SectionChange.parse(.open, arguments, all: options.all)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runChange) })
}
