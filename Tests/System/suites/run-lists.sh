#!/usr/bin/env bash
# Several lists by hand and under `make run`: scripts/run.sh for
# the unnamed list and for `--list media` at once, each in its own directory of .run/, with a
# banner that names the list's socket; followed as the banner says (SECTIOND_SOCKET exported),
# `sectionctl -l media` reaches .run/media/ and `sectionctl lists` finds both; `-s` with `-l`
# warns that --socket wins (and --help says so); `sectiond` honours SECTIOND_LIST and puts a
# list beside $SECTIOND_SOCKET; `lists -r` says what is wrong; a stopped list keeps the table a
# table. In a copy of scripts/run.sh of its own, so the checkout's .run/ is untouched; no root.
# Ends with "N passed, N failed"; exits 1 on any failure. About 5 s.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
source Tests/System/lib/checks.sh
scratch sdrl
t="$dir"
ctl="$BUILD_DIR/sectionctl"
sectiond="$BUILD_DIR/sectiond"
wait_socket() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done; return 1; }
unset SECTIOND_SOCKET SECTIOND_LIST
export NO_COLOR=1

# --- make run, twice: the unnamed list and the list media, side by side --------------------
mkdir -p "$t/co/scripts"
cp scripts/run.sh "$t/co/scripts/"
run="$t/co/.run"
BUILD_DIR="$BUILD_DIR" "$t/co/scripts/run.sh" 2>"$t/banner" >/dev/null &
pids+=($!)
wait_socket "$run/control.sock"
BUILD_DIR="$BUILD_DIR" "$t/co/scripts/run.sh" --list media 2>"$t/banner-media" >/dev/null &
media_pid=$!
pids+=($media_pid)
if wait_socket "$run/media/control.sock" && kill -0 "${pids[0]}" "$media_pid" 2>/dev/null; then
  pass "make run ARGS='--list media' beside make run: both serve, media in .run/media/"
else
  fail "make run ARGS='--list media' beside make run" "$(cat "$t/banner" "$t/banner-media")"
fi
[ -f "$run/state.json" ] && [ -f "$run/media/state.json" ] && pass "  ... each with a state file of its own" ||
  fail "  ... each with a state file of its own" "$(ls -R "$run")"
banner=$(cat "$t/banner-media")
contains "the banner names the list and its socket" "list media: socket $run/media/control.sock" "$banner"
contains "  ... and the variable to export" "export SECTIOND_SOCKET=$run/control.sock" "$banner"
contains "  ... and the command for the list" "sectionctl -l media view" "$banner"
contains "make run's banner without a list is as before" "make run: socket $run/control.sock" "$(cat "$t/banner")"

# --- followed as the banner says ------------------------------------------------------------
export SECTIOND_SOCKET="$run/control.sock"
out=$("$ctl" -l media add players Players 2>&1)
expect "SECTIOND_SOCKET exported: sectionctl -l media add reaches .run/media/" "revision 1" "$out"
contains "  ... the list media has it" "players" "$("$ctl" -l media list 2>&1)"
case "$("$ctl" list 2>&1)" in *players*) fail "  ... the unnamed list does not" ;; *) pass "  ... the unnamed list does not" ;; esac
out=$("$ctl" -l media status 2>&1)
contains "sectionctl -l media status says the list" "list:      media" "$out"
contains "  ... and its socket" "socket:    $run/media/control.sock" "$out"
out=$("$ctl" -l nope status 2>&1)
contains "-l with a list not running names the socket beside SECTIOND_SOCKET" "$run/nope/control.sock" "$out"
case "$out" in */run/sectiond*) fail "  ... not /run/sectiond" "$out" ;; *) pass "  ... not /run/sectiond" ;; esac
out=$("$ctl" lists 2>&1)
contains "sectionctl lists finds make run's unnamed list" "$run/control.sock" "$out"
contains "  ... and its list media" "$run/media/control.sock" "$out"
out=$("$ctl" --json lists 2>&1)
contains "  ... with --json too" "\"name\":\"media\"" "${out// /}"

# --- -s with -l -----------------------------------------------------------------------------
err=$("$ctl" -s "$run/control.sock" -l media status 2>&1 >/dev/null)
contains "-s with -l warns that --socket wins" "warning: --socket wins over --list" "$err"
contains "  ... naming the list's socket" "$run/media/control.sock" "$err"
contains "--help says --socket wins over --list" "--socket wins over it" "$("$ctl" --help)"

# --- sectiond: SECTIOND_LIST, and a list beside SECTIOND_SOCKET ----------------------------
mkdir -m 0700 "$t/by-hand"
SECTIOND_SOCKET="$t/by-hand/control.sock" SECTIOND_LIST=solo "$sectiond" --no-state 2>"$t/solo.log" &
pids+=($!)
if wait_socket "$t/by-hand/solo/control.sock"; then
  pass "SECTIOND_LIST=solo sectiond serves solo beside \$SECTIOND_SOCKET"
else
  fail "SECTIOND_LIST=solo sectiond serves solo beside \$SECTIOND_SOCKET" "$(cat "$t/solo.log")"
fi
contains "  ... as the list solo" "list:      solo" "$("$ctl" -s "$t/by-hand/solo/control.sock" status 2>&1)"
err=$(SECTIOND_LIST=Bad "$sectiond" --no-state --check-config 2>&1)
status=$?
expect "SECTIOND_LIST=Bad sectiond: exit 2" 2 "$status"
contains "  ... naming the variable and the rule" "SECTIOND_LIST: invalid list name \"Bad\"" "$err"

# --- lists: -r, and a list that stopped -----------------------------------------------------
err=$("$ctl" -r lists 2>&1)
contains "sectionctl -r lists says what is wrong with -r" "--readonly (-r) means nothing to lists" "$err"
contains "sectionctl -l media lists says what is wrong with -l" "--list (-l) names one list" \
  "$("$ctl" -l media lists 2>&1)"
exec 3>&2 2>/dev/null # not the shell's "Killed" line
kill -KILL "$media_pid"
wait "$media_pid"
exec 2>&3 3>&-
out=$("$ctl" lists 2>&1)
row=$(grep '^media ' <<<"$out")
expect "a stopped list: a short word in its SOCKET cell" "stopped" "$(awk '{print $NF}' <<<"$row")"
contains "  ... and the hint once, below the table" "media: no daemon is listening on $run/media/control.sock" "$out"
long=$(awk -v max=0 '/^(NAME|-|media) / { if (length($0) > max) max = length($0) } END { print max }' <<<"$out")
[ -n "$row" ] && [ "$long" -le 120 ] && pass "  ... so every row stays short ($long characters)" || fail "  ... rows stay short" "$out"
finish
