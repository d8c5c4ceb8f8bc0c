import SectionClient

extension CommandSpec {
  /// `sectionctl item add|rm|mv|set ...`.
  static let item = CommandSpec(
    usage: [
      "item add [--json] [--at POSITION] REF TEXT...", "item rm [--json] REF POSITION",
      "item mv [--json] REF FROM TO", "item set [--json] REF POSITION TEXT...",
    ],
    summary: "add, delete, move or replace one item of a section",
    details: """
      Actions:
        add REF TEXT...            add an item at the end (or at --at POSITION)
        rm REF POSITION            delete the item at POSITION (0 is the first)
        mv REF FROM TO             move an item within its section
        set REF POSITION TEXT...   replace an item's text
      \(SectionCtlText.freeText)
      \(SectionCtlText.editOutput)
      """,
    example: "sectionctl item add news Call Bob",
    actions: [
      CommandAction(name: "add", arguments: [.section, .text(noun: "text")]),
      CommandAction(name: "rm", arguments: [.section, .value(noun: "position")]),
      CommandAction(name: "mv", arguments: [.section, .value(noun: "from"), .value(noun: "to")]),
      CommandAction(name: "set", arguments: [.section, .value(noun: "position"), .text(noun: "text")]),
    ],
    parse: { (arguments, options) throws(CommandLineError) in
      var words = EditWords(.item, arguments)
      let action = try words.next("an action: add, rm, mv or set")
      if options.at != nil && !CommandOption.at.applies(to: .item, action: action) {
        throw .usage("--at works only with add and item add")
      }
      switch action {
      case "add":
        let section = try words.ref()
        let request: Request<UInt64> = .insertItem(try words.rest("a text"), in: section, at: options.at)
        return try words.edit(request)
      case "rm":
        let section = try words.ref()
        let request: Request<UInt64> = .deleteItem(at: try words.number("the item's position"), in: section)
        return try words.edit(request)
      case "mv":
        let section = try words.ref()
        let from = try words.number("the item's position")
        let to = try words.number("the position to move to")
        return try words.edit(.moveItem(from: from, to: to, in: section))
      case "set":
        let section = try words.ref()
        let position = try words.number("the item's position")
        let request: Request<UInt64> = .setItem(at: position, to: try words.rest("a text"), in: section)
        return try words.edit(request)
      default: throw .usage("unknown item action '\(action)'; the actions are add, rm, mv and set")
      }
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runEdit) })
}
