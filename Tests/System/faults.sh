#!/usr/bin/env bash
# Fault tests of a real sectiond (issue 6): SIGKILL during bursts of changes (50 rounds) and
# of runtime edits watched by subscribers (issue 11),
# descriptor exhaustion under prlimit --nofile=64, and four kinds of bad client. The work
# is done by Tests/System/faults.py; this wrapper bounds its time.
#
#   Tests/System/faults.sh                    # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/faults.sh
#   Tests/System/faults.sh kill --rounds 500  # one part, more rounds
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${FAULTS_TIMEOUT:-180}" faults.py python3 Tests/System/faults.py "$@"
