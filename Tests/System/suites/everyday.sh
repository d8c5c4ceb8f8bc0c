#!/usr/bin/env bash
# A person's everyday use of sectionctl, against real daemons: send with BATCH and
# QUIT, batch's line numbers, the read-only socket named after its control socket, is-open,
# status, export and back, JSON errors, the shell (piped, and in tmux with libedit and
# events), the ui's edit prompt (tmux), help texts a shell can paste, config corners, and
# `make run` writing nothing outside the checkout (in a private mount namespace, as root).
# Ends with "N passed, N failed"; exits 1 on any failure. About 20 s.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
source Tests/System/lib/checks.sh
source Tests/System/lib/tmux.sh
bin="$BUILD_DIR"
ctl="$bin/sectionctl"
command -v tmux >/dev/null || install_missing tmux:tmux
scratch sdday

# --- two daemons in one directory: each its own read-only socket ----------------------
start a --no-state
start b --no-state
expect "a second daemon in the same directory starts (read-only sockets a.readonly.sock, b.readonly.sock)" \
  "a.readonly.sock b.readonly.sock" "$(cd "$dir" && echo *.readonly.sock)"
"$ctl" -s "$dir/b.sock" open second >/dev/null
expect "sectionctl -s b.sock -r reads daemon b, not a" '["second"] /b.readonly.sock' \
  "$("$ctl" -s "$dir/b.sock" -r -j status | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d["open_ids"]), d["socket"][len(sys.argv[1]):])' "$dir")"
A=(-s "$dir/a.sock")

# A user outside the daemon's group reads through the read-only socket without being told to.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$dir"
  as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  out=$("${as_nobody[@]}" "$ctl" -s "$dir/b.sock" status 2>&1)
  contains "sectionctl status by a user the control socket refuses reads through the read-only one" \
    "socket:    $dir/b.readonly.sock" "$out"
  err=$("${as_nobody[@]}" "$ctl" -s "$dir/b.sock" open 0 2>&1)
  contains "  ... while a change says who may change (root: the socket's group is root), or to use --readonly" \
    "changing state through it is for root (the socket's group is root); use --readonly" "$err"
fi

# --- send: BATCH and QUIT ---------------------------------------------------------------
out=$(timeout 10 "$ctl" "${A[@]}" send BATCH 'OPEN 0' 'OPEN 2' END 2>&1)
expect "send BATCH 'OPEN 0' 'OPEN 2' END answers once and returns (hung before)" "OK 2" "$out"
out=$(timeout 10 "$ctl" "${A[@]}" send PING QUIT 2>&1)
expect "send PING QUIT prints both OKs and exits 0 (exit 3 before)" "OK OK 0" "$(echo $out) $?"
out=$("$ctl" "${A[@]}" send QUIT PING 2>&1)
expect "send QUIT PING is refused before sending: nothing can follow QUIT" "2" "$?"
contains "  ... and says why" "QUIT must be the last line" "$out"

# --- batch counts blank lines as the protocol does --------------------------------------
out=$(printf 'OPEN 0\n\nOPEN x\n' | "$ctl" "${A[@]}" batch 2>&1)
contains "batch names the input's line 3, blank line counted (said line 2 before)" "line 3:" "$out"

# --- is-open ----------------------------------------------------------------------------
"$ctl" "${A[@]}" is-open -q 0; s0=$?
"$ctl" "${A[@]}" is-open -q second; s1=$?
"$ctl" "${A[@]}" is-open nosuch 2>/dev/null; s4=$?
"$ctl" -s "$dir/none.sock" is-open 0 2>/dev/null; s3=$?
expect "is-open: 0 open, 1 closed, 4 no such section, 3 no daemon" "0 1 4 3" "$s0 $s1 $s4 $s3"
expect "is-open prints open or closed for each section, as systemctl is-active" $'open\nclosed' \
  "$("$ctl" "${A[@]}" is-open 0 second)"
expect "  ... exit 0 when one of them is open" "0" "$("$ctl" "${A[@]}" is-open -q second 0; echo $?)"
expect "  ... -q prints nothing" "" "$("$ctl" "${A[@]}" is-open -q 0)"
expect "  ... --json: the sections" '[true,false]' \
  "$("$ctl" "${A[@]}" -j is-open 0 second | python3 -c 'import json,sys; print(json.dumps([s["open"] for s in json.load(sys.stdin)["sections"]]).replace(" ", ""))')"

