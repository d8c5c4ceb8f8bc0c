#!/usr/bin/env bash
# Every crash state loads (issue 36, docs/DURABILITY.md): sectiond's saves in each scenario
# are traced with strace, every state a power cut may leave under ALICE's weakest model is
# built and started with the real binary, and checked against what was acknowledged. The
# work is done by Tests/System/crashstates.py (and lib/crashmodel.py); this wrapper checks
# the tools and bounds its time.
#
#   Tests/System/crash-states.sh                  # binaries from .build/debug
#   Tests/System/crash-states.sh BATCH            # only the scenarios whose title says so
#   CRASH_STATES_MAX=1000 Tests/System/crash-states.sh   # start more states per scenario
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source Tests/System/lib/checks.sh
source Tests/System/lib/bounded.sh
command -v strace >/dev/null || install_missing strace:strace
run_bounded "${CRASH_STATES_TIMEOUT:-600}" crashstates.py python3 Tests/System/crashstates.py "$@"
