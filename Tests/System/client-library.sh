#!/usr/bin/env bash
# SectionClient as its users meet it: its public API is the one listed in docs/CLIENT-API.txt,
# each type and method documented (scripts/client-api.sh --check); the example program of
# docs/CLIENT.md (examples/accordion) builds against this checkout as a program outside the
# package would, and works against a real daemon. A change to the library that breaks its
# users breaks this suite. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source Tests/System/lib/checks.sh
dir=$(mktemp -d /tmp/sdex.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT

if api=$(BUILD_DIR="$BUILD_DIR" scripts/client-api.sh --check 2>&1); then
  pass "the public API is the one docs/CLIENT-API.txt lists, documented"
else
  fail "the public API is the one docs/CLIENT-API.txt lists, documented" "$api"
fi

# Its own scratch directory, so the example's build never touches the package's .build; made
# afresh each time, because SwiftPM keeps a path dependency's list of files from its last
# build there and does not see a file added to SectionClient since (measured: "cannot find
# 'Reactor' in scope" after one was added).
scratch="${EXAMPLE_BUILD_DIR:-$PWD/.build/examples/accordion}"
rm -rf "$scratch"
if swift build --package-path examples/accordion --scratch-path "$scratch" >"$dir/build.log" 2>&1; then
  pass "examples/accordion builds against this checkout's SectionClient"
else
  fail "examples/accordion builds" "$(tail -20 "$dir/build.log")"
  finish
fi
accordion="$scratch/debug/accordion"

start demo --no-state
export SECTIOND_SOCKET="$dir/demo.sock"
expect "toggle prints what the daemon says" "second is open now" "$("$accordion" toggle second)"

# Follows two changes made by sectionctl while it runs, then stops.
"$accordion" --count 2 >"$dir/out" 2>"$dir/err" &
follower=$!
pids+=($follower)
for _ in $(seq 100); do grep -q "revision 1" "$dir/out" && break; sleep 0.05; done
"$BUILD_DIR/sectionctl" open first >/dev/null
for _ in $(seq 100); do grep -q "revision 2" "$dir/out" && break; sleep 0.05; done
"$BUILD_DIR/sectionctl" rename third "Third, renamed" >/dev/null
for _ in $(seq 200); do kill -0 "$follower" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$follower" 2>/dev/null; then
  fail "the example stops after --count 2 changes" "$(cat "$dir/out" "$dir/err")"
else
  pass "the example stops after --count 2 changes"
fi
out=$(cat "$dir/out")
contains "the first frame shows the open section and its items" $'▾ Second (8)\n    1' "$out"
contains "an open made elsewhere is drawn" $'— revision 2, multi —\n▾ First (10)' "$out"
contains "a rename made elsewhere is drawn" "▸ Third, renamed (6)" "$out"
"$accordion" toggle nope >/dev/null 2>"$dir/err"
expect "a refused request exits 1 with the daemon's message" \
  "1 accordion: no section \"nope\": there are 3 (0-2)" "$? $(cat "$dir/err")"
finish
