extension Completion {
  /// For zsh's compsys, the same as `bash`, with the commands' summaries and the ids' titles.
  static var zsh: String {
    let commands = Subcommand.allCases.map { "    \(quoted("\($0.rawValue):\($0.summary)"))\n" }.joined()
    let globalOptions = CommandOption.allCases.filter { $0.scope == nil }
    let global = globalOptions.flatMap { specs($0, among: globalOptions) }
      .map { "    \(quoted($0)) \\\n" }.joined()
    let perCommand = Subcommand.allCases.map(zshArguments).joined()
    return #"""
      #compdef sectionctl
      # zsh completion for sectionctl(1): commands, options, modes, and section ids with their titles
      # asked from the running daemon (through its read-only socket when the control socket is
      # refused, so users outside its group get them too).

      _sectionctl_ids() {
        local -a ids
        # `id:title` a line: sectionctl prints only valid ids (no ':' in them), titles escaped;
        # the lines are data in an array, never code.
        ids=(${(f)"$(sectionctl $_sectionctl_socket $_sectionctl_readonly $_sectionctl_list --timeout 2 \
          completion titles 2>/dev/null)"})
        _describe -t sections 'section' ids
      }

      _sectionctl_lists() {
        local -a lists
        lists=(${(f)"$(sectionctl completion lists 2>/dev/null)"})
        _describe -t lists 'list' lists
      }

      # The option $1 as typed on the line, (--name value) or (--name=value), in reply; () without it.
      _sectionctl_option() {
        local i=${words[(I)$1(|=*)]}
        reply=()
        (( i )) || return 0
        if [[ $words[i] == $1=* ]]; then
          reply=($words[i])
        else
          reply=($1 $words[i+1])
        fi
      }

      _sectionctl() {
        local curcontext=$curcontext state line
        local -a commands reply _sectionctl_socket _sectionctl_readonly _sectionctl_list
        _sectionctl_option --socket
        (( $#reply )) || _sectionctl_option -s
        _sectionctl_socket=($reply)
        _sectionctl_option --readonly-socket
        _sectionctl_readonly=($reply)
        _sectionctl_option --list
        (( $#reply )) || _sectionctl_option -l
        _sectionctl_list=($reply)
        commands=(
      \#(commands)  )
        _arguments -C \
      \#(global)    '1: :->command' \
          '*:: :->arguments' && return
        case $state in
        command) _describe -t commands 'sectionctl command' commands ;;
        arguments)
          case $words[1] in
      \#(perCommand)    esac
          ;;
        esac
      }

      _sectionctl "$@"
      """#
  }

  /// The `case $words[1]` branch of `command`: its options and arguments for `_arguments`, per
  /// action for a command with actions; "" when it takes neither.
  private static func zshArguments(_ command: Subcommand) -> String {
    let name = command.rawValue
    guard !command.actions.isEmpty else {
      let list =
        command.options.flatMap { specs($0, among: command.options) }
        + argumentSpecs(command.arguments, from: 1)
      return list.isEmpty ? "" : "    \(name)) _arguments \(list.map(quoted).joined(separator: " ")) ;;\n"
    }
    let choice = argumentSpecs([command.argument(at: 0, after: [])!], from: 1)
    var text = "    \(name))\n      case $words[2] in\n"
    for action in command.actions {
      let options = command.options.filter { $0.applies(to: command, action: action.name) }
      let list =
        options.flatMap { specs($0, among: options) } + choice + argumentSpecs(action.arguments, from: 2)
      text += "      \(action.name)) _arguments \(list.map(quoted).joined(separator: " ")) ;;\n"
    }
    return text
      + "      *) _arguments \(choice.map(quoted).joined(separator: " ")) ;;\n      esac\n      ;;\n"
  }

  /// `_arguments` specs of `option`, one per spelling: `(-j)--json[print JSON]`,
  /// `(-s --readonly-socket)--socket=[...]:socket:_files`; the options it conflicts with
  /// among `options` (those offered beside it) are not offered after it.
  private static func specs(_ option: CommandOption, among options: [CommandOption]) -> [String] {
    option.spellings.map { spelling in
      let conflicts = option.conflicts.filter(options.contains).map(\.long)
      let others = option.spellings.filter { $0 != spelling } + conflicts
      let exclusion =
        option.standsAlone ? "(- *)" : others.isEmpty ? "" : "(\(others.joined(separator: " ")))"
      guard let value = option.value else { return "\(exclusion)\(spelling)[\(option.brief)]" }
      let action: String
      switch value.kind {
      case .path: action = ":_files"
      case .listName: action = ":_sectionctl_lists"
      case .plain: action = ""
      }
      let joined = spelling.hasPrefix("--") ? "=" : "+"
      return "\(exclusion)\(spelling)\(joined)[\(option.brief)]:\(value.noun)\(action)"
    }
  }

  /// `_arguments` specs of the arguments, the first numbered `first`: `1:section:_sectionctl_ids`.
  private static func argumentSpecs(_ arguments: [ArgumentKind], from first: Int) -> [String] {
    arguments.enumerated().map { index, kind in
      let number = String(index + first)
      switch kind {
      case .section: return "\(number):section:_sectionctl_ids"
      case .sections: return "*:section:_sectionctl_ids"
      case .choice(let noun, let words): return "\(number):\(noun):(\(words.joined(separator: " ")))"
      case .command: return "\(number):command:{_describe -t commands command commands}"
      case .value(let noun): return "\(number):\(noun)"
      case .values(let noun), .text(let noun): return "*:\(noun)"
      }
    }
  }

  /// `text` in single quotes for zsh, a quote in it as `'\''`.
  private static func quoted(_ text: String) -> String {
    "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
  }
}
