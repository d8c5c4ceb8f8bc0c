import SectionClient

extension CommandSpec {
  /// `sectionctl mv REF INDEX`.
  static let mv = CommandSpec(
    usage: ["mv [--json] REF INDEX"],
    summary: "move a section to an index",
    details: """
      Arguments:
        REF     a section's index or id
        INDEX   where it goes, as an index of the list as it is
      \(SectionCtlText.editOutput)
      """,
    example: "sectionctl mv news 0",
    arguments: [.section, .value(noun: "index")],
    parse: { (arguments, _) throws(CommandLineError) in
      var words = EditWords(.mv, arguments)
      let section = try words.ref()
      let request: Request<UInt64> = .move(section, to: try words.number("the index to move to"))
      return try words.edit(request)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runEdit) })
}
