#!/usr/bin/env bash
# The bash and zsh completions (printed by `sectionctl completion bash|zsh`) against a real
# sectiond whose read-only socket is not beside its control socket: options are offered, and
# section ids come from the socket named by --readonly-socket or --socket.
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$root/${BUILD_DIR:-.build/debug}"
command -v zsh >/dev/null || { echo "FAIL zsh is missing: scripts/deps.sh --test installs it"; echo "0 passed, 1 failed"; exit 1; }
dir=$(mktemp -d /tmp/sdcomp.XXXXXX)
mkdir "$dir/elsewhere"
control="$dir/c.sock" readonly="$dir/elsewhere/ro.sock"
"$bin/sectiond" --socket "$control" --readonly-socket "$readonly" --no-state 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -S "$readonly" ] && break; sleep 0.05; done
export PATH="$bin:$PATH"
"$bin/sectionctl" completion bash >"$dir/sectionctl.bash"
"$bin/sectionctl" completion zsh >"$dir/_sectionctl"
# Neither completion may find the ids through a default socket by accident.
export SECTIOND_SOCKET="$dir/none.sock"

passed=0 failed=0
check() { # name, expected, actual
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok   $1"
  else failed=$((failed + 1)); printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"; fi
}

# bash: what COMPREPLY holds, one per line, after completing the last of the words given.
bash_complete() {
  bash -c 'source "$1/sectionctl.bash"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sectionctl; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$dir" "$@"
}

check "bash: --readonly-socket is offered" "--readonly
--readonly-socket" "$(bash_complete sectionctl --read)"
check "bash: ids through --readonly-socket" "first
second
third" "$(bash_complete sectionctl --readonly-socket "$readonly" open '')"
check "bash: ids through --socket" "second" "$(bash_complete sectionctl --socket "$control" toggle s)"
check "bash: a file after --readonly-socket" "$readonly" \
  "$(bash_complete sectionctl --readonly-socket "$dir/elsewhere/r")"

# zsh: the completion's id lookup with the line's options, _describe and _arguments stubbed out.
zsh_ids() {
  zsh -fc 'dir=$1; shift; words=("$@")
    _arguments() { return 1 }
    _describe() { print -rl -- ${(P)4} }
    source $dir/_sectionctl
    _sectionctl_option --socket; _sectionctl_socket=($reply)
    _sectionctl_option --readonly-socket; _sectionctl_readonly=($reply)
    _sectionctl_ids' _ "$dir" "$@"
}
check "zsh: the completion parses" "" "$(zsh -n "$dir/_sectionctl" 2>&1)"
check "zsh: ids through --readonly-socket PATH" "first:First
second:Second
third:Third" "$(zsh_ids sectionctl --readonly-socket "$readonly" open '')"
check "zsh: ids through --readonly-socket=PATH" "first:First
second:Second
third:Third" "$(zsh_ids sectionctl "--readonly-socket=$readonly" open '')"
check "zsh: ids through --socket" "first:First
second:Second
third:Third" "$(zsh_ids sectionctl --socket "$control" open '')"
check "zsh: --readonly-socket is declared" "1" \
  "$(grep -c "^ *'(--socket)--readonly-socket=" "$dir/_sectionctl")"

# Issue 23's additions: the new commands, the short options, reload --fresh.
check "bash: is-open and export are offered" "is-open
export" "$(bash_complete sectionctl "" | grep -E "^(is-open|export)$")"
check "bash: ids after is-open" "first" "$(bash_complete sectionctl --socket "$control" is-open f)"
check "bash: reload offers --fresh" "--fresh" "$(bash_complete sectionctl reload --fr)"
check "bash: completion offers the shells" "bash
zsh" "$(bash_complete sectionctl completion '')"
check "sectionctl completion bash ends in a newline (a file written from it is a text file)" "1" \
  "$(tail -c 1 "$dir/sectionctl.bash" | wc -l)"
check "bash: -s names the socket for ids" "second" "$(bash_complete sectionctl -s "$control" toggle s)"

# Issue 44's additions: log and its options, watch --from, --name anywhere.
check "bash: log is offered" "log" "$(bash_complete sectionctl lo)"
check "bash: log offers --from and --follow" "--from
--follow" "$(bash_complete sectionctl log --f)"
check "bash: log offers --since" "--since" "$(bash_complete sectionctl log --si)"
check "bash: watch offers --from" "--from" "$(bash_complete sectionctl watch --fr)"
check "bash: --name is offered" "--name" "$(bash_complete sectionctl --na)"
check "bash: the value of --name is not taken for the command" "list" \
  "$(bash_complete sectionctl --name backup.sh '' | head -1)"
check "zsh: log and --name are declared" "2" \
  "$(grep -c -e "^ *'log:" -e "^ *'--name=" "$dir/_sectionctl")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
