/// `sectionctl completion bash|zsh`: the completion scripts, printed for a shell to load
/// (`source <(sectionctl completion bash)`), and what `make install` and the package write
/// out (scripts/install.sh), so that each script has one copy, next to the commands it knows.
enum Completion {
  /// For bash-completion: commands, options, modes, and section ids asked from the daemon.
  static let bash = #"""
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
      local commands="list view items open close toggle mode status lists reload ping watch log ui send pipe help add rm mv rename item batch is-open export shell completion"
      local options="--socket -s --list -l --readonly -r --readonly-socket --json -j --timeout --name --help --version"
      local command="" i
      local -a socket=()

      case $prev in
      --socket | -s | --readonly-socket)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
      --list | -l)
        _sectionctl_candidates lists
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
        _sectionctl_candidates ids "${socket[@]}"
        ;;
      item)
        if [[ $prev == item ]]; then
          COMPREPLY=($(compgen -W "add rm mv set" -- "$cur"))
        elif [[ $prev == @(add|rm|mv|set) && ${COMP_WORDS[COMP_CWORD - 2]} == item ]]; then
          _sectionctl_candidates ids "${socket[@]}"
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
        '(-l)--list=[the named list]:list:_sectionctl_lists' \
        '(--list)-l+[the named list]:list:_sectionctl_lists' \
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
