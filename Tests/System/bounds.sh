#!/usr/bin/env bash
# The daemon's bounds end to end (issue 19): work per request and per loop turn, the list's
# text and the state file it makes, load time, shared snapshots, the revision limit, bidi
# controls, the history at its bounds (issue 33), long answers to clients that do not read and
# memory given back after a flood (issue 44). The work is done by Tests/System/bounds.py;
# this wrapper bounds its time.
#
#   Tests/System/bounds.sh                   # binaries from .build/debug
#   Tests/System/bounds.sh batch text        # some parts
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${BOUNDS_TIMEOUT:-300}" bounds.py python3 Tests/System/bounds.py "$@"
