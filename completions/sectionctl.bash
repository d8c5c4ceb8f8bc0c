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
  local commands="list view items open close toggle mode status reload ping watch ui send pipe help add rm mv rename item batch is-open export shell"
  local options="--socket -s --readonly -r --readonly-socket --json -j --timeout --help --version"
  local command="" i
  local -a socket=()

  case $prev in
  --socket | -s | --readonly-socket)
    COMPREPLY=($(compgen -f -- "$cur"))
    return
    ;;
  --count | --at | --timeout) return ;;
  esac

  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
    --socket | -s | --readonly-socket)
      socket+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
      ((i++))
      ;;
    --count | --at | --timeout) ((i++)) ;;
    -*) ;;
    *) [[ -z $command ]] && command=${COMP_WORDS[i]} ;;
    esac
  done

  if [[ $cur == -* ]]; then
    case $command in
    open | close) options+=" --all" ;;
    watch) options+=" --count --view" ;;
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
  esac
}

complete -F _sectionctl sectionctl
