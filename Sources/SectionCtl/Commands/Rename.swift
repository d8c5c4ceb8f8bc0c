import SectionClient

extension CommandSpec {
  /// `sectionctl rename REF TITLE...`.
  static let rename = CommandSpec(
    usage: ["rename [--json] REF TITLE..."],
    summary: "give a section a new title (its id stays)",
    details: """
      Arguments:
        REF     a section's index or id
        TITLE   the new title; several words are joined with spaces
      \(SectionCtlText.freeText)
      \(SectionCtlText.editOutput)
      """,
    example: "sectionctl rename news \"Today's news\"",
    arguments: [.section, .text(noun: "title")],
    parse: { (arguments, _) throws(CommandLineError) in
      var words = EditWords(.rename, arguments)
      let section = try words.ref()
      let request: Request<UInt64> = .rename(section, to: try words.rest("a title"))
      return try words.edit(request)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runEdit) })
}
