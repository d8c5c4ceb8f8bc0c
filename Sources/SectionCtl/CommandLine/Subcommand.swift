/// sectionctl's subcommands: with `Subcommand+Arguments` (what each argument is) and
/// `CommandOption` (the options), the one table that the parser, `--help`, the shell's Tab and
/// the bash and zsh completions (`Completion`) are made from, so that none of them lacks a command.
enum Subcommand: String, CaseIterable, Sendable {
  case list, view, items, open, close, toggle, mode, status, lists
  case reload, ping, watch, log, ui, send, pipe, help
  case add, rm, mv, rename, item, batch
  case isOpen = "is-open"
  case export, shell, completion

  /// The synopsis lines, without the leading `sectionctl `.
  var usage: [String] {
    switch self {
    case .list: ["list [--json]"]
    case .view: ["view [--json]"]
    case .items: ["items [--json] REF"]
    case .open: ["open [--json] REF...", "open [--json] --all"]
    case .close: ["close [--json] REF...", "close [--json] --all"]
    case .toggle: ["toggle [--json] REF..."]
    case .mode: ["mode [--json] [exclusive|multi]"]
    case .status: ["status [--json]"]
    case .lists: ["lists [--json]"]
    case .reload: ["reload [--json] [--fresh [--force]]"]
    case .ping: ["ping [--json]"]
    case .watch: ["watch [--json] [--view] [--count N] [--from REV]"]
    case .log: ["log [--json] [-n N] [--from REV|--since TIME] [-f|--follow]"]
    case .ui: ["ui"]
    case .send: ["send LINE..."]
    case .pipe: ["pipe [--list-from-query]"]
    case .help: ["help [COMMAND]"]
    case .add: ["add [--json] [--at INDEX] ID TITLE..."]
    case .rm: ["rm [--json] REF"]
    case .mv: ["mv [--json] REF INDEX"]
    case .rename: ["rename [--json] REF TITLE..."]
    case .item:
      [
        "item add [--json] [--at POSITION] REF TEXT...", "item rm [--json] REF POSITION",
        "item mv [--json] REF FROM TO", "item set [--json] REF POSITION TEXT...",
      ]
    case .batch: ["batch [--json] < REQUESTS"]
    case .isOpen: ["is-open [-q] [--json] REF..."]
    case .export: ["export > sections.json"]
    case .shell: ["shell"]
    case .completion: ["completion bash|zsh"]
    }
  }

  /// One line for the command list of `sectionctl --help`.
  var summary: String {
    switch self {
    case .list: "table of sections: index, id, state, item count, title (the default)"
    case .view: "the accordion as a person sees it: open sections show their items"
    case .items: "every item of one section, open or not"
    case .open: "open sections (in exclusive mode the open one closes)"
    case .close: "close sections"
    case .toggle: "open closed sections, close open ones"
    case .mode: "show the mode, or switch between exclusive and multi"
    case .status: "daemon version, socket, revision, mode and counts"
    case .lists: "every list this user can reach, named or not, system and own, one a line"
    case .reload: "make the daemon re-read its config file"
    case .ping: "check that the daemon answers, and how fast"
    case .watch: "print every change as it happens, until interrupted"
    case .log: "who changed what, and when: the last changes the daemon keeps"
    case .ui: "the accordion full screen, live and shared, with keys and mouse"
    case .send: "send raw protocol lines and print the raw replies"
    case .pipe: "relay standard input and output to the daemon's socket, for scripts and websocketd"
    case .help: "help on sectionctl or on one command"
    case .add: "add a new section, closed and empty (at the end, or --at INDEX)"
    case .rm: "delete a section"
    case .mv: "move a section to an index"
    case .rename: "give a section a new title (its id stays)"
    case .item: "add, delete, move or replace one item of a section"
    case .batch: "apply the request lines on standard input as one change, all or none"
    case .isOpen: "print open or closed for each section; exit 0 if one is open (like systemctl is-active)"
    case .export: "print the list as it is now as a config file sectiond --config accepts"
    case .shell: "an interactive prompt with line editing and history, showing changes as they come"
    case .completion: "print the bash or zsh completion script"
    }
  }

  var example: String {
    switch self {
    case .list: "sectionctl --json list | jq -r '.sections[] | select(.open) | .id'"
    case .view: "sectionctl view"
    case .items: "sectionctl items fruit"
    case .open: "sectionctl open fruit 2"
    case .close: "sectionctl close --all"
    case .toggle: "sectionctl toggle 0"
    case .mode: "sectionctl mode exclusive"
    case .status: "sectionctl status"
    case .lists: "sectionctl lists --json | jq -r '.lists[] | select(.name) | .name'"
    case .reload: "sectionctl reload"
    case .ping: "sectionctl ping || echo 'sectiond is down'"
    case .watch: "sectionctl watch | while read -r event rev rest; do echo \"$event at $rev\"; done"
    case .log: "sectionctl log -n 50 --json | jq -r '.changes[] | select(.name == \"waybar\") | .time'"
    case .ui: "sectionctl --readonly ui"
    case .send: "sectionctl send 'OPEN 1' LIST"
    case .pipe: "sectionctl --readonly pipe <<< 'VIEW'"
    case .help: "sectionctl help watch"
    case .add: "sectionctl add --at 0 news Latest news"
    case .rm: "sectionctl rm news"
    case .mv: "sectionctl mv news 0"
    case .rename: "sectionctl rename news \"Today's news\""
    case .item: "sectionctl item add news Call Bob"
    case .batch: "sectionctl batch < edits.txt"
    case .isOpen: "sectionctl is-open inbox && echo 'inbox is open'"
    case .export: "sectionctl export > sections.json && sectiond --check-config --config sections.json"
    case .shell: "sectionctl shell"
    case .completion: "sectionctl completion bash > ~/.local/share/bash-completion/completions/sectionctl"
    }
  }
}
