#!/usr/bin/env bash
# The status-bar and shell recipes in examples/, each run as its bar would run
# it, against a real sectiond serving examples/sections.json: the command is taken from the
# recipe file itself (waybar's "exec" and "on-click", i3blocks' command=, tmux's #(...) as
# tmux itself reads the file, the shell loop as it is), then what it prints is held to the
# format that bar expects:
#   waybar    one JSON object per line: "text" (a string), optional "tooltip", "class",
#             "alt", "percentage" (0-100) and nothing else; text and tooltip are Pango
#             markup, so "&" and "<" are escaped; a new line on every change, and
#             "on-click" toggles
#   i3blocks  interval=persist; each line a plain full_text, a new one on every change
#   tmux      one short line (at most 40 characters)
#   shell     one "EVENT REVISION: COUNTS" line per change
#
#   Tests/System/suites/recipes.sh                 # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/suites/recipes.sh
#
# Prints one line per check, then "N passed, N failed"; exits 1 on any failure.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
source Tests/System/lib/checks.sh
check() { # check NAME DETAIL COMMAND...: PASS when COMMAND succeeds
  local name=$1 detail=$2
  shift 2
  if "$@"; then pass "$name"; else fail "$name" "$detail"; fi
}

install_missing jq:jq tmux:tmux setsid:util-linux
if [ ! -x "$BUILD_DIR/sectiond" ] || [ ! -x "$BUILD_DIR/sectionctl" ]; then
  fail "binaries present in $BUILD_DIR" "build them first (swift build), or set BUILD_DIR"
  finish
fi

# --- a daemon, and sectionctl on PATH as a bar would find it --------------------
work="$(mktemp -d /tmp/sectiond-recipes.XXXXXX)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
  kill "$daemon" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export PATH="$BUILD_DIR:$PATH" HOME="$work/home" SECTIOND_SOCKET="$work/control.sock"
mkdir -p "$HOME"
sectiond --config examples/sections.json --socket "$SECTIOND_SOCKET" --no-state 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 100); do sectionctl ping >/dev/null 2>&1 && break; sleep 0.05; done
if ! sectionctl ping >/dev/null 2>&1; then
  fail "sectiond serves examples/sections.json" "$(cat "$work/daemon.log")"
  finish
fi
reset_state() { sectionctl close --all >/dev/null && sectionctl open inbox >/dev/null; }

# start NAME COMMAND: runs COMMAND with sh -c in its own process group (so the whole
# pipeline can be stopped), output to $work/NAME.out.
start() {
  setsid sh -c "$2" >"$work/$1.out" 2>"$work/$1.err" &
  pids+=($!)
}
stop_last() { kill -TERM -- "-${pids[-1]}" 2>/dev/null; }
# wait_lines NAME N: until NAME.out has N lines (5 s at most).
wait_lines() {
  local _
  for _ in $(seq 100); do
    [ -f "$work/$1.out" ] && [ "$(wc -l <"$work/$1.out")" -ge "$2" ] && return 0
    sleep 0.05
  done
  return 1
}
line() { sed -n "${2}p" "$work/$1.out"; }

# --- waybar ------------------------------------------------------------------------
config="$(sed '/^[[:space:]]*\/\//d' examples/waybar/config.jsonc)"
module() { jq -r --arg key "$1" '."custom/sectiond"[$key] // empty' <<<"$config"; }
exec_command="$(module exec)"
on_click="$(module on-click)"
check "waybar config.jsonc is JSON with exec, on-click and return-type json" "$config" \
  test -n "$exec_command" -a -n "$on_click" -a "$(module return-type)" = json
