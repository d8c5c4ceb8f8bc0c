#!/usr/bin/env bash
# Drives a real sectiond exactly as a shell script would: printf | nc -U -N, and socat.
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
sectiond="$root/${BUILD_DIR:-.build/debug}/sectiond"
for tool in nc socat; do
  command -v "$tool" >/dev/null || { echo "FAIL $tool is missing: scripts/deps.sh --test installs it"; echo "0 passed, 1 failed"; exit 1; }
done
dir=$(mktemp -d /tmp/sdsh.XXXXXX)
sock="$dir/c.sock"
"$sectiond" --socket "$sock" --state "$dir/state.json" 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

passed=0 failed=0
check() { # name, expected, actual
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok   $1"
  else failed=$((failed + 1)); printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"; fi
}

check "nc: pipelined requests, end of input answers all" \
"section 1 second open 8 Second
OK 1
section 0 first closed 10 First
section 1 second open 8 Second
section 2 third closed 6 Third
OK 1" \
"$(printf 'TOGGLE 1\nLIST' | nc -U -N "$sock")"

check "socat: a one-liner" "mode exclusive
OK 2" "$(echo 'MODE exclusive' | socat - "UNIX-CONNECT:$sock")"

check "nc: CRLF and case-insensitive verbs" "state 2 exclusive second
OK 2" "$(printf 'subscribe\r\n' | nc -U -N "$sock" | head -2)"

# A subscriber in the background sees a change made by another one-liner.
(printf 'SUBSCRIBE\n'; sleep 1) | socat - "UNIX-CONNECT:$sock" >"$dir/events" &
sleep 0.3
printf 'OPEN third\n' | nc -U -N "$sock" >/dev/null
sleep 0.3
check "socat: subscriber sees closed then opened" "!closed 3 1 second
!opened 4 2 third" "$(grep '^!' "$dir/events")"

# The start-up save writes the whole state; the changes after it append to its journal,
# each group ending with its revision and checksum (shown here as <crc>).
# Each group names who made its changes (`by TIME VIA UID PID NAME`): the name is the
# client's process name, as neither nc nor socat says CLIENT NAME.
check "state file holds the start, its journal every change and who made it" '{"format":2,"revision":0,"mode":"multi","sections":{"first":null,"second":null,"third":null},
by <time> socket <uid> <pid> nc
open 1 1
commit 1 <crc>
by <time> socket <uid> <pid> socat
mode 2 exclusive
commit 2 <crc>
by <time> socket <uid> <pid> nc
close 3 1
open 4 2
commit 4 <crc>' "$(head -1 "$dir/state.json"; sed -e 's/^\(commit [0-9]*\) [0-9a-f]\{8\}$/\1 <crc>/' \
  -e 's/^by [0-9T:.Z-]* socket [0-9]* [0-9]* /by <time> socket <uid> <pid> /' "$dir/state.json.journal")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
