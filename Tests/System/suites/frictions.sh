#!/usr/bin/env bash
# A newcomer's frictions, against real daemons and a real terminal (tmux):
# Tab in the shell completes by the word's position, the ui's prompt line edits as a shell's
# line does, Ctrl-C in the shell cancels the line (and, under sh -c, leaves the calling shell
# alone), a free text keeps words that look like options, and a reload says what it dropped
# (and refuses to put the demo set in place of a list without --force).
# Ends with "N passed, N failed"; exits 1 on any failure. About 20 s.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
source Tests/System/lib/checks.sh
source Tests/System/lib/tmux.sh
ctl="$BUILD_DIR/sectionctl"
command -v tmux >/dev/null || install_missing tmux:tmux
scratch sdfr
screen() { "${T[@]}" capture-pane -p; }
wait_for() { # NEEDLE: up to 10 s
  for _ in $(seq 100); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
  return 1
}
# prompt_line: the shell's last prompt line, trailing blanks cut.
prompt_line() { screen | grep 'sectiond>' | tail -1 | sed 's/ *$//'; }
cat >"$dir/sections.json" <<'JSON'
{"sections": [{"id": "today", "title": "Today", "items": ["Stand-up"]},
              {"id": "third", "title": "Third"}, {"id": "net", "title": "Network"},
              {"id": "notes", "title": "Release notes"}]}
JSON
start s --no-state --config "$dir/sections.json"
S=(-s "$dir/s.sock")

# --- Tab completes by position ------------------------------------------------------------
tmux_new sdfr
"${T[@]}" new-session -d -x 100 -y 20 \
  "env XDG_STATE_HOME=$dir/xdg TERM=xterm LANG=C.UTF-8 SECTIOND_SOCKET=$dir/s.sock $ctl shell"
wait_for "sectiond>" || fail "the shell started" "$(screen)"
# complete KEYS...: types them, then Tab (twice: a second Tab lists the choices when several
# fit), and prints the prompt line; Ctrl-U then empties the line for the next case.
complete() {
  "${T[@]}" send-keys "$@" Tab
  sleep 0.3
  prompt_line
  "${T[@]}" send-keys C-u
  sleep 0.1
}
expect "shell: 'open t' Tab offers the sections, not 'toggle' (several: the line stays)" \
  "sectiond> open t" "$(complete 'open t')"
expect "shell: 'open to' Tab completes the id today" "sectiond> open today" "$(complete 'open to')"
expect "shell: 'toggle ne' Tab completes a section (net)" "sectiond> toggle net" "$(complete 'toggle ne')"
expect "shell: 'mode e' Tab completes the mode, not 'export'" "sectiond> mode exclusive" "$(complete 'mode e')"
expect "shell: 'item a' Tab completes the action" "sectiond> item add" "$(complete 'item a')"
expect "shell: 'TOG' Tab completes the protocol verb" "sectiond> TOGGLE" "$(complete 'TOG')"
expect "shell: 'rename net T' Tab offers nothing for a title" "sectiond> rename net T" \
  "$(complete 'rename net T')"

# --- Ctrl-C cancels the line --------------------------------------------------------------
"${T[@]}" send-keys 'toggle ne' C-c
sleep 0.3
"${T[@]}" send-keys 'is-open net' Enter
wait_for "closed" && pass "shell: Ctrl-C drops the typed line; the next line runs alone (is-open net: closed)" ||
  fail "shell: Ctrl-C drops the line" "$(screen)"
expect "  ... and nothing of the cancelled line was sent (net still closed)" "closed" \
  "$("$ctl" "${S[@]}" is-open net >/dev/null && echo open || echo closed)"
tmux_stop