# --- status -----------------------------------------------------------------------------
out=$("$ctl" "${A[@]}" status)
contains "status shows the daemon's pid" "pid $(
  "$ctl" "${A[@]}" -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')" "$out"
contains "status shows the config (none: the demo set)" "config:    built-in demo set" "$out"
contains "status shows the state (--no-state: memory)" "state:     in memory only" "$out"
contains "status shows the clients and subscribers" "clients:   1 (this one included), 0 subscribed" "$out"

# --- errors -----------------------------------------------------------------------------
err=$("$ctl" "${A[@]}" -j open nosuch 2>&1 >/dev/null)
expect "--json errors are one JSON object (plain text before)" "NOSECTION 1" \
  "$(printf '%s' "$err" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["error"], d["exit"])')"
err=$("$ctl" "${A[@]}" -r open 1 2>&1)
contains "a refusal on --readonly says to drop --readonly" "drop --readonly" "$err"
"$ctl" "${A[@]}" close --all >/dev/null
err=$("$ctl" "${A[@]}" open 0 99 1 2>&1)
expect "open 0 99 1: 0 and 1 open, 99 reported (not all or nothing, as help says)" "0 1" \
  "$("$ctl" "${A[@]}" -j list | python3 -c 'import json,sys; print(*[s["index"] for s in json.load(sys.stdin)["sections"] if s["open"]])')"
contains "  ... open --help says so" "not all or nothing" "$("$ctl" open --help)"

# --- export, and back ------------------------------------------------------------------
"$ctl" "${A[@]}" add news "Today's news" && "$ctl" "${A[@]}" item add news "Call Bob" &&
  "$ctl" "${A[@]}" rename first "Ünï 日本" && "$ctl" "${A[@]}" mode exclusive >/dev/null
"$ctl" "${A[@]}" export >"$dir/exported.json"
check_out=$("$bin/sectiond" --check-config --config "$dir/exported.json" 2>&1)
contains "sectiond --check-config accepts what export wrote" "OK: 4 sections, mode exclusive" "$check_out"
start c --no-state --config "$dir/exported.json"
expect "a daemon started from the export serves the same list, mode and open section" \
  "$("$ctl" "${A[@]}" send VIEW MODE | grep -v '^OK')" "$("$ctl" -s "$dir/c.sock" send VIEW MODE | grep -v '^OK')"
printf 'DELETE 0\nDELETE 0\nDELETE 0\nDELETE 0\n' | "$ctl" -s "$dir/c.sock" batch
"$ctl" -s "$dir/c.sock" export >"$dir/empty.json"
contains "an emptied list exports to a config sectiond accepts (refused before)" "OK: 0 sections" \
  "$("$bin/sectiond" --check-config --config "$dir/empty.json" 2>&1)"

# The way back: the export becomes the config, and reload --fresh makes the list the config's
# own, so that the next config edit applies to sections a client had added.
echo '{"sections": [{"title": "Inbox"}]}' >"$dir/e.json"
start e --no-state --config "$dir/e.json"
"$ctl" -s "$dir/e.sock" add later Later
"$ctl" -s "$dir/e.sock" export >"$dir/e.json" && "$ctl" -s "$dir/e.sock" reload --fresh
sed -i 's/"title":"Later"/"title":"Later on"/' "$dir/e.json"
"$ctl" -s "$dir/e.sock" reload
expect "export into the config, reload --fresh: a later config edit reaches a section a client added" \
  "section 1 later closed 0 Later on" "$("$ctl" -s "$dir/e.sock" send LIST | sed -n 2p)"

# --- config corners ---------------------------------------------------------------------
echo '{"mode": "Exclusive", "sections": [{"title": "Ünïcode Title"}]}' >"$dir/corner.json"
contains "config mode Exclusive is read as exclusive; Ünïcode Title gets the id unicode-title" \
  "OK: 1 section, mode exclusive" "$("$bin/sectiond" --check-config --config "$dir/corner.json" 2>&1)"
start d --no-state --config "$dir/corner.json"
expect "  ... and the id is unicode-title" "section 0 unicode-title closed 0 Ünïcode Title" \
  "$("$ctl" -s "$dir/d.sock" send LIST | head -1)"
if [ "$(id -u)" = 0 ]; then
  chmod 0666 "$dir/corner.json"
  "$bin/sectiond" --check-config --config "$dir/corner.json" >/dev/null 2>&1
  expect "--check-config refuses a world-writable config, as a root start does (said OK before)" 1 "$?"