mkdir -p "$HOME/.config/waybar"
cp examples/waybar/sectiond.jq "$HOME/.config/waybar/sectiond.jq"
# A line waybar takes: one JSON object with a string "text", only the keys it knows, an
# optional string tooltip, string (or list) class, string alt, 0-100 percentage, and no
# unescaped & or < in the markup.
waybar_ok='type == "object" and (.text | type) == "string" and (.text | length) > 0
  and (keys - ["text", "tooltip", "class", "alt", "percentage"]) == []
  and ((.tooltip // "") | type) == "string" and ((.alt // "") | type) == "string"
  and (((.class // "") | type) == "string" or (.class | type) == "array")
  and ((.percentage // 0) | type == "number" and . >= 0 and . <= 100)
  and ([.text, (.tooltip // "")] | all(test("<|&(?!amp;|lt;|gt;|quot;|#39;)") | not))'
waybar_line() { # waybar_line N JQ-CONDITION: line N is a waybar object meeting the condition
  local text
  text="$(line waybar "$1")"
  [ "$(jq -c . <<<"$text" 2>/dev/null | wc -l)" = 1 ] && jq -e "($waybar_ok) and ($2)" <<<"$text" >/dev/null
}
reset_state
start waybar "$exec_command"
wait_lines waybar 1
check "waybar: first line is one object: Inbox open, class open, 25 %, tooltip lists every section" \
  "$(line waybar 1; cat "$work/waybar.err")" \
  waybar_line 1 '.text == "▾ Inbox" and .class == "open" and .alt == "open" and .percentage == 25
    and (.tooltip | split("\n") | length) == 4'
check "waybar: the tooltip escapes markup (Projects &amp; Ideas)" "$(line waybar 1)" \
  waybar_line 1 '.tooltip | contains("Projects &amp; Ideas")'
sh -c "$on_click" >/dev/null
wait_lines waybar 2
check "waybar: on-click ($on_click) closes Inbox; a new line: class closed, 0 %" \
  "$(line waybar 2)" waybar_line 2 '.text == "▸ 4 closed" and .class == "closed" and .percentage == 0'
sectionctl open projects >/dev/null
wait_lines waybar 3
check "waybar: opening Projects & Ideas escapes the title in text" "$(line waybar 3)" \
  waybar_line 3 '.text == "▾ Projects &amp; Ideas"'
stop_last

# --- i3blocks ----------------------------------------------------------------------
block="$(sed -n '/^\[sectiond\]/,/^\[/p' examples/i3blocks.conf)"
i3_command="$(sed -n 's/^command=//p' <<<"$block")"
check "i3blocks.conf: a [sectiond] block with command= and interval=persist" "$block" \
  grep -qx 'interval=persist' <<<"$block"
full_text() { # full_text N TEXT: line N is TEXT, a plain one-line full_text
  [ "$(line i3blocks "$1")" = "$2" ]
}
reset_state
start i3blocks "$i3_command"
wait_lines i3blocks 1
check "i3blocks: the first line is the full_text '▾ Inbox'" "$(line i3blocks 1; cat "$work/i3blocks.err")" \
  full_text 1 "▾ Inbox"
sectionctl toggle inbox >/dev/null
wait_lines i3blocks 2
check "i3blocks: a change prints a new full_text '▸ all closed'" "$(line i3blocks 2)" \
  full_text 2 "▸ all closed"
stop_last

# --- tmux ----------------------------------------------------------------------------
# tmux itself reads the file (its quoting rules), then #(...) runs as tmux runs it.
server="sectiond-recipes-$$"
status_right="$(tmux -L "$server" -f examples/tmux.conf start-server \; show-options -gv status-right 2>&1)"
tmux -L "$server" kill-server 2>/dev/null
tmux_command=""
[[ $status_right =~ \#\((.*)\) ]] && tmux_command="${BASH_REMATCH[1]}"
check "tmux.conf: tmux reads a status-right with a #(...) command" "$status_right" test -n "$tmux_command"
reset_state
out="$(sh -c "$tmux_command" 2>&1)"
check "tmux: one short line, '4, 1 open (inbox)'" "$out" \
  test "$out" = "4, 1 open (inbox)" -a "$(wc -l <<<"$out")" = 1 -a "${#out}" -le 40
sectionctl close --all >/dev/null
out="$(sh -c "$tmux_command" 2>&1)"
check "tmux: after a change, '4, 0 open'" "$out" test "$out" = "4, 0 open"

# --- shell loop -------------------------------------------------------------------------
reset_state
start loop examples/sectiond-loop.sh
wait_lines loop 1
# Exclusive mode: opening Today closes Inbox, two changes.
sectionctl toggle today >/dev/null
wait_lines loop 3
pattern='^(state|opened|closed|mode|reload) [0-9]+: [0-9]+, [0-9]+ open( \(.*\))?$'
check "shell loop: a line for the state, then one per change, 'EVENT REVISION: COUNTS'" \
  "$(cat "$work/loop.out" "$work/loop.err")" \
  test "$(grep -cE "$pattern" "$work/loop.out")" = 3 -a "$(wc -l <"$work/loop.out")" = 3
check "shell loop: the state first, then Inbox closed and Today opened" "$(cat "$work/loop.out")" \
  grep -qzE '^state [0-9]+: 4, 1 open \(inbox\)
closed [0-9]+: [^\n]*
opened [0-9]+: 4, 1 open \(today\)
$' "$work/loop.out"
stop_last

finish