# Under sh -c (dash on Debian), the calling shell goes on after Ctrl-C and the shell's exit.
cat >"$dir/caller.sh" <<CALLER
env XDG_STATE_HOME=$dir/xdg TERM=xterm LANG=C.UTF-8 SECTIOND_SOCKET=$dir/s.sock $ctl shell
echo "exit \$?" >"$dir/caller.out"
CALLER
for sh in sh bash; do
  rm -f "$dir/caller.out"
  tmux_new sdfr
  "${T[@]}" new-session -d -x 100 -y 20 "$sh $dir/caller.sh; sleep 5"
  wait_for "sectiond>" || fail "the shell started under $sh" "$(screen)"
  "${T[@]}" send-keys 'mode' C-c
  sleep 0.3
  "${T[@]}" send-keys C-d
  for _ in $(seq 50); do [ -s "$dir/caller.out" ] && break; sleep 0.1; done
  expect "shell under $sh -c: Ctrl-C, then Ctrl-D: the calling $sh goes on, the shell's status 0" \
    "exit 0" "$(cat "$dir/caller.out" 2>/dev/null)"
  tmux_stop
done

# --- the ui's prompt line edits -----------------------------------------------------------
tmux_new sdfr
"${T[@]}" new-session -d -x 100 -y 14 "env TERM=xterm LANG=C.UTF-8 $ctl -s $dir/s.sock ui"
wait_for "Release notes" || fail "ui started" "$(screen)"
# The issue's case: e on "Release notes", Ctrl-U, "Notes": it saved "Release notesNotes".
"${T[@]}" send-keys G e C-u Notes Enter
for _ in $(seq 50); do "$ctl" "${S[@]}" send LIST | grep -q ' notes .* Notes$' && break; sleep 0.1; done
expect "ui: e, Ctrl-U, 'Notes' renames to Notes" "section 3 notes closed 0 Notes" \
  "$("$ctl" "${S[@]}" send LIST | grep ' notes ')"
"${T[@]}" send-keys e C-w 'Old notes' Home C-k 'New kept' Left Left Left Left Left er End '!' Enter
for _ in $(seq 50); do "$ctl" "${S[@]}" send LIST | grep -q 'kept!$' && break; sleep 0.1; done
expect "ui: Ctrl-W, Home, Ctrl-K, Left and End edit where the cursor is" \
  "section 3 notes closed 0 Newer kept!" "$("$ctl" "${S[@]}" send LIST | grep ' notes ')"
tmux_stop

# --- a free text keeps words that look like options --------------------------------------
out=$("$ctl" "${S[@]}" item add today Call -j home 2>&1)
case "$out" in "revision "[0-9]*) pass "item add today Call -j home: no JSON printed, the revision as text" ;;
  *) fail "item add today Call -j home: no JSON printed, the revision as text" "$out" ;; esac
"$ctl" "${S[@]}" item add today Buy milk -2 liters >/dev/null
expect "  ... the items are 'Call -j home' and 'Buy milk -2 liters'" \
  $'Stand-up\nCall -j home\nBuy milk -2 liters' "$("$ctl" "${S[@]}" items today)"
"$ctl" "${S[@]}" add cold -- -5 degrees >/dev/null
expect "add cold -- -5 degrees: a title that begins with '-' after --" "section 4 cold closed 0 -5 degrees" \
  "$("$ctl" "${S[@]}" send LIST | grep ' cold ')"
help=$("$ctl" help item)
case "$help" in *"every further word is the text's"*"'--'"*) pass "sectionctl help item says so, and mentions --" ;;
  *) fail "sectionctl help item says so, and mentions --" "$help" ;; esac

# --- the shell as a script, help, clear ---------------------------------------------------
printf 'bogus\nlist\n' | "$ctl" "${S[@]}" shell >/dev/null 2>&1
expect "a piped shell exits non-zero when a line failed, even if a later one succeeded" "2" "$?"
printf 'list\nis-open net\n' | "$ctl" "${S[@]}" shell >/dev/null 2>&1
expect "  ... is-open's closed counts (1)" "1" "$?"
printf 'list\nping\n' | "$ctl" "${S[@]}" shell >/dev/null 2>&1
expect "  ... and 0 when every line succeeded" "0" "$?"
out=$(printf 'help\n' | "$ctl" "${S[@]}" shell 2>&1)
contains "help in the shell describes the shell" "'quit', 'exit' or Ctrl-D ends the shell" "$out"
contains "  ... and lists the commands" "print open or closed for each section" "$out"
tmux_new sdfr
"${T[@]}" new-session -d -x 100 -y 20 \
  "env XDG_STATE_HOME=$dir/xdg TERM=xterm LANG=C.UTF-8 SECTIOND_SOCKET=$dir/s.sock $ctl shell"
