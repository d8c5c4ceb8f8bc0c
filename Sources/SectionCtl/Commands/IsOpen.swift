import SectionClient

extension CommandSpec {
  /// `sectionctl is-open REF...`.
  static let isOpen = CommandSpec(
    usage: ["is-open [-q] [--json] REF..."],
    summary: "print open or closed for each section; exit 0 if one is open (like systemctl is-active)",
    details: """
      Arguments:
        REF   a section's index or id; several may be given
      Prints open or closed for each (with --json: {"revision", "sections"}; with -q or --quiet
      nothing). Exit status: 0 one of them is open, 1 none is, 3 the daemon cannot be reached,
      4 one of them does not exist.
      """,
    example: "sectionctl is-open inbox && echo 'inbox is open'",
    arguments: [.sections],
    parse: { (arguments, options) throws(CommandLineError) in
      guard !arguments.isEmpty else {
        throw .usage("is-open needs at least one section (an index or an id)")
      }
      var refs: [String] = []
      for argument in arguments { refs.append(try ArgumentParser.reference(argument)) }
      return .isOpen(refs, quiet: options.quiet)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.isOpen) })
}

extension Runner {
  /// `is-open REF...`, as `systemctl is-active`: a line each, open or closed (none with
  /// `quiet`); 0 when any is open, 1 when none is, 4 when one of them does not exist.
  fileprivate func isOpen() throws(ClientError) -> ExitStatus {
    guard case .isOpen(let refs, let quiet) = invocation.command else {
      preconditionFailure("is-open runs .isOpen")
    }
    let list = try connect().perform(Request<Listing>.list.asReply).succeeded()
    var found: [ListedSection] = []
    var missing = false
    for ref in refs {
      let section: ListedSection?
      if ref.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
        section = Int(ref).flatMap { index in list.sections.first { $0.index == index } }
      } else {
        section = list.sections.first { $0.id == ref }
      }
      guard let section else {
        output.diagnose("no section \"\(ref)\": there are \(list.sections.count)")
        missing = true
        continue
      }
      found.append(section)
      if !quiet && !invocation.json { output.print(section.isOpen ? "open\n" : "closed\n") }
    }
    if !quiet && invocation.json { output.print(JSONRenderer.sections(found, revision: list.revision)) }
    if missing { return .noSection }
    return found.contains(where: \.isOpen) ? .success : .daemonError
  }
}
