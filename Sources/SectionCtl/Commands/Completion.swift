/// `sectionctl completion bash|zsh`: the completion scripts, printed for a shell to load
/// (`source <(sectionctl completion bash)`), and what `make install` and the package write
/// out (scripts/install.sh), so that each script has one copy, next to the commands it knows.
enum Completion {
  /// For bash-completion: commands, options, modes, and section ids asked from the daemon.
  static let bash = #"""
    # bash completion for sectionctl(1): commands, options, modes, and section ids asked from the
    # running daemon (the read-only socket first, so users outside the daemon's group get them too).

    # Arguments: the --socket and --readonly-socket options typed so far (at most one of each).
    _sectionctl_ids() {
      local -a control=() readonly=(--readonly)
      while (($#)); do
        case $1 in
        --socket | -s) control=(--socket "$2") ;;
        --readonly-socket) readonly=(--readonly-socket "$2") ;;
        esac
        shift 2
      done
      [[ ${readonly[0]} == --readonly ]] && readonly+=("${control[@]}")
      # The raw protocol lines are stable, unlike the table meant for people.
      { sectionctl "${readonly[@]}" send LIST || sectionctl "${control[@]}" send LIST; } 2>/dev/null |
        awk '$1 == "section" { print $3 }'
    }

    _sectionctl() {
      local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
      local commands="list view items open close toggle mode status lists reload ping watch log ui send pipe help add rm mv rename item batch is-open export shell completion"
      local options="--socket -s --list -l --readonly -r --readonly-socket --json -j --timeout --name --help --version"
      local command="" i
      local -a socket=()

      case $prev in
      --socket | -s | --readonly-socket)
        COMPREPLY=($(compgen -f -- "$cur"))
        return
        ;;
      --list | -l)
        COMPREPLY=($(compgen -W "$(sectionctl lists --json 2>/dev/null | grep -o '"name":"[^"]*"' | cut -d'"' -f4)" -- "$cur"))
        return
        ;;
      --count | --at | --timeout | --from | --since | --name | -n) return ;;
      esac

      for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --socket | -s | --readonly-socket | --list | -l)
          socket+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
          ((i++))
          ;;
        --count | --at | --timeout | --from | --since | --name | -n) ((i++)) ;;
        -*) ;;
        *) [[ -z $command ]] && command=${COMP_WORDS[i]} ;;
        esac
      done

      if [[ $cur == -* ]]; then
        case $command in
        open | close) options+=" --all" ;;
        watch) options+=" --count --view --from" ;;
        log) options+=" -n --from --since --follow -f" ;;
        add | item) options+=" --at" ;;
        reload) options+=" --fresh --force" ;;
        is-open) options+=" -q --quiet" ;;
        esac
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return
      fi

      case $command in
      "" ) COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
      help) COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
      items | open | close | toggle | rm | mv | rename | is-open)
        # Only the first argument of rm, mv and rename is a section.
        [[ $command == @(rm|mv|rename) && ${COMP_WORDS[COMP_CWORD - 1]} != "$command" ]] && return
        COMPREPLY=($(compgen -W "$(_sectionctl_ids "${socket[@]}")" -- "$cur"))
        ;;
      item)
        if [[ $prev == item ]]; then
          COMPREPLY=($(compgen -W "add rm mv set" -- "$cur"))
        elif [[ $prev == @(add|rm|mv|set) && ${COMP_WORDS[COMP_CWORD - 2]} == item ]]; then
          COMPREPLY=($(compgen -W "$(_sectionctl_ids "${socket[@]}")" -- "$cur"))
        fi
        ;;
      mode) COMPREPLY=($(compgen -W "exclusive multi" -- "$cur")) ;;
      completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur")) ;;
      esac
    }

    complete -F _sectionctl sectionctl
    """#

  /// For zsh's compsys, the same.
  static let zsh = #"""
    #compdef sectionctl
    # zsh completion for sectionctl(1): commands, options, modes, and section ids with their titles
    # asked from the running daemon (the read-only socket first, so users outside its group get them too).

    _sectionctl_ids() {
      local -a ids readonly
      # --readonly-socket names the read-only socket; else it is the one beside --socket.
      if (( $#_sectionctl_readonly )); then
        readonly=($_sectionctl_readonly)
      else
        readonly=($_sectionctl_socket --readonly)
      fi
      # The raw protocol lines are stable, unlike the table meant for people.
      ids=(${(f)"$( { sectionctl $readonly send LIST ||
        sectionctl $_sectionctl_socket send LIST } 2>/dev/null |
        awk '$1 == "section" { id = $3; gsub(/:/, "\\:", id); sub(/^[^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+ /, ""); print id ":" $0 }')"})
      _describe -t sections 'section' ids
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
      local -a commands reply _sectionctl_socket _sectionctl_readonly
      _sectionctl_option --socket
      (( $#reply )) || _sectionctl_option -s
      _sectionctl_socket=($reply)
      _sectionctl_option --readonly-socket
      _sectionctl_readonly=($reply)
      commands=(
        'list:table of sections (the default)'
        'view:the accordion as a person sees it'
        'items:every item of one section'
        'open:open sections'
        'close:close sections'
        'toggle:open closed sections, close open ones'
        'mode:show or switch the mode'
        'status:daemon version, revision, mode and counts'
        'lists:every list this user can reach'
        'reload:make the daemon re-read its config'
        'ping:check that the daemon answers'
        'watch:print every change as it happens'
        'log:who changed what, and when'
        'ui:the accordion full screen, live and shared'
        'send:send raw protocol lines'
        'pipe:relay stdin and stdout to the socket (scripts, websocketd)'
        'help:help on a command'
        'add:add a new section'
        'rm:delete a section'
        'mv:move a section to an index'
        'rename:give a section a new title'
        'item:add, delete, move or replace an item'
        'batch:apply request lines from stdin as one change'
        'is-open:print open or closed for each section; exit 0 if one is open'
        'export:print the list as a config file'
        'shell:an interactive prompt with history, showing changes'
        'completion:print the bash or zsh completion script'
      )
      _arguments -C \
        '(--readonly-socket -s)--socket=[the daemon'\''s control socket]:socket:_files' \
        '(--readonly-socket --socket)-s+[the daemon'\''s control socket]:socket:_files' \
        '(-l)--list=[the named list]:list' \
        '(--list)-l+[the named list]:list' \
        '(-r)--readonly[use the read-only socket]' \
        '(--readonly)-r[use the read-only socket]' \
        '(--socket)--readonly-socket=[the read-only socket, wherever it is]:socket:_files' \
        '(-j)--json[print JSON]' \
        '(--json)-j[print JSON]' \
        '--timeout=[seconds to wait for the daemon, 0 for ever]:seconds' \
        '--name=[what the daemon'\''s history calls this run]:name' \
        '(- *)'{-h,--help}'[show help]' \
        '(- *)--version[show the version]' \
        '1: :->command' \
        '*:: :->arguments' && return
      case $state in
      command) _describe -t commands 'sectionctl command' commands ;;
      arguments)
        case $words[1] in
        items) _arguments '1:section:_sectionctl_ids' ;;
        open | close) _arguments '--all[every section]' '*:section:_sectionctl_ids' ;;
        toggle) _arguments '*:section:_sectionctl_ids' ;;
        mode) _arguments '1:mode:(exclusive multi)' ;;
        completion) _arguments '1:shell:(bash zsh)' ;;
        reload) _arguments '--fresh[take the config as it is, without clients edits]' '--force[with --fresh, also without a config file]' ;;
        watch) _arguments '--count=[exit after N changes]:count' '--view[redraw the accordion on every change]' '--from=[start after this revision]:revision' ;;
        log) _arguments '-n+[how many changes]:count' '(--since)--from=[the changes after this revision]:revision' '(--from)--since=[the changes since this time]:time' '(-f --follow)'{-f,--follow}'[then each new change]' ;;
        help) _describe -t commands 'command' commands ;;
        add) _arguments '--at=[insert at this index]:index' '1:id' '*:title' ;;
        rm) _arguments '1:section:_sectionctl_ids' ;;
        is-open) _arguments '(-q --quiet)'{-q,--quiet}'[print nothing, only the exit status]' '*:section:_sectionctl_ids' ;;
        mv) _arguments '1:section:_sectionctl_ids' '2:index' ;;
        rename) _arguments '1:section:_sectionctl_ids' '*:title' ;;
        item)
          _arguments '--at=[insert at this position]:position' '1:action:(add rm mv set)' \
            '2:section:_sectionctl_ids' '*:position or text'
          ;;
        esac
        ;;
      esac
    }

    _sectionctl "$@"
    """#
}
