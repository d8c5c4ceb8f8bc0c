#!/usr/bin/env bash
# Tests of sectiond as installed under a real systemd as PID 1 of a private namespace
# (tests/lab.py builds the lab; tests/systemd_lab.py has the checks): socket activation,
# synchronous reload, watchdog restart, stop, socket permissions, journal priorities,
# all against the hardened units exactly as scripts/install.sh installs them.
#
#   tests/systemd-lab.sh                       # binaries from .build/debug
#   BUILD_DIR=.build/release tests/systemd-lab.sh
#   tests/systemd-lab.sh reload watchdog       # some parts only
#
# Needs root; without it (or without unshare or systemd) prints one SKIP line saying why.
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source tests/lib/bounded.sh
run_bounded "${SYSTEMD_LAB_TIMEOUT:-180}" systemd_lab.py python3 tests/systemd_lab.py "$@"
