#!/usr/bin/env bash
# Runs every test: unit and integration tests (swift test), each shell suite in Tests/System/,
# and a smoke run of the benchmark. Installs what it needs first. A failing suite does not
# stop the others: every suite runs, the failures are listed at the end, and the last line is
# `N passed, N failed` (of suites); the exit status is 0 only when none failed.
#
#   scripts/test.sh            # everything (make test, CI)
#   scripts/test.sh --quick    # the unit tests and the everyday suites (make check, < 2 min built)
set -uo pipefail
quick_suites="shell-session everyday frictions completions docs"
cd "$(dirname "$0")/.."
scripts/deps.sh --test || exit 1
swift build --build-tests || { echo "0 passed, 1 failed (the build)"; exit 1; }
passed=0
failures=()
# Runs one suite, its output as it comes, and counts it.
suite() {
  local name=$1
  shift
  echo "== $name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
  else
    failures+=("$name (exit $?, after $((SECONDS - start)) s)")
  fi
}
log=$(mktemp /tmp/sectiond-swift-test.XXXXXX.log)
trap 'rm -f "$log"' EXIT
swift_test() {
  swift test --skip-build 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] || grep -E '^✘ Test .* (failed|recorded an issue)' "$log" | sed 's/^/   /' >&2
  return "$status"
}
suite "swift test" swift_test
for test in Tests/System/*.sh; do
  if [ "${1:-}" = --quick ]; then
    name=$(basename "$test" .sh)
    [[ " $quick_suites " == *" $name "* ]] || continue
  fi
  suite "$test" env BUILD_DIR=.build/debug bash "$test"
done
if [ "${1:-}" != --quick ]; then
  suite "bench smoke" python3 bench/bench.py --smoke
  suite "D-Bus bench smoke" python3 bench/dbus_bench.py --smoke --no-build
fi
echo
if [ ${#failures[@]} -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, ${#failures[@]} failed"
[ ${#failures[@]} -eq 0 ]
