import SectionClient

/// `sectionctl completion bash|zsh`: the completion scripts, printed for a shell to load
/// (`source <(sectionctl completion bash)`), and what `make install` and the package write
/// out (scripts/install.sh). The commands, their options and what each argument is come from
/// the command table (`Subcommand.arguments`, `CommandOption`), as the help and the shell's Tab
/// do, so a command or an option cannot be missing from one of them.
enum Completion {
  /// For bash-completion: commands, options, modes, and section ids asked from the daemon.
  static var bash: String {
    let options = CommandOption.allCases
    // Each option as bash has always offered it: the long spelling, then the short one.
    func offered(_ options: [CommandOption]) -> String {
      options.flatMap { [$0.long] + ($0.short.map { [$0] } ?? []) }.joined(separator: " ")
    }
    func spellings(_ kinds: [CommandOption.ValueKind]) -> String {
      options.filter { $0.value.map { kinds.contains($0.kind) } ?? false }.flatMap(\.spellings)
        .joined(separator: " | ")
    }
    // Commands with the same options share a branch: open | close) options+=" --all" ;;
    var groups: [(names: [String], words: String)] = []
    for command in Subcommand.allCases where !command.options.isEmpty {
      let words = offered(command.options)
      if let index = groups.firstIndex(where: { $0.words == words }) {
        groups[index].names.append(command.rawValue)
      } else {
        groups.append(([command.rawValue], words))
      }
    }
    let perCommand = groups.map { "    \($0.names.joined(separator: " | "))) options+=\" \($0.words)\" ;;\n" }
      .joined()
    return #"""
      # bash completion for sectionctl(1): commands, options, modes, and section ids asked from the
      # running daemon (through its read-only socket when the control socket is refused, so users
      # outside the daemon's group get them too).

      # _sectionctl_candidates WHAT OPTION...: adds to COMPREPLY each line of `sectionctl OPTION...
      # completion WHAT` (ids, lists) that begins with $cur. sectionctl prints only what a real id
      # or list name can be, and the lines are taken as data: compgen -W would run the $(...) and
      # backquotes of whatever a server at a socket named on the line sent.
      _sectionctl_candidates() {
        local what=$1 candidate
        shift
        while IFS= read -r candidate; do
          [[ $candidate == "$cur"* ]] && COMPREPLY+=("$candidate")
        done < <(sectionctl "$@" --timeout 2 completion "$what" 2>/dev/null)
      }

      _sectionctl() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        COMPREPLY=()
        local commands="\#(Subcommand.allCases.map(\.rawValue).joined(separator: " "))"
        local options="\#(offered(options.filter { $0.scope == nil }))"
        local command="" i
        local -a socket=() arguments=()

        case $prev in
        \#(spellings([.path])))
          mapfile -t COMPREPLY < <(compgen -f -- "$cur")
          return
          ;;
        \#(spellings([.listName])))
          _sectionctl_candidates lists
          return
          ;;
        \#(spellings([.plain]))) return ;;
        esac

        # The command, and its arguments before the word being completed; the options that
        # name the daemon are kept to ask it for ids.
        for ((i = 1; i < COMP_CWORD; i++)); do
          case ${COMP_WORDS[i]} in
          \#(spellings([.path, .listName])))
            socket+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
            ((i++))
            ;;
          \#(spellings([.plain]))) ((i++)) ;;
          -*) ;;
          *)
            if [[ -z $command ]]; then command=${COMP_WORDS[i]}; else arguments+=("${COMP_WORDS[i]}"); fi
            ;;
          esac
        done

        if [[ $cur == -* ]]; then
          case $command in
      \#(perCommand)    esac
          COMPREPLY=($(compgen -W "$options" -- "$cur"))
          return
        fi

        # COMMAND:FIRST-ARGUMENT:HOW-MANY-ARGUMENTS, matched against where each command wants what.
        case $command:${arguments[0]-}:${#arguments[@]} in
      \#(bashArguments())  esac
      }

      complete -F _sectionctl sectionctl
      """#
  }

  /// The branches of the case that completes an argument: `pattern | pattern) action ;;` for each
  /// thing offered, from the command table. `first` is the action of a command with actions.
  private static func bashArguments() -> String {
    var branches: [(action: String, patterns: [String])] = []
    func add(
      _ command: String, _ first: String?, _ count: Int, _ kind: ArgumentKind, repeatsFrom start: Int = 0
    ) {
      let action: String
      switch kind {
      case .section, .sections: action = #"_sectionctl_candidates ids "${socket[@]}""#
      case .choice(_, let words):
        action = #"COMPREPLY=($(compgen -W "\#(words.joined(separator: " "))" -- "$cur"))"#
      case .command: action = #"COMPREPLY=($(compgen -W "$commands" -- "$cur"))"#
      case .value, .values, .text: return
      }
      // A repeated argument that completes is the first of its command (or action), so any
      // count of arguments from there on is its.
      precondition(!kind.repeats || count == start, "bash completes a repeated argument only as the first")
      let pattern =
        kind.repeats ? "\(command):\(first.map { $0 + ":" } ?? "")*" : "\(command):\(first ?? "*"):\(count)"
      if let index = branches.firstIndex(where: { $0.action == action }) {
        branches[index].patterns.append(pattern)
      } else {
        branches.append((action, [pattern]))
      }
    }
    add("", "", 0, .command)
    for command in Subcommand.allCases {
      let name = command.rawValue
      if command.actions.isEmpty {
        for (index, kind) in command.arguments.enumerated() { add(name, nil, index, kind) }
      } else {
        add(name, "", 0, command.argument(at: 0, after: [])!)
        for action in command.actions {
          for (index, kind) in action.arguments.enumerated() {
            add(name, action.name, index + 1, kind, repeatsFrom: 1)
          }
        }
      }
    }
    return branches.map { "  \($0.patterns.joined(separator: " | "))) \($0.action) ;;\n" }.joined()
  }
}

extension CommandSpec {
  /// `sectionctl completion bash|zsh`, and the candidates its scripts ask for.
  static let completion = CommandSpec(
    usage: ["completion bash|zsh"],
    summary: "print the bash or zsh completion script",
    details: """
      Prints the completion script of the shell named, which completes commands, options,
      modes and the sections' ids (asked from the daemon as you type). Load it now with
      'source <(sectionctl completion bash)', or keep it: 'sectionctl completion bash >
      ~/.local/share/bash-completion/completions/sectionctl' (zsh: a file _sectionctl in a
      directory of $fpath). make install and the package install both already. The scripts
      run 'sectionctl completion ids|titles|lists', which print the valid section ids (with
      their titles) and list names one a line, whatever the daemon answers besides.
      """,
    example: "sectionctl completion bash > ~/.local/share/bash-completion/completions/sectionctl",
    arguments: [.choice(noun: "shell", words: ["bash", "zsh"])],
    parse: { (arguments, _) throws(CommandLineError) in
      if arguments.count == 1, let candidates = CompletionCandidates(rawValue: arguments[0]) {
        return .candidates(candidates)
      }
      guard arguments.count == 1, ["bash", "zsh"].contains(arguments[0]) else {
        throw .usage("completion needs one shell: bash or zsh")
      }
      return .completion(arguments[0])
    },
    run: { (runner) throws(CommandLineError) in
      try runner.lifting { () throws(ClientError) in
        switch runner.invocation.command {
        case .completion(let shell):
          runner.output.print((shell == "bash" ? Completion.bash : Completion.zsh) + "\n")
        case .candidates(let candidates): runner.output.print(try candidates.lines(runner))
        default: preconditionFailure("completion runs .completion and .candidates")
        }
        return .success
      }
    })
}
