#!/usr/bin/env bash
# sectiond-web.service as installed, system and user unit, in the systemd lab (issue 22):
# the page and its WebSocket through the real websocketd in the real sandbox, read-only by
# default, the port and control drop-ins the units document, the origin check, and the
# `systemd-analyze security` figure. The work is done by Tests/System/web_units.py; this
# wrapper bounds its time. Without root or a cgroup2 hierarchy the lab prints one SKIP line.
#
#   Tests/System/web-units.sh                    # binaries from .build/debug
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
command -v websocketd >/dev/null || {
  echo "FAIL websocketd is missing: scripts/deps.sh --test installs it"
  echo "0 passed, 1 failed"
  exit 1
}
source Tests/System/lib/bounded.sh
run_bounded "${WEB_UNITS_TIMEOUT:-180}" web_units.py python3 Tests/System/web_units.py "$@"
