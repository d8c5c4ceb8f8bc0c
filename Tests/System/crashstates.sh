#!/usr/bin/env bash
# Every crash state loads (issue 36): each scenario runs sectiond under strace, builds the
# states a power cut may leave at every point of the trace (ALICE's weakest model) and starts
# sectiond on them (see Tests/System/crashstates.py and crashmodel.py, docs/DURABILITY.md).
#
#   Tests/System/crashstates.sh                    # every scenario, binaries from .build/debug
#   Tests/System/crashstates.sh toggles batch      # some (by the first word of their names)
#   CRASHSTATES_SEED=N CRASHSTATES_LIMIT=M ...     # repeat a run; start M states a scenario
#
# Failures are kept under $CRASHSTATES_KEEP (default /tmp/crashstates-failures).
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${CRASHSTATES_TIMEOUT:-420}" crashstates.py python3 Tests/System/crashstates.py "$@"
