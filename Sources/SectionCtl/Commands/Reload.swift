import SectionClient

extension CommandSpec {
  /// `sectionctl reload`, `reload --fresh [--force]`.
  static let reload = CommandSpec(
    usage: ["reload [--json] [--fresh [--force]]"],
    summary: "make the daemon re-read its config file",
    details: """
      The daemon keeps open sections open by id, and clients' edits (see sectionctl(1)); if the
      new config is invalid it keeps the old one and sectionctl prints why and exits 1. Prints
      each section the reload dropped or added, then the count and the revision (with --json:
      {"revision", "dropped", "added"}). Needs the control socket, not --readonly.
      Options:
        --fresh   take the config as it is: sections clients added go, those they deleted come
                  back, those they edited take the config's title and items again. After
                  'sectionctl export' into the config file ('sectionctl status' names it), this
                  makes the list the config's own.
        --force   with --fresh, also when the daemon has no config file: its built-in demo set
                  then replaces the list (without --force, that is refused)
      """,
    example: "sectionctl reload",
    check: { (options) throws(CommandLineError) in
      if options.force && !options.fresh { throw .usage("--force works only with reload --fresh") }
    },
    parse: { (arguments, options) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .reload)
      return options.fresh ? .reloadFresh(force: options.force) : .reload
    },
    run: { (runner) throws(CommandLineError) in try runner.runReload() })
}

extension Runner {
  fileprivate func runReload() throws(CommandLineError) -> ExitStatus {
    guard case .reloadFresh(let force) = invocation.command else {
      try CommandLineError.lifting { () throws(ClientError) in try reload(fresh: false) }
      return .success
    }
    if !force,
      let config = try CommandLineError.lifting({ () throws(ClientError) in
        try daemonStatus().facts["config"]
      }), config == "-"
    {
      throw .usage(
        "the daemon on \(socketPath()) has no config file: it serves its built-in demo set, which "
          + "reload --fresh would put in place of the list, dropping every section clients added. "
          + "Add --force to do that; to keep the list, export it into a file and start sectiond "
          + "with --config FILE")
    }
    try CommandLineError.lifting { () throws(ClientError) in try reload(fresh: true) }
    return .success
  }

  /// Sends RELOAD (or RELOAD FRESH) between two LISTs, in one round trip, and prints
  /// what the reload dropped and added: a reload can take sections away (and their open
  /// state), which the one saying it should see. STATUS, in the same round trip, tells a
  /// fleet's host: there the reload replaced the list on every host, which is said too.
  private func reload(fresh: Bool) throws(ClientError) {
    let list = Request<Listing>.list.asReply
    let replies = try connect().replies(to: [
      list, Request<UInt64>.reload(fresh: fresh).asReply, list, Request<[String: String]>.status.asReply,
    ])
    let listed = try replies[0].succeeded()
    let before = listed.sections
    let reload = try replies[1].succeeded()
    let after = try replies[2].succeeded().sections
    // A reload that changed nothing sent nothing to the other hosts. A daemon older than
    // STATUS answers it ERR UNKNOWN: no fleet then.
    let fleetHost =
      reload.revision == listed.revision ? nil : (try? replies[3].succeeded())?.facts["fleet-host"]
    let dropped = before.filter { old in !after.contains { $0.id == old.id } }
    let added = after.filter { new in !before.contains { $0.id == new.id } }
    show(
      text: TextRenderer.reload(
        dropped: dropped, added: added, count: after.count, revision: reload.revision, fleetHost: fleetHost),
      json: JSONRenderer.reload(
        dropped: dropped, added: added, revision: reload.revision, fleetHost: fleetHost))
  }
}
