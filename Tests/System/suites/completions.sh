#!/usr/bin/env bash
# The bash and zsh completions (printed by `sectionctl completion bash|zsh`) against a real
# sectiond whose read-only socket is not beside its control socket: options are offered, and
# section ids come from the socket named by --readonly-socket or --socket. Then a
# hostile server at a socket named with -s answers ids and titles that are shell code: no
# completion runs it, and only what a real id can be is offered.
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
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
run_as=() # a command to run the completion under (setpriv, to be another user)
bash_complete() {
  "${run_as[@]}" bash -c 'source "$1/sectionctl.bash"; shift
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

# The everyday commands, the short options, reload --fresh.
check "bash: is-open and export are offered" "is-open
export" "$(bash_complete sectionctl "" | grep -E "^(is-open|export)$")"
check "bash: ids after is-open" "first" "$(bash_complete sectionctl --socket "$control" is-open f)"
check "bash: reload offers --fresh" "--fresh" "$(bash_complete sectionctl reload --fr)"
check "bash: completion offers the shells" "bash
zsh" "$(bash_complete sectionctl completion '')"
check "sectionctl completion bash ends in a newline (a file written from it is a text file)" "1" \
  "$(tail -c 1 "$dir/sectionctl.bash" | wc -l)"
check "bash: -s names the socket for ids" "second" "$(bash_complete sectionctl -s "$control" toggle s)"

# The history's: log and its options, watch --from, --name anywhere.
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

# --- a hostile server: ids and titles that are shell code ------------------------
# Each would create $dir/pwned-N if a completion ran it; "good-id" is the one valid id.
cat >"$dir/evil.py" <<'PY'
import os, socketserver, sys
d = sys.argv[1]
ids = ["$(touch${IFS}%s/pwned-1)" % d, "`touch${IFS}%s/pwned-2`" % d, "good-id", "a;touch${IFS}%s/pwned-3" % d,
       "$(touch${IFS}%s/pwned-4):x" % d, "12", "ALL"]
listing = "".join("section %d %s closed 0 $(touch %s/pwned-t%d) \x1b]0;title\x07\n" % (i, x, d, i)
                  for i, x in enumerate(ids))
class Peer(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            reply = listing + "OK 7\n" if line.strip() == b"LIST" else "OK\n"
            self.wfile.write(reply.encode())
socketserver.ThreadingUnixStreamServer.daemon_threads = True
server = socketserver.ThreadingUnixStreamServer(d + "/evil.sock", Peer)
print("ready", flush=True)
server.serve_forever()
PY
python3 "$dir/evil.py" "$dir" >"$dir/evil.out" 2>&1 &
evil=$!
trap 'kill $pid $evil 2>/dev/null; wait $pid $evil 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -S "$dir/evil.sock" ] && break; sleep 0.05; done
pwned() { cd "$dir" && ls pwned-* 2>/dev/null | tr '\n' ' '; }
check "bash: toggle <Tab> against a hostile server offers only the valid id" "good-id" \
  "$(bash_complete sectionctl -s "$dir/evil.sock" toggle '')"
check "bash: open, item add and is-open <Tab> too" "good-id
good-id
good-id" "$(bash_complete sectionctl -s "$dir/evil.sock" open g; bash_complete sectionctl -s "$dir/evil.sock" item add ''
  SECTIOND_SOCKET="$dir/evil.sock" bash_complete sectionctl is-open '')"
check "bash: no id or title the server sent ran as shell code" "" "$(pwned)"
check "sectionctl completion ids prints the valid ids, one a line" "good-id" \
  "$(sectionctl -s "$dir/evil.sock" completion ids)"
check "zsh: only the valid id, its title escaped, against a hostile server" \
  "good-id:\$(touch $dir/pwned-t2) \x1b]0;title\x07" "$(zsh_ids sectionctl --socket "$dir/evil.sock" open '')"
check "zsh: no id or title the server sent ran as shell code" "" "$(pwned)"
# --list <Tab>: the lists found in the user's own socket directory (root looks only in
# /run/sectiond, so as root this runs as nobody), never a directory whose name is not a list's.
for d in media '$(touch${IFS}pwned-l)'; do
  mkdir -p "$dir/run/sectiond/$d"
  python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$dir/run/sectiond/$d/control.sock"
done
if [ "$(id -u)" = 0 ]; then
  chmod 755 "$dir" && chown -R nobody "$dir/run"
  run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
lists=$(XDG_RUNTIME_DIR="$dir/run" bash_complete sectionctl --list '')
run_as=()
check "bash: --list <Tab> offers the list found, not the directory named as code" "media" \
  "$(printf '%s\n' "$lists" | grep -E 'media|touch')"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
