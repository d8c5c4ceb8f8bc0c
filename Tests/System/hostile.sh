#!/usr/bin/env bash
# Hostile local clients against a real sectiond (issue 15): spinning on a hang-up, starving
# new connections, seeing unsaved changes, taking every slot, huge replies, FIFOs. The work
# is done by Tests/System/hostile.py; this wrapper bounds its time.
#
#   Tests/System/hostile.sh                   # binaries from .build/debug
#   Tests/System/hostile.sh fair big          # some parts
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${HOSTILE_TIMEOUT:-240}" hostile.py python3 Tests/System/hostile.py "$@"
