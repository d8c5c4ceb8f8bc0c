import SectionClient

extension CommandSpec {
  /// `sectionctl add [--at INDEX] ID TITLE...`.
  static let add = CommandSpec(
    usage: ["add [--json] [--at INDEX] ID TITLE..."],
    summary: "add a new section, closed and empty (at the end, or --at INDEX)",
    details: """
      Arguments:
        ID      the new section's id: letters, digits, '-', '_' and '.', not all digits, unique
        TITLE   its title; several words are joined with spaces
      Options:
        --at INDEX   where to insert it (0 is the top); the default is the end
      \(SectionCtlText.freeText)
      \(SectionCtlText.editOutput)
      """,
    example: "sectionctl add --at 0 news Latest news",
    arguments: [.value(noun: "id"), .text(noun: "title")],
    parse: { (arguments, options) throws(CommandLineError) in
      var words = EditWords(.add, arguments)
      let id = try ArgumentParser.reference(try words.next("an id"))
      let request: Request<UInt64> = .insert(id: id, title: try words.rest("a title"), at: options.at)
      return try words.edit(request)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runEdit) })
}