fi

# --- help texts -------------------------------------------------------------------------
example=$("$ctl" rename --help | sed -n '/^Example:/{n;p}')
bash -n -c "$example" 2>/dev/null
expect "rename --help's example is one complete shell command (an open quote before)" 0 "$?"
watch_help=$("$ctl" watch --help)
missing=""
for event in inserted deleted moved renamed items; do
  case "$watch_help" in *"$event REV"*) ;; *) missing+=" $event" ;; esac
done
expect "watch --help lists the edit events it prints" "" "$missing"

# --- the shell, piped -------------------------------------------------------------------
out=$(printf 'close 1\nis-open 1\nLIST\nbogus\nquit\nlist\n' | "$ctl" -s "$dir/b.sock" shell 2>&1)
contains "shell reads commands from a pipe: is-open prints closed" $'closed\nsection 0 first' "$out"
contains "  ... raw protocol lines are sent as they are" "OK 2" "$out"
contains "  ... a wrong command is reported and the shell goes on" "unknown command 'bogus'" "$out"
case "$out" in *INDEX*) fail "  ... quit ends it (the list after it ran)" ;; *) pass "  ... quit ends it" ;; esac
out=$(printf 'rename 0 caf\xe9\nis-open 0\n' | "$ctl" -s "$dir/b.sock" shell 2>&1)
contains "  ... a line that is not UTF-8 is refused, naming its bytes" \
  $'line 1 of standard input is not valid UTF-8 (rename 0 caf\\xe9)' "$out"
case "$out" in *$'\nopen' | *$'\nclosed') pass "  ... and the shell goes on (is-open ran)" ;;
  *) fail "  ... and the shell goes on (is-open ran)" "$out" ;; esac
case "$("$ctl" -s "$dir/b.sock" list 2>&1)" in
  *caf*) fail "  ... and nothing of it was sent (section 0 renamed)" ;;
  *) pass "  ... and nothing of it was sent" ;;
esac

# --- tmux servers one after another: each starts, though the last is still exiting
started=0
for _ in $(seq 30); do
  tmux_new sdday
  "${T[@]}" new-session -d -x 40 -y 5 "sleep 30" 2>/dev/null && started=$((started + 1))
  tmux_stop
done
expect "30 tmux servers killed and started in a row all start (a new-session on a dying server's name fails)" \
  30 "$started"

# --- the shell in a terminal: libedit, history, events ---------------------------------
tmux_new sdday
"${T[@]}" new-session -d -x 100 -y 20 \
  "env XDG_STATE_HOME=$dir/xdg TERM=xterm LANG=C.UTF-8 SECTIOND_SOCKET=$dir/b.sock $ctl"
screen() { "${T[@]}" capture-pane -p; }
wait_for() { # NEEDLE: up to 10 s
  for _ in $(seq 100); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
  return 1
}
wait_for "sectiond>" && pass "sectionctl with no command on a terminal is the shell" ||
  fail "sectionctl with no command on a terminal is the shell" "$(screen)"
"${T[@]}" send-keys 'mode multx' BSpace i Enter
wait_for "multi" && pass "shell: line editing (Backspace) and a command's output" || fail "shell: editing" "$(screen)"
"${T[@]}" send-keys 'is-ope'
"$ctl" -s "$dir/b.sock" toggle third >/dev/null
wait_for "! opened" && pass "shell: another client's change shows above the prompt as it comes" ||
  fail "shell: events" "$(screen)"
"${T[@]}" send-keys 'n third' Enter
wait_for "open" && pass "shell: the line typed before the event is kept (is-open third: open)" ||
  fail "shell: line kept" "$(screen)"
"${T[@]}" send-keys C-d
sleep 0.5
history=$(cat "$dir/xdg/sectionctl/history" 2>/dev/null)
contains "shell: the history is kept in \$XDG_STATE_HOME/sectionctl/history" "is-open" "$history"
tmux_stop

# --- the shell resumes its events after the daemon comes back (SUBSCRIBE FROM) -----------
start s --state "$dir/s.json"
spid=${pids[-1]}
tmux_new sdday
"${T[@]}" new-session -d -x 100 -y 20 \
  "env XDG_STATE_HOME=$dir/xdg TERM=xterm LANG=C.UTF-8 SECTIOND_SOCKET=$dir/s.sock $ctl"
