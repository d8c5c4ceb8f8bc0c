#!/usr/bin/env bash
# Several lists on one machine (issue 34) under a real systemd as PID 1 (the lab,
# Tests/System/lab.py): the plain sectiond.service, sectiond@a and sectiond@b, and a
# user's sectiond@u at once; each changed through sectionctl -l, its bus name and its
# socket; restart, crash and reload of one leave the others alone; sectionctl lists in
# text and JSON; the bus names; the installed web page on a named list in Chromium; bad
# names refused; the README's example. The checks are in
# Tests/System/lists_lab.py; this wrapper bounds its time. About 20 s.
#
#   Tests/System/lists.sh                          # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/lists.sh
#   Tests/System/lists.sh changes restart          # some parts only (after the set-up)
#
# Needs root; without it (or without unshare or systemd) prints one SKIP line saying why.
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
run_bounded "${LISTS_TIMEOUT:-240}" lists_lab.py python3 Tests/System/lists_lab.py "$@"
