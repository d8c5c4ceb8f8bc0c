/// One command of sectionctl as its own file in `Commands/` defines it: the words of its help,
/// what each of its arguments is, how its words become a `Command`, and how that runs. The
/// parser, `--help`, the shell's Tab and the bash and zsh completions are made from these
/// (through `Subcommand.spec`), so a command is one file and one line in `Subcommand`.
struct CommandSpec: Sendable {
  /// The synopsis lines, without the leading `sectionctl `.
  let usage: [String]
  /// One line for the command list of `sectionctl --help`, and zsh's description of it.
  let summary: String
  /// What the command does, its arguments and its options, beyond the summary.
  let details: String
  /// One command line that shows it in use, for its help.
  let example: String
  /// The positional arguments after the command (for a command with actions, after its action).
  var arguments: [ArgumentKind] = []
  /// The actions its first argument names, each with its own arguments; [] for most commands.
  var actions: [CommandAction] = []
  /// Refuses options that `CommandOption.scope` lets through but that mean nothing to the
  /// command as given (`--json` where it prints for people), before its arguments are read.
  var check: @Sendable (ArgumentParser.Options) throws(CommandLineError) -> Void = { _ in }
  /// Its arguments (the words after its name) as the `Command` to run.
  let parse:
    @Sendable (_ arguments: [String], _ options: ArgumentParser.Options) throws(CommandLineError) -> Command
  /// Carries the command out: `Runner.run` hands over every command but `--version`.
  let run: @Sendable (Runner) throws(CommandLineError) -> ExitStatus
}