wait_for "sectiond>" || fail "the shell started" "$(screen)"
"${T[@]}" send-keys list Enter
wait_for "INDEX" || fail "list ran in the shell" "$(screen)"
"${T[@]}" send-keys clear Enter
sleep 0.5
case "$(screen)" in *INDEX*) fail "clear clears the screen" "$(screen)" ;; *) pass "clear clears the screen" ;; esac
tmux_stop

# --- every change prints what it did -----------------------------------------------------
start out --no-state
O=(-s "$dir/out.sock")
"$ctl" "${O[@]}" open 1 >/dev/null
expect "open --all prints the sections it opened (not those open already)" \
  $'0      first  open   10     First\n2      third  open   6      Third' "$("$ctl" "${O[@]}" open --all)"
expect "close --all prints those it closed" "3" "$("$ctl" "${O[@]}" close --all | grep -c closed)"
expect "add prints the new revision" "revision 7" "$("$ctl" "${O[@]}" add x X)"
expect "rm prints the new revision" "revision 8" "$("$ctl" "${O[@]}" rm x)"
expect "item add prints the new revision" "revision 9" "$("$ctl" "${O[@]}" item add 0 Milk)"
expect "open --all --json: the sections it opened" "3" \
  "$("$ctl" "${O[@]}" -j open --all | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sections"]))' 2>&1 || true)"

# --- reload says what it drops ----------------------------------------------------------
start plain --no-state
"$ctl" -s "$dir/plain.sock" add later Later >/dev/null
out=$("$ctl" -s "$dir/plain.sock" reload --fresh 2>&1)
status=$?
case "$status:$out" in 2:*"no config file"*"--force"*) pass "reload --fresh without a config file: refused (exit 2), naming --force" ;;
  *) fail "reload --fresh without a config file: refused (exit 2), naming --force" "exit $status: $out" ;; esac
expect "  ... and the list is as it was" "later" "$("$ctl" -s "$dir/plain.sock" send LIST | awk '/^section 3/ {print $3}')"
expect "reload --fresh --force replaces it, saying what went" \
  "dropped section later (Later)"$'\n'"reloaded the config: 3 sections, revision 2" "$("$ctl" -s "$dir/plain.sock" reload --fresh --force)"
# A section whose id comes from its title goes when the title changes: the reload says so.
echo '{"sections": [{"title": "Inbox", "open": true}, {"id": "kept", "title": "Kept"}]}' >"$dir/titled.json"
start titled --no-state --config "$dir/titled.json"
sed -i 's/"Inbox"/"In box"/' "$dir/titled.json"
expect "reload after a title change: the dropped section (open) and the added one are printed" \
  $'dropped section inbox (Inbox), which was open\nadded section in-box (In box)\nreloaded the config: 2 sections, revision 1' \
  "$("$ctl" -s "$dir/titled.sock" reload)"
expect "  ... and with --json" '{"revision":1,"dropped":[],"added":[],"fleet_host":null}' "$("$ctl" -s "$dir/titled.sock" -j reload)"
contains "  ... and the daemon's log line names them" "reloaded the config: 2 sections; went: inbox (open); came: in-box" \
  "$(cat "$dir/titled.log")"
