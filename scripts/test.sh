#!/usr/bin/env bash
# Runs every test: unit and integration tests (swift test), the shell tests in Tests/System/,
# and a smoke run of the benchmark. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
swift build --build-tests
swift test --skip-build 2>&1 | tee /tmp/sectiond-swift-test.log
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || { echo "swift test failed" >&2; exit "$status"; }
failed=0
for test in Tests/System/*.sh; do
  echo "== $test"
  BUILD_DIR=.build/debug bash "$test" || failed=1
done
echo "== bench smoke"
python3 bench/bench.py --smoke || failed=1
python3 bench/dbus_bench.py --smoke --no-build || failed=1
exit $failed
