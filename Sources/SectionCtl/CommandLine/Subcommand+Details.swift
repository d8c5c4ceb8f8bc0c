extension Subcommand {
  /// What the command does, its arguments and its options, beyond the summary.
  var details: String {
    switch self {
    case .list:
      "With --json: {\"revision\", \"sections\": [{\"index\", \"id\", \"title\", \"open\", \"item_count\"}]}."
    case .view:
      """
      Each section is a header marked ▾ when open and ▸ when closed (- and + when the
      terminal is not UTF-8); the items of open sections are indented under it.
      With --json: like list, and each section has \"items\": its texts when open, [] when closed.
      """
    case .items:
      """
      Arguments:
        REF   a section's index as 'sectionctl list' shows it, or its id
      With --json: {\"revision\", \"items\": [{\"section\", \"position\", \"text\"}]}.
      """
    case .open, .close:
      """
      Arguments:
        REF     a section's index or id; several are \(self == .open ? "opened" : "closed") in the order given
      Options:
        --all   \(self == .open ? "open every section (multi mode only)" : "close every section")
      Each REF is a request of its own, not all or nothing: one the daemon refuses (no such
      section) is reported and the others still happen; 'sectionctl batch' is all or nothing.
      Prints the sections named, as they are after the last change. With --json: {\"revision\", \"sections\": [...]}.
      """
    case .toggle:
      """
      Arguments:
        REF   a section's index or id; several are toggled in the order given
      Each REF is a request of its own, not all or nothing (see 'sectionctl batch').
      Prints the sections named, as they are after the last change. With --json: {\"revision\", \"sections\": [...]}.
      """
    case .mode:
      """
      Arguments:
        exclusive   at most one section open: opening one closes the other
                    (switching keeps only the most recently opened section open)
        multi       every section opens and closes on its own
      With --json: {\"revision\", \"mode\"}.
      """
    case .status:
      """
      With --json: {\"daemon_version\", \"protocol\", \"socket\", \"revision\", \"mode\", \"sections\",
      \"open\", \"open_ids\", \"items\", \"visible_items\"}.
      """
    case .lists:
      """
      Looks for sockets in your own daemons' directory ($XDG_RUNTIME_DIR/sectiond) and the
      system's (/run/sectiond): the unnamed list's, and a directory per named list
      (sectiond --list NAME, sectiond@NAME.service). Each is asked as 'status' asks, through
      its read-only socket when the control socket is refused (CLIENTS is then -). A list that
      does not answer within 5 s (--timeout SECONDS) is listed with why. Use one with
      'sectionctl -l NAME COMMAND'.
      With --json: {\"lists\": [{\"name\" (null: the unnamed list), \"scope\" (user or system),
      \"socket\", \"sections\", \"open\", \"revision\", \"clients\", \"error\"}]}.
      """
    case .reload:
      """
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
      """
    case .ping:
      "Exits 0 when the daemon answers, 3 when it cannot be reached. With --json: {\"socket\", \"milliseconds\"}."
    case .watch:
      """
      First prints the current state, then one line per change:
        state REV MODE IDS|-     opened REV INDEX ID     closed REV INDEX ID
        mode REV MODE            reload REV
        inserted REV INDEX ID    deleted REV INDEX ID    moved REV FROM TO ID
        renamed REV INDEX ID     items REV INDEX ID COUNT
      If the daemon restarts, watch reconnects (waiting at most 2 s between attempts) and resumes
      where it left off: the changes it missed, each with its revision, and no new state line;
      a state line only where the daemon no longer keeps them (sectiond --history). Ctrl-C or
      SIGTERM ends it with status 0.
      Options:
        --count N    exit after N changes
        --view       redraw the accordion (as 'sectionctl view') on every change
        --from REV   start after revision REV instead of with the state: the changes since
                     first, as they happened, where the daemon still keeps them (else the state)
      With --json: one object per line, {\"event\": \"state\"|\"opened\"|\"closed\"|\"mode\"|\"reload\"|
      \"inserted\"|\"deleted\"|\"moved\"|\"renamed\"|\"items\", \"revision\", ...}.
      """
    case .log:
      """
      The daemon keeps its last changes (sectiond --history, 1000 by default) with when each was
      made, how (socket, bus, reload) and by whom; log prints them oldest first:
        42  20:41:07  alice (waybar, 4242)  opened net
      the revision, the time in local time (with the date when not today), the user and the
      client's name (CLIENT NAME or --name, else its process name) and pid, and the change in
      words. On the read-only socket who is not shown. For what is older, ask
      journalctl -u sectiond (--log-changes).
      Options:
        -n, --lines N  how many changes (default 20; with --from or --since, the last N of them)
        --from REV     the changes after revision REV (where the last line read left off)
        --since TIME   the changes made since TIME: 2026-12-03, '2026-12-03 20:41[:07]',
                       20:41 (today), today, yesterday, now, -5min, '1h ago', -2d
        -f, --follow   then print each change as it is made, until interrupted; a daemon
                       back at a lower revision (its state removed) is said, and followed
      With --json: {\"revision\", \"changes\": [{\"revision\", \"time\", \"via\", \"uid\", \"pid\",
      \"user\", \"name\", \"event\": {as watch --json}}]}; with --follow one change object per line.
      """
    case .ui:
      """
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
      """
    case .send:
      """
      Arguments:
        LINE   a request such as 'TOGGLE 1'; each is sent in turn and its reply printed as it
               came (control characters shown as escapes)
      Exits 1 if any reply is ERR. 'sectionctl send HELP' lists the daemon's commands.
      """
    case .pipe:
      """
      Connects to the socket (the control socket, or the read-only one with --readonly) and relays
      bytes both ways: request lines from standard input go to the daemon, its replies and events
      to standard output, each as soon as it arrives (never held back to fill a buffer). At end of
      input it sends what is left and waits for the last replies; it exits when the daemon closes
      the connection (after QUIT, or once every reply is out) or standard output's reader goes away.
      One pipe is one protocol client: SUBSCRIBE and the events follow on the same stream.
      This is what websocketd runs for each browser connection of sectiond's web page.
      Options:
        --list-from-query   for websocketd: the page's ?list=NAME ($QUERY_STRING) picks the
                            list NAME, whose socket of the same name is in the directory NAME
                            beside the socket given (/run/sectiond/readonly.sock gives
                            /run/sectiond/NAME/readonly.sock); without it, that socket's list
      Exits 0 when the connection ends, 3 when the daemon cannot be reached or the connection fails.
      """
    case .help:
      """
      Arguments:
        COMMAND   the command to explain; every command also takes -h or --help
      """
    case .add:
      """
      Arguments:
        ID      the new section's id: letters, digits, '-', '_' and '.', not all digits, unique
        TITLE   its title; several words are joined with spaces
      Options:
        --at INDEX   where to insert it (0 is the top); the default is the end
      \(SectionCtlText.freeText)
      \(SectionCtlText.editOutput)
      """
    case .rm:
      """
      Arguments:
        REF   a section's index or id
      \(SectionCtlText.editOutput)
      """
    case .mv:
      """
      Arguments:
        REF     a section's index or id
        INDEX   where it goes, as an index of the list as it is
      \(SectionCtlText.editOutput)
      """
    case .rename:
      """
      Arguments:
        REF     a section's index or id
        TITLE   the new title; several words are joined with spaces
      \(SectionCtlText.freeText)
      \(SectionCtlText.editOutput)
      """
    case .item:
      """
      Actions:
        add REF TEXT...            add an item at the end (or at --at POSITION)
        rm REF POSITION            delete the item at POSITION (0 is the first)
        mv REF FROM TO             move an item within its section
        set REF POSITION TEXT...   replace an item's text
      \(SectionCtlText.freeText)
      \(SectionCtlText.editOutput)
      """
    case .isOpen:
      """
      Arguments:
        REF   a section's index or id; several may be given
      Prints open or closed for each (with --json: {"revision", "sections"}; with -q or --quiet
      nothing). Exit status: 0 one of them is open, 1 none is, 3 the daemon cannot be reached,
      4 one of them does not exist.
      """
    case .export:
      """
      Prints {"mode", "sections": [{"id", "title", "open", "items"}]}: the list as clients shaped
      it, with the mode and the open sections as they are now, which 'sectiond --config' accepts.
      To make it the config: write it over the config file and reload ('sectionctl reload');
      sections clients edited keep their edits, now the same as the config's (see sectionctl(1)).
      """
    case .shell:
      """
      A prompt that reads sectionctl commands (list, open 1, add id Title, help ...) or raw
      protocol lines (upper-case verbs: LIST, OPEN 1), with line editing and history (libedit:
      Up/Down, Ctrl-R; Tab completes commands, section ids, modes and item actions, each where
      it belongs); the history is kept in
      $XDG_STATE_HOME/sectionctl/history (~/.local/state/sectionctl/history). Changes made
      anywhere are printed as they come, between prompts. Ctrl-D or 'quit' ends it.
      'sectionctl' with no command starts it when standard input and output are a terminal.
      """
    case .completion:
      """
      Prints the completion script of the shell named, which completes commands, options,
      modes and the sections' ids (asked from the daemon as you type). Load it now with
      'source <(sectionctl completion bash)', or keep it: 'sectionctl completion bash >
      ~/.local/share/bash-completion/completions/sectionctl' (zsh: a file _sectionctl in a
      directory of $fpath). make install and the package install both already. The scripts
      run 'sectionctl completion ids|titles|lists', which print the valid section ids (with
      their titles) and list names one a line, whatever the daemon answers besides.
      """
    case .batch:
      """
      Reads request lines (as 'sectionctl send HELP' lists them: INSERT, DELETE, MOVE, RENAME,
      ITEM ..., OPEN, CLOSE, TOGGLE, MODE) from standard input and sends them between BATCH and
      END: the daemon checks them all, then applies them as one change, or none of them and says
      which line failed (blank lines count, as in the input). The input is checked whole first:
      a line that is END or BATCH, or that is not UTF-8, is refused (exit 2) and nothing is sent.
      \(SectionCtlText.editOutput)
      """
    }
  }
}

/// Text shared by the help of several commands.
enum SectionCtlText {
  static let freeText = """
    Once the text has begun, every further word is the text's, '-2' and '-j' too: put
    options before it, and '--' before a text whose first word begins with '-'.
    """
  static let editOutput = """
    Needs the control socket, not --readonly. Prints the new revision ('revision 7'; with
    --json: {"revision"}).
    """
}
