#!/usr/bin/env bash
# scripts/test.sh itself: a failing suite must not hide the others. Runs it on a
# stub tree (a `swift` whose tests fail, one failing and one passing suite, a Python suite,
# stub make steps and benches) and checks that every suite and step ran, the failures are
# listed, the last line counts them and the status is not 0. Then a suite that
# skips (exit 77 and a SKIP line) is counted as skipped, not passed, and listed with its
# reason; a suite that passes with a SKIP line is listed too. And the manifest
# Tests/System/suites.tsv rules: its order, its time limits, --quick runs only its quick rows,
# and a suite file it does not list or a row without a file fails the run. A few seconds.
# Ends with "N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source Tests/System/lib/checks.sh
tree=$(mktemp -d /tmp/sdtestsh.XXXXXX)
trap 'rm -rf "$tree"' EXIT
suites="$tree/Tests/System/suites"
mkdir -p "$tree/scripts" "$suites" "$tree/Tests/System/lib" "$tree/Tests/Build" "$tree/bench" "$tree/bin"
cp scripts/test.sh "$tree/scripts/"
cp Tests/System/lib/suites.sh "$tree/Tests/System/lib/"
printf '#!/bin/sh\nexit 0\n' >"$tree/scripts/deps.sh"
# The stub tree's suites, steps and runner's test leave a mark in the tree's root (the runner's
# working directory) that they ran.
printf 'touch "$(dirname "$0")/runner-ran"; echo "1 passed, 0 failed"\n' >"$tree/Tests/Build/test-runner.sh"
printf '%s:\n\t@touch %s-ran\n' asan asan fuzz fuzz package-test package-test >"$tree/Makefile"
printf '#!/usr/bin/env bash\necho "1 passed, 1 failed"; exit 1\n' >"$suites/a-fails.sh"
printf '#!/usr/bin/env bash\necho "2 passed, 0 failed"; touch b-ran\n' >"$suites/b-passes.sh"
printf '#!/usr/bin/env python3\nopen("e-ran", "w")\nprint("1 passed, 0 failed")\n' \
  >"$suites/e-python.py"
manifest() { printf '%s\n' "# NAME SECONDS ROOT SET" "$@" >"$tree/Tests/System/suites.tsv"; }
manifest "a-fails 10 no quick" "b-passes 10 no full" "e-python 10 no full"
for bench in bench dbus_bench fleet_bench; do printf 'open(__file__ + ".ran", "w")\n' >"$tree/bench/$bench.py"; done
printf '#!/bin/sh\n[ "$1" = test ] && { echo "✘ Test stub() recorded an issue"; exit 1; }\nexit 0\n' >"$tree/bin/swift"
chmod +x "$tree/scripts/"*.sh "$tree/bin/swift"
run() { out=$(cd "$tree" && PATH="$tree/bin:$PATH" bash scripts/test.sh "$@" 2>&1); }
last_line() { printf '%s\n' "$out" | grep -v '✘' | tail -n 1; }

run
status=$?
[ "$status" -ne 0 ] && pass "test.sh exits non-zero when a suite fails" || fail "test.sh exits non-zero when a suite fails"
[ -e "$tree/b-ran" ] && pass "the suites after a failing swift test and a failing suite still run" ||
  fail "the suites after a failing swift test and a failing suite still run" "$out"
[ -e "$tree/e-ran" ] && pass "a Python suite runs by the interpreter on its first line" ||
  fail "a Python suite runs by the interpreter on its first line" "$out"
[ -e "$tree/Tests/Build/runner-ran" ] && pass "the runner's own test runs" || fail "the runner's own test runs" "$out"
[ -e "$tree/asan-ran" ] && [ -e "$tree/fuzz-ran" ] && [ -e "$tree/package-test-ran" ] &&
  pass "make asan, make fuzz and make package-test run as steps" || fail "the make steps run" "$out"
[ -e "$tree/bench/bench.py.ran" ] && [ -e "$tree/bench/dbus_bench.py.ran" ] && [ -e "$tree/bench/fleet_bench.py.ran" ] &&
  pass "the bench smoke runs too" ||
  fail "the bench smoke runs too" "$out"
case "$out" in *"failed:"*"swift test"*"a-fails"*) pass "every failure is listed at the end" ;;
  *) fail "every failure is listed at the end" "$out" ;; esac
