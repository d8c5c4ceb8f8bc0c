import SectionClient

extension CommandSpec {
  /// `sectionctl ui`.
  static let ui = CommandSpec(
    usage: ["ui"],
    summary: "the accordion full screen, live and shared, with keys and mouse",
    details: """
      Draws the accordion as 'view' does, with a cursor and a status line (mode, revision,
      connection, socket), and keeps it live: a change made by anyone shows at once.
      Keys:
        Up Down  k j     move the cursor          Enter Space   open or close its section
        o  c             open / close it          O  C          open all / close all
        m                switch mode              g  G          first / last row
        PgUp PgDn        a page up / down         r             ask the daemon to reload
        a  i             add a section / an item  e  d          edit / delete at the cursor
        ?                show the keys            q Esc Ctrl-C  quit
      The prompt line of a, i and e edits as a shell's line: Left Right Home End and Ctrl-A E B F
      move, Backspace Delete Ctrl-D delete, Ctrl-U Ctrl-K Ctrl-W delete to the start, to the end,
      the word before the cursor; Enter sends, Esc cancels.
      Mouse: a click on a header opens or closes it; the wheel scrolls.
      With --readonly it is a viewer: keys that would change state are refused.
      If the daemon restarts, the screen stays and ui reconnects by itself.
      Needs a terminal (exits 2 otherwise: use view or watch); NO_COLOR turns colour off.
      """,
    example: "sectionctl --readonly ui",
    check: { (options) throws(CommandLineError) in
      if options.json { throw .usage("--json does not apply to ui, which is for people") }
      if options.timeout != nil {
        throw .usage("--timeout applies to one-shot commands; ui waits for the daemon by design")
      }
    },
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .ui)
      return .ui
    },
    run: { (runner) throws(CommandLineError) in
      // The connection's level, so that the ui offers only what it may from the first key: a
      // daemon that does not say (or the read-only socket) leaves it to the first refusal.
      let level =
        runner.invocation.readonly
        ? nil
        : (try? runner.connect().perform(Request<[String: String]>.status))?["access"].flatMap(
          AccessLevel.init)
      return try TerminalUI(
        path: runner.socketPath(), name: runner.invocation.name ?? "sectionctl-ui",
        readonly: runner.invocation.readonly, level: level, style: runner.style,
        environment: runner.environment
      ).run()
    })
}
