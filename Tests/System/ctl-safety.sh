#!/usr/bin/env bash
# sectionctl against a server it must not trust, and sockets in directories other users could
# write (issue 19): control sequences from the socket, forged ui rows, hung and flooding
# servers, batches that would end early, invalid UTF-8, another user's socket directory. The
# work is done by Tests/System/ctl_safety.py; this wrapper bounds its time. Needs tmux (ui.sh
# installs it) and root for the directory checks (skipped otherwise).
#
#   Tests/System/ctl-safety.sh                # binaries from .build/debug
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${CTL_SAFETY_TIMEOUT:-180}" ctl_safety.py python3 Tests/System/ctl_safety.py "$@"