# A section whose id is "added" read "added added (Added)"; and with a
# client's deletion kept, sectionctl counted the list (1) while the daemon logged the config (2).
"$ctl" -s "$dir/titled.sock" rm kept >/dev/null
echo '{"sections": [{"title": "In box"}, {"id": "kept", "title": "Kept"}, {"id": "added", "title": "Added"}]}' >"$dir/titled.json"
expect "reload of a section whose id is a verb: the line names it as a section" \
  $'added section added (Added)\nreloaded the config: 2 sections, revision 3' "$("$ctl" -s "$dir/titled.sock" reload)"
contains "  ... and the daemon's log line counts the list as sectionctl does, then the config" \
  "reloaded the config: 2 sections in the list, 3 in the config (clients' edits kept); came: added" "$(cat "$dir/titled.log")"
expect "the shipped example config gives every section an id" "True" \
  "$(python3 -c 'import json,sys; print(all("id" in s for s in json.load(open(sys.argv[1]))["sections"]))' examples/sections.json)"

# --- make web on a daemon that runs already ----------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
WEB_SOCKET="$dir/s.sock" WEB_PORT=$port BUILD_DIR="$BUILD_DIR" setsid scripts/web.sh >"$dir/web.out" 2>&1 &
web=$!
for _ in $(seq 200); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
out=$(python3 - "$port" <<'PY' 2>&1
import sys
sys.path.insert(0, "Tests/System/lib")
from web_socket import handshake, ws_read_lines, ws_send_text
port = int(sys.argv[1])
status, sock, rest = handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
ws_send_text(sock, "LIST\n")
print("\n".join(ws_read_lines(sock, rest, lambda lines: any(l.startswith("OK") for l in lines))))
PY
)
kill -- -"$web" 2>/dev/null
wait "$web" 2>/dev/null
contains "WEB_SOCKET=PATH make web: the page talks to that daemon (its sections through the WebSocket)" \
  "section 3 notes" "$out"
contains "  ... and says so, with that socket in its examples" "--socket $dir/s.sock toggle 0" "$(cat "$dir/web.out")"

# --- messages that fit --------------------------------------------------------------------
err=$("$ctl" -s "$dir/none/c.sock" status 2>&1)
contains "no daemon: the message says how to point at another one" \
  "or point at another daemon with --socket (-s) PATH or SECTIOND_SOCKET" "$err"
printf 'add x X\n' | "$ctl" "${S[@]}" batch >"$dir/batch.out" 2>&1
status=$?
contains "batch given 'add x X' says batch takes request lines and shows 'INSERT end x X' (exit 2)" \
  "2:line 1 of standard input is 'add x X', a sectionctl command: batch takes the daemon's request lines ('sectionctl send HELP' lists them), here 'INSERT end x X'" \
  "$status:$(cat "$dir/batch.out" | sed 's/^sectionctl: //')"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  chmod 755 "$dir"
  # A daemon socket whose group is root: joining root's group is no advice.
  err=$("${nobody[@]}" "$ctl" "${S[@]}" open 0 2>&1)
  contains "a socket whose group is root: the refusal names root, not group sectiond" \
    "changing state through it is for root (the socket's group is root)" "$err"
  case "$err" in *usermod*) fail "  ... and proposes no usermod" "$err" ;; *) pass "  ... and proposes no usermod" ;; esac
  # watch on a control socket the user may not write reads through the read-only one.
  out=$(timeout 10 "${nobody[@]}" "$ctl" "${S[@]}" watch --count 1 2>&1 &
    sleep 1; "$ctl" "${S[@]}" toggle third >/dev/null; wait)
  contains "watch by a user the control socket refuses falls back to the read-only socket" "opened" "$out"
  # Another user's daemon in that user's own directory (0755), named with -s: its socket and
  # the read-only one beside it are read, for root too; a default path gets no such trust.
  mkdir -m 755 "$dir/theirs" && chown 65534:65534 "$dir/theirs"
  "${nobody[@]}" "$BUILD_DIR/sectiond" --socket "$dir/theirs/c.sock" --no-state 2>>"$dir/theirs.log" &
  pids+=($!)
  for _ in $(seq 200); do [ -S "$dir/theirs/c.sock" ] && break; sleep 0.05; done
  expect "root reads another user's daemon named with -s in that user's directory" "0" \
    "$("$ctl" -s "$dir/theirs/c.sock" -j status >/dev/null 2>"$dir/theirs.err"; echo $?)"
  expect "  ... and its read-only socket" "0" "$("$ctl" -s "$dir/theirs/c.sock" -r list >/dev/null 2>&1; echo $?)"
  # The same directory as another user's default /tmp/sectiond-UID: refused, with a message
  # that names the real cause and proposes no chown of someone else's directory.
  mkdir -m 755 "$dir/xdg-run" && mkdir -m 755 "$dir/xdg-run/sectiond" && chown 65534:65534 "$dir/xdg-run/sectiond"
  err=$(env -u SECTIOND_SOCKET XDG_RUNTIME_DIR="$dir/xdg-run" setpriv --reuid=4242 --regid=4242 --clear-groups -- \
    "$ctl" ping 2>&1)
  contains "a default socket directory owned by another user (0755): 'belongs to another user'" \
    "$dir/xdg-run/sectiond (mode 755, owner uid 65534) belongs to another user" "$err"
  case "$err" in *chown*|*"can be written"*) fail "  ... no chown proposed, not called writable" "$err" ;;
    *) pass "  ... no chown proposed, not called writable" ;; esac
  contains "  ... and says how to name the socket if it is that user's daemon" \
    "if it is uid 65534's daemon, name its socket with --socket (-s)" "$err"
