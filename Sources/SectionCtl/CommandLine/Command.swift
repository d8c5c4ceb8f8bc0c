import SectionClient

/// What one run of sectionctl is to do, as the command line asked.
enum Command: Equatable, Sendable {
  case list
  case view
  case items(String)
  /// Open, close or toggle the sections named, in order.
  case change(SectionAction, refs: [String])
  /// `open --all` or `close --all`.
  case changeAll(SectionAction)
  /// Show the mode, or switch to the one given.
  case mode(Mode?)
  case status
  /// Every list sectionctl can reach, the user's and the system's, one line each.
  case lists
  case reload
  /// `reload --fresh`: the config as it is, clients' edits dropped; `force`: even when the
  /// daemon has no config file (its built-in demo set would replace the list).
  case reloadFresh(force: Bool)
  case ping
  /// `from`: resume after that revision (`SUBSCRIBE FROM`) instead of starting with the state.
  case watch(count: Int?, view: Bool, from: UInt64?)
  /// The saved changes with who made them, as `LogRequest` picks them; with `follow`, then each new one.
  case log(LogRequest)
  /// The full-screen, live accordion.
  case ui
  case send([String])
  /// Relay standard input and output to the socket.
  case pipe
  /// A runtime edit: the request to send (INSERT, DELETE, MOVE, RENAME or ITEM ...).
  case edit(Edit)
  /// Request lines read from standard input, sent as one BATCH.
  case batch
  /// Help on sectionctl, or on one subcommand.
  case help(Subcommand?)
  case version
  /// Exit 0 when the section is open, 1 when closed, 4 when there is none.
  /// `quiet`: -q, only the exit status.
  case isOpen([String], quiet: Bool)
  /// The list as it is now, as a config file.
  case export
  /// An interactive prompt: commands with line editing and history, events as they come.
  case shell
  /// A completion script: "bash" or "zsh".
  case completion(String)
  /// What a completion script asks for: valid ids, ids with titles, or list names.
  case candidates(CompletionCandidates)

  /// The command whose file runs it (`CommandSpec.run`).
  var subcommand: Subcommand {
    switch self {
    case .list: .list
    case .view: .view
    case .items: .items
    case .change(let action, _), .changeAll(let action): Subcommand(rawValue: action.rawValue)!
    case .mode: .mode
    case .status: .status
    case .lists: .lists
    case .reload, .reloadFresh: .reload
    case .ping: .ping
    case .watch: .watch
    case .log: .log
    case .ui: .ui
    case .send: .send
    case .pipe: .pipe
    case .edit(let edit): edit.command
    case .batch: .batch
    case .help, .version: .help
    case .isOpen: .isOpen
    case .export: .export
    case .shell: .shell
    case .completion, .candidates: .completion
    }
  }

  /// Whether the command only reads, so that the read-only socket serves it as well.
  var onlyReads: Bool {
    switch self {
    case .list, .view, .items, .status, .lists, .ping, .isOpen, .export, .mode(nil), .log, .candidates: true
    default: false
    }
  }
}

/// Which changes `log` prints: `-n`, `--from`, `--since`, `--follow`.
struct LogRequest: Equatable, Sendable {
  /// `-n`: at most this many, the newest (nil: 20, or every one `from` or `since` picks).
  var count: Int? = nil
  var follow = false
  /// `--from REV`: the changes after that revision (as etcdctl's `watch --rev`).
  var from: UInt64? = nil
  /// `--since TIME`: the changes made at or after this many seconds since the epoch.
  var since: Int? = nil

  /// How many `log` prints without `-n`, `--from` or `--since`: as `HISTORY` alone.
  static let defaultCount = 20
}

/// A runtime edit's request (`add`, `rm`, `mv`, `rename`, `item ...`), as the library defines
/// it; two are equal when they send the same line.
struct Edit: Equatable, Sendable {
  let request: Request<UInt64>
  /// The command that made it (`add`, `rm`, `mv`, `rename` or `item`).
  let command: Subcommand

  /// The request line, as `batch` names it to a person who typed the command instead.
  var line: String { request.lines.joined(separator: "\n") }

  static func == (lhs: Edit, rhs: Edit) -> Bool { lhs.request.lines == rhs.request.lines }
}
