#!/usr/bin/env bash
# The Debian package (issue 13): `scripts/deb.sh` builds it from a release build, lintian
# judges it, and apt-get installs, upgrades, removes and purges it inside the systemd lab
# (tests/lab.py), never on this machine. The work is done by tests/package.py; this
# wrapper bounds its time (a first release build is most of it).
#
#   tests/package.sh
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source tests/lib/bounded.sh
run_bounded "${PACKAGE_TIMEOUT:-900}" package.py python3 tests/package.py "$@"