wait_for "sectiond>" || fail "shell on daemon s" "$(screen)"
"$ctl" -s "$dir/s.sock" open first >/dev/null
wait_for "! opened 1" || fail "shell: first event on daemon s" "$(screen)"
kill "$spid"
wait "$spid" 2>/dev/null
wait_for "sectiond closed the connection" && pass "shell: a daemon gone is said" ||
  fail "shell: a daemon gone is said" "$(screen)"
# Made while the shell has no subscription: on the same state behind another socket, so that
# the change is surely missed, then the daemon back where the shell reconnects by itself.
start s2 --state "$dir/s.json"
s2pid=${pids[-1]}
"$ctl" -s "$dir/s2.sock" toggle third >/dev/null
kill "$s2pid"
wait "$s2pid" 2>/dev/null
start s --state "$dir/s.json"
"${T[@]}" send-keys 'ping' Enter
wait_for "! opened 2 2 third" &&
  pass "shell: a change made while it was not connected shows once it reconnects (resumed)" ||
  fail "shell: resumed after a restart" "$(screen)"
case "$(screen)" in
  *"! state"*) fail "  ... without a snapshot, as the daemon kept the change" "$(screen)" ;;
  *) pass "  ... without a snapshot, as the daemon kept the change" ;;
esac
tmux_stop

# --- the ui's edit prompt ---------------------------------------------------------------
tmux_new sdday
"${T[@]}" new-session -d -x 80 -y 12 "env TERM=xterm LANG=C.UTF-8 $ctl -s $dir/d.sock ui"
wait_for "unicode-title" || fail "ui started" "$(screen)"
"${T[@]}" send-keys a
wait_for "ID TITLE" && pass "ui: a opens the prompt line at the bottom" || fail "ui: a" "$(screen)"
"${T[@]}" send-keys 'todo To do' Enter
wait_for "(1 todo, 0 items)" && pass "ui: a section added from the prompt" || fail "ui: add" "$(screen)"
"${T[@]}" send-keys g e C-h C-h C-h C-h C-h 'Ideas' Enter
wait_for "Ünïcode Ideas" && pass "ui: e renames the cursor's section" || fail "ui: rename" "$(screen)"
"${T[@]}" send-keys i 'first item' Enter Enter
wait_for "first item" && pass "ui: i adds an item" || fail "ui: item" "$(screen)"
"${T[@]}" send-keys G d
wait_for "(y/n)" && pass "ui: d asks before deleting" || fail "ui: d asks" "$(screen)"
"${T[@]}" send-keys n
sleep 0.3
expect "ui: n keeps it" "2" "$("$ctl" -s "$dir/d.sock" send LIST | grep -c '^section')"
"${T[@]}" send-keys G d y
for _ in $(seq 50); do [ "$("$ctl" -s "$dir/d.sock" send LIST | grep -c '^section')" = 1 ] && break; sleep 0.1; done
expect "ui: y deletes it" "1" "$("$ctl" -s "$dir/d.sock" send LIST | grep -c '^section')"
"${T[@]}" send-keys '?'
sleep 0.3
"${T[@]}" send-keys Escape
sleep 0.8
screen | grep -q "rev" && pass "ui: Esc closes the key list, not the ui" || fail "ui: Esc on help" "$(screen)"
tmux_stop

# --- make run: state and socket in the checkout, nothing in system directories ----------
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  mkdir -p "$root/.run"
  out=$(unshare --mount --propagation private bash -c '
    mount -t tmpfs tmpfs /run && mount -t tmpfs tmpfs /var/lib && mount -t tmpfs -o mode=0700 tmpfs "$1/.run" || exit 9
    BUILD_DIR=$2 timeout 3 "$1/scripts/run.sh" 2>&1 &
    for _ in $(seq 60); do [ -S "$1/.run/control.sock" ] && break; sleep 0.05; done
    echo "in .run: $(ls "$1/.run" | tr "\n" " ")"; echo "in /run and /var/lib: $(ls /run /var/lib | grep -c sectiond)"
    wait' runtest "$root" "$bin" 2>&1)
  contains "make run: socket and state in .run/ of the checkout, printed at start" "socket $root/.run/control.sock" "$out"
  contains "make run writes nothing under /run or /var/lib" "in /run and /var/lib: 0" "$out"
  contains "  ... the socket and the state are in .run" "in .run: control.sock readonly.sock state.json" "$out"
fi
finish