expect "the last line counts the suites and steps: 9 passed, 2 failed" "9 passed, 2 failed" "$(last_line)"
order=$(printf '%s\n' "$out" | sed -n 's/^== //p' | paste -sd ',' -)
expect "suites run in the manifest's order, the steps after them" \
  "the runner's own test,swift test,a-fails,b-passes,e-python,make asan,make fuzz,make package-test,bench smoke,D-Bus bench smoke,fleet bench smoke" \
  "$order"

rm -f "$tree/b-ran" "$tree/e-ran" "$tree/asan-ran" "$tree/bench/bench.py.ran"
run --quick
[ -e "$tree/b-ran" ] || [ -e "$tree/e-ran" ] || [ -e "$tree/asan-ran" ] || [ -e "$tree/bench/bench.py.ran" ] &&
  fail "--quick runs only the manifest's quick suites, no step or bench" "$out" ||
  pass "--quick runs only the manifest's quick suites, no step or bench"
expect "--quick counts the runner's test, swift test and the quick suite" "1 passed, 2 failed" "$(last_line)"

rm "$suites/a-fails.sh"
printf '#!/usr/bin/env bash\necho "SKIP c: no LazyFS here"; exit 77\n' >"$suites/c-skips.sh"
printf '#!/usr/bin/env bash\necho "SKIP part d: needs root"; echo "PASS d"\n' >"$suites/d-partly.sh"
manifest "b-passes 10 no quick" "c-skips 10 no full" "d-partly 10 no full" "e-python 10 no full"
printf '#!/bin/sh\nexit 0\n' >"$tree/bin/swift"
run
status=$?
expect "a skipped suite does not fail the run" 0 "$status"
expect "the last line counts the skipped suite: 11 passed, 0 failed, 1 skipped" "11 passed, 0 failed, 1 skipped" \
  "$(last_line)"
case "$out" in *$'skipped:\n'*"c-skips: c: no LazyFS here"*) pass "the skipped suite is listed with its reason" ;;
  *) fail "the skipped suite is listed with its reason" "$out" ;; esac
case "$out" in *"parts skipped:"*"d-partly: part d: needs root"*) pass "a suite that skipped a part is listed" ;;
  *) fail "a suite that skipped a part is listed" "$out" ;; esac
rm "$suites/c-skips.sh"
manifest "b-passes 10 no quick" "d-partly 10 no full" "e-python 10 no full"
run
expect "without a skipped suite the last line has no skipped count" "11 passed, 0 failed" "$(last_line)"

printf '#!/usr/bin/env bash\nsleep 30\n' >"$suites/f-hangs.sh"
manifest "b-passes 10 no quick" "f-hangs 1 no quick"
start=$SECONDS
run --quick
case "$out" in *"FAIL f-hangs did not finish within 1 s"*"failed:"*"f-hangs"*) pass "a suite past its time limit fails" ;;
  *) fail "a suite past its time limit fails" "$out" ;; esac
[ $((SECONDS - start)) -lt 20 ] && pass "... and is stopped at its limit" || fail "... and is stopped at its limit"
rm "$suites/f-hangs.sh"

mkdir "$suites/__pycache__"
manifest "b-passes 10 no quick" "d-partly 10 no full" "e-python 10 no full"
run --quick
expect "a folder in suites/ (Python's __pycache__) is not a suite" "3 passed, 0 failed" "$(last_line)"
manifest "b-passes 10 no quick"
run --quick
status=$?
[ "$status" -ne 0 ] && [[ "$out" == *"FAIL Tests/System/suites/d-partly.sh is not in Tests/System/suites.tsv"* ]] &&
  pass "a suite file the manifest does not list fails the run" || fail "a suite file the manifest does not list fails the run" "$out"
manifest "b-passes 10 no quick" "d-partly 10 no full" "e-python 10 no full" "g-gone 10 no full"
run
status=$?
[ "$status" -ne 0 ] && [[ "$out" == *"g-gone has 0 files"* ]] && [[ "$out" == *"FAIL g-gone has no file"* ]] &&
  pass "a manifest row without a file fails the run" || fail "a manifest row without a file fails the run" "$out"
manifest "b-passes 10 maybe quick" "d-partly 10 no full" "e-python 10 no full"
run --quick
[[ "$out" == *"b-passes: expected NAME SECONDS yes|no quick|full"* ]] && pass "a malformed manifest row fails the run" ||
  fail "a malformed manifest row fails the run" "$out"
finish
