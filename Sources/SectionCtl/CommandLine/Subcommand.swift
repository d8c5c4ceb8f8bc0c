/// sectionctl's commands, in the order `--help` lists them: each one's definition (`spec`) is a
/// file of its own in `Commands/`; with `CommandOption` (the options), the one table that the
/// parser, `--help`, the shell's Tab and the bash and zsh completions (`Completion`) are made
/// from, so that none of them lacks a command.
enum Subcommand: String, CaseIterable, Sendable {
  case list, view, items, open, close, toggle, mode, status, lists
  case reload, ping, watch, log, ui, send, pipe, help
  case add, rm, mv, rename, item, batch
  case isOpen = "is-open"
  case export, shell, completion

  /// The command's own definition, in its file in `Commands/`.
  var spec: CommandSpec {
    switch self {
    case .list: .list
    case .view: .view
    case .items: .items
    case .open: .open
    case .close: .close
    case .toggle: .toggle
    case .mode: .mode
    case .status: .status
    case .lists: .lists
    case .reload: .reload
    case .ping: .ping
    case .watch: .watch
    case .log: .log
    case .ui: .ui
    case .send: .send
    case .pipe: .pipe
    case .help: .help
    case .add: .add
    case .rm: .rm
    case .mv: .mv
    case .rename: .rename
    case .item: .item
    case .batch: .batch
    case .isOpen: .isOpen
    case .export: .export
    case .shell: .shell
    case .completion: .completion
    }
  }

  var usage: [String] { spec.usage }
  var summary: String { spec.summary }
  var details: String { spec.details }
  var example: String { spec.example }
  var arguments: [ArgumentKind] { spec.arguments }
  var actions: [CommandAction] { spec.actions }
}
