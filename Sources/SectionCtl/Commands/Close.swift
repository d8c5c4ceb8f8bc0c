import SectionClient

extension CommandSpec {
  /// `sectionctl close REF...`, `close --all`.
  static let close = CommandSpec(
    usage: ["close [--json] REF...", "close [--json] --all"],
    summary: "close sections",
    details: SectionChange.details(done: "closed", all: "close every section"),
    example: "sectionctl close --all",
    arguments: [.sections],
    parse: { (arguments, options) throws(CommandLineError) in
      try SectionChange.parse(.close, arguments, all: options.all)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runChange) })
}
