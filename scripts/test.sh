#!/usr/bin/env bash
# Runs every test: unit and integration tests (swift test), each suite Tests/System/suites.tsv
# lists (Tests/System/suites/NAME.sh or NAME.py, under the time limit its row gives), the steps
# that are builds of their own (`make asan`, `make fuzz`, `make package-test`) and a smoke run
# of the benchmark; first, the runner's own test (Tests/Build/test-runner.sh). Installs what it
# needs first. A failing suite does not stop the others: every suite runs, the failures are
# listed at the end, and the last line is `N passed, N failed` (of suites and steps), followed
# by `, N skipped` when a suite could not run here. A suite that cannot run on this machine (no
# root, no LazyFS, ...) prints a line `SKIP NAME: REASON` and exits with 77 (automake's
# convention); it is counted as skipped, not passed, and listed at the end with its reason, as
# are the SKIP lines of suites that ran but left a part out. A suite file the manifest does not
# list, or a row without its file, fails the run. The exit status is 0 only when none failed.
#
#   scripts/test.sh            # everything (make test, CI)
#   scripts/test.sh --quick    # the unit tests and the manifest's quick suites (make check, < 2 min built)
set -uo pipefail
cd "$(dirname "$0")/.."
source Tests/System/lib/suites.sh
quick=
[ "${1:-}" = --quick ] && quick=1
scripts/deps.sh --test || exit 1
swift build --build-tests || { echo "0 passed, 1 failed (the build)"; exit 1; }
passed=0
failures=()
skipped=()
partly=()
times=()
log=$(mktemp /tmp/sectiond-swift-test.XXXXXX.log)
output=$(mktemp /tmp/sectiond-suite.XXXXXX.log)
trap 'rm -f "$log" "$output"' EXIT
# The SKIP lines of the last suite's output, joined by "; ".
skip_reasons() { grep -E '^SKIP ' "$output" | sed 's/^SKIP //' | paste -sd ';' - | sed 's/;/; /g'; }
# Runs one suite or step, its output as it comes, and counts it: 0 passed, 77 skipped, else failed.
suite() {
  local name=$1
  shift
  echo "== $name"
  local start=$SECONDS status
  "$@" 2>&1 | tee "$output"
  status=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    grep -qE '^SKIP ' "$output" && partly+=("$name: $(skip_reasons)")
  elif [ "$status" -eq 77 ]; then
    skipped+=("$name: $(skip_reasons)")
  else
    failures+=("$name (exit $status, after $((SECONDS - start)) s)")
  fi
  times+=("$(printf '%5d s  %s' $((SECONDS - start)) "$name")")
}
swift_test() {
  swift test --skip-build 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] || grep -E '^✘ Test .* (failed|recorded an issue)' "$log" | sed 's/^/   /' >&2
  return "$status"
}
suite "the runner's own test" bash Tests/Build/test-runner.sh
suite "swift test" swift_test
mapfile -t problems < <(manifest_problems)
[ ${#problems[@]} -eq 0 ] ||
  suite "the manifest" sh -c 'printf "FAIL %s\n" "$@"; echo "0 passed, $# failed"; exit 1' - "${problems[@]}"
# The manifest comes in on descriptor 3, so that no suite reads it from its standard input.
while read -r -u 3 name _ _ set; do
  [ -z "$quick" ] || [ "$set" = quick ] || continue
  suite "$name" run_suite "$name"
done 3< <(manifest_rows)
if [ -z "$quick" ]; then
  suite "make asan" make -s asan
  suite "make fuzz" make -s fuzz
  suite "make package-test" make -s package-test
  suite "bench smoke" python3 bench/bench.py --smoke
  suite "D-Bus bench smoke" python3 bench/dbus_bench.py --smoke --no-build
  suite "fleet bench smoke" python3 bench/fleet_bench.py --smoke --no-build
fi
echo
# Where the run's time went, the longest first: what to look at when CI nears its budget.
echo "time taken ($SECONDS s in all):"
printf '%s\n' "${times[@]}" | sort -rn | sed 's/^/ /'
if [ ${#partly[@]} -gt 0 ]; then
  echo "passed, with parts skipped:"
  printf '  %s\n' "${partly[@]}"
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped:"
  printf '  %s\n' "${skipped[@]}"
fi
if [ ${#failures[@]} -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${failures[@]}"
fi
total="$passed passed, ${#failures[@]} failed"
[ ${#skipped[@]} -eq 0 ] || total+=", ${#skipped[@]} skipped"
echo "$total"
[ ${#failures[@]} -eq 0 ]
