#!/usr/bin/env bash
# The Debian package (issue 13): `scripts/deb.sh` builds it from a release build, lintian
# judges it, and apt-get installs, upgrades, removes and purges it inside the systemd lab
# (Tests/System/lab.py), never on this machine. The work is done by Tests/System/package.py; this
# wrapper bounds its time (a first release build is most of it).
#
#   Tests/System/package.sh
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source Tests/System/lib/bounded.sh
run_bounded "${PACKAGE_TIMEOUT:-900}" package.py python3 Tests/System/package.py "$@"