fi

# --- the docs say what is so --------------------------------------------------------------
readme=$(cat README.md)
id=$(grep -o 'Sectiond1 Toggle s [a-z0-9_.-]*' README.md | awk '{print $4}')
ids=$(python3 -c 'import json; print(" ".join(s["id"] for s in json.load(open("examples/sections.json"))["sections"]))')
case " $ids " in *" $id "*) pass "README's busctl Toggle uses an id of the example config ($id)" ;;
  *) fail "README's busctl Toggle uses an id of the example config" "'$id' not in: $ids" ;; esac
contains "README: the package depends on libedit2 and recommends websocketd" \
  "libedit2 for the shell" "$readme"
contains "  ... as the package's control file says" "Recommends: websocketd" "$(cat packaging/deb/control.in)"
contains "README: watch drops the '!' the protocol and the shell show" "without their leading \`!\`" "$readme"
contains "README: the rootless install needs your own clone" "\`git clone\` it as yourself" "$readme"
contains "README: where the package's example config is, and how to start from it" \
  "sudo cp /usr/share/doc/sectiond/examples/sections.json /etc/sectiond/sections.json" "$readme"
contains "DBUS.md: the one command that starts a daemon on a session bus for its examples" \
  "make run ARGS='--bus session'" "$(cat docs/DBUS.md)"
# ... and it does: make run's daemon on a session bus of its own, in a mount namespace whose
# .run/ is private (make run writes there), answers DBUS.md's first example. make run builds
# first: even with nothing to build, swift build took 9 s here while another build ran, so the
# daemon has a minute to come up.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v dbus-run-session >/dev/null; then
  mkdir -p .run
  out=$(unshare --mount --propagation private bash -c '
    mount -t tmpfs -o mode=0700 tmpfs "$1/.run" || exit 9
    cd "$1" && dbus-run-session -- bash -c "
      BUILD_DIR=$2 timeout 60 make -s run ARGS=\"--bus session\" >/dev/null 2>&1 &
      for _ in \$(seq 600); do busctl --user status org.sectiond.Sectiond1 >/dev/null 2>&1 && break; sleep 0.1; done
      busctl --user call org.sectiond.Sectiond1 /org/sectiond/Sectiond1 org.sectiond.Sectiond1 Toggle s second
      kill %1" 2>/dev/null' runtest "$root" "$BUILD_DIR" 2>&1)
  expect "DBUS.md: make run ARGS='--bus session' serves its first example (Toggle s second)" "bt true 1" "$out"
fi

finish
