#!/usr/bin/env bash
# scripts/test.sh itself (issue 23): a failing suite must not hide the others. Runs it on a
# stub tree (a `swift` whose tests fail, one failing and one passing suite, stub benches) and
# checks that every suite ran, the failures are listed, the last line is "3 passed, 2 failed"
# and the status is not 0. Then (issue 44) a suite that skips (exit 77 and a SKIP line) is
# counted as skipped, not passed, and listed with its reason; a suite that passes with a SKIP
# line is listed too. Under a second. Ends with "N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source Tests/System/lib/checks.sh
tree=$(mktemp -d /tmp/sdtestsh.XXXXXX)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/scripts" "$tree/Tests/System" "$tree/bench" "$tree/bin"
cp scripts/test.sh "$tree/scripts/"
printf '#!/bin/sh\nexit 0\n' >"$tree/scripts/deps.sh"
printf 'echo "1 passed, 1 failed"; exit 1\n' >"$tree/Tests/System/a-fails.sh"
printf 'echo "2 passed, 0 failed"; touch "$(dirname "$0")/b-ran"\n' >"$tree/Tests/System/b-passes.sh"
for bench in bench dbus_bench; do printf 'open(__file__ + ".ran", "w")\n' >"$tree/bench/$bench.py"; done
printf '#!/bin/sh\n[ "$1" = test ] && { echo "✘ Test stub() recorded an issue"; exit 1; }\nexit 0\n' >"$tree/bin/swift"
chmod +x "$tree/scripts/"*.sh "$tree/bin/swift"
out=$(PATH="$tree/bin:$PATH" bash "$tree/scripts/test.sh" 2>&1)
status=$?
[ "$status" -ne 0 ] && pass "test.sh exits non-zero when a suite fails" || fail "test.sh exits non-zero when a suite fails"
[ -e "$tree/Tests/System/b-ran" ] && pass "the suites after a failing swift test and a failing suite still run" ||
  fail "the suites after a failing swift test and a failing suite still run" "$out"
[ -e "$tree/bench/bench.py.ran" ] && [ -e "$tree/bench/dbus_bench.py.ran" ] && pass "the bench smoke runs too" ||
  fail "the bench smoke runs too" "$out"
case "$out" in *"failed:"*"swift test"*"a-fails.sh"*) pass "every failure is listed at the end" ;;
  *) fail "every failure is listed at the end" "$out" ;; esac
[ "$(printf '%s\n' "$out" | grep -v '✘' | tail -n 1)" = "3 passed, 2 failed" ] &&
  pass "the last line counts the suites: 3 passed, 2 failed" || fail "the last line counts the suites" "$out"

rm "$tree/Tests/System/a-fails.sh"
printf 'echo "SKIP c: no LazyFS here"; exit 77\n' >"$tree/Tests/System/c-skips.sh"
printf 'echo "SKIP part d: needs root"; echo "PASS d"\n' >"$tree/Tests/System/d-partly.sh"
printf '#!/bin/sh\nexit 0\n' >"$tree/bin/swift"
out=$(PATH="$tree/bin:$PATH" bash "$tree/scripts/test.sh" 2>&1)
status=$?
expect "a skipped suite does not fail the run" 0 "$status"
expect "the last line counts the skipped suite: 5 passed, 0 failed, 1 skipped" "5 passed, 0 failed, 1 skipped" \
  "$(printf '%s\n' "$out" | tail -n 1)"
case "$out" in *$'skipped:\n'*"c-skips.sh: c: no LazyFS here"*) pass "the skipped suite is listed with its reason" ;;
  *) fail "the skipped suite is listed with its reason" "$out" ;; esac
case "$out" in *"parts skipped:"*"d-partly.sh: part d: needs root"*) pass "a suite that skipped a part is listed" ;;
  *) fail "a suite that skipped a part is listed" "$out" ;; esac
rm "$tree/Tests/System/c-skips.sh"
out=$(PATH="$tree/bin:$PATH" bash "$tree/scripts/test.sh" 2>&1)
expect "without a skipped suite the last line has no skipped count" "5 passed, 0 failed" \
  "$(printf '%s\n' "$out" | tail -n 1)"
finish
