#!/usr/bin/env bash
# sectiond on the system bus under a real systemd 252 (issue 21): the systemd lab
# (Tests/System/lab.py) with dbus-daemon as the system bus, the project installed as the
# Debian package installs it, bus activation on the first call, AccessDenied for a user
# outside the sectiond group while reading works, one revision sequence across the socket
# and the bus, the name across a restart and a crash. The checks are in
# Tests/System/dbus_lab.py; this wrapper bounds its time. About 20 s.
#
#   Tests/System/dbus-lab.sh                       # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/dbus-lab.sh
#
# Needs root; without it (or without unshare or systemd) prints one SKIP line saying why
# (SYSTEMD_LAB_REQUIRED=1 makes that a failure). Ends with "N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${DBUS_LAB_TIMEOUT:-180}" dbus_lab.py python3 Tests/System/dbus_lab.py "$@"
