#!/usr/bin/env bash
# A user's own sectiond under a real user manager (issue 13): make install's units in the
# systemd lab (Tests/System/lab.py), `scripts/install.sh --prefix ~/.local` and `systemctl --user enable --now
# sectiond.socket sectiond-readonly.socket` as the user, then
# sectionctl as the README shows, the state, reload, the sandbox and the watchdog. The
# work is done by Tests/System/user_service.py; this wrapper bounds its time.
#
#   Tests/System/user-service.sh                    # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/user-service.sh
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${USER_SERVICE_TIMEOUT:-180}" user_service.py python3 Tests/System/user_service.py "$@"
