#!/usr/bin/env bash
# Runs the Swift test suite (unit and integration tests) once under AddressSanitizer.
#
# The build goes to its own scratch path (ASAN_SCRATCH, default .build-asan) so it never mixes
# with the plain debug build. The integration tests start the `sectiond` and `sectionctl` found
# beside the test bundle, so here those are the ASan builds too: a memory error in the daemon
# makes it die, and the test that drove it fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/deps.sh --test
scratch=${ASAN_SCRATCH:-.build-asan}
# Swift's crash backtracer reads process memory in a way ASan reports as a second error.
export SWIFT_BACKTRACE=enable=no
symbolizer=$(dirname "$(command -v swiftc)")/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer
# Stop at the first error, and make it fail the process even where a test harness would not look.
# Leaks are checked at every exit (test bundle, daemon, tool) but for the test harness's own.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/Tests/Build/lsan-suppressions.txt:print_suppressions=0}

log=$(mktemp /tmp/sectiond-asan.XXXXXX.log)
trap 'rm -f "$log"' EXIT
echo "== asan: build ($scratch)"
start=$SECONDS
if ! swift build --build-tests --sanitize=address --scratch-path "$scratch" >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
echo "   built in $((SECONDS - start)) s"
echo "== asan: swift test"
start=$SECONDS
status=0
# Bounded, so a hung test fails CI instead of stalling it.
timeout --kill-after=10 "${ASAN_TEST_TIMEOUT:-900}" \
  swift test --skip-build --sanitize=address --scratch-path "$scratch" >"$log" 2>&1 || status=$?
[ "$status" -eq 124 ] && echo "swift test did not finish within ${ASAN_TEST_TIMEOUT:-900} s" >&2
echo "   ran in $((SECONDS - start)) s"
if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)" "$log"; then
  grep -m1 -A 40 -E "ERROR: (AddressSanitizer|LeakSanitizer)" "$log" >&2
  [ "$status" -eq 0 ] && status=1
fi
grep -E "Test run with|Executed [0-9]+ tests" "$log" || true
# Counts from swift-testing's summary line and XCTest's, if any.
tests=$(sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\}.*/\1/p' "$log" | tail -n 1)
failures=$(grep -cE '^✘ Test .* (failed|recorded an issue)' "$log" || true)
if [ "$status" -ne 0 ]; then
  grep -E '^✘|error:|Fatal error' "$log" | head -n 40 >&2 || true
  echo "$((${tests:-0} - failures < 0 ? 0 : ${tests:-0} - failures)) passed, $((failures > 0 ? failures : 1)) failed"
  exit "$status"
fi
echo "${tests:-0} passed, 0 failed"
