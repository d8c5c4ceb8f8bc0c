import SectionClient

extension CommandSpec {
  /// `sectionctl rm REF`.
  static let `rm` = CommandSpec(
    usage: ["rm [--json] REF"],
    summary: "delete a section",
    details: """
      Arguments:
        REF   a section's index or id
      \(SectionCtlText.editOutput)
      """,
    example: "sectionctl rm news",
    arguments: [.section],
    parse: { (arguments, _) throws(CommandLineError) in
      var words = EditWords(.rm, arguments)
      let request: Request<UInt64> = .delete(try words.ref())
      return try words.edit(request)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runEdit) })
}
