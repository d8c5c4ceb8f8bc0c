#!/usr/bin/env bash
# sectiond's D-Bus face (issue 21, docs/DBUS.md) on a private dbus-daemon that the test
# starts, driven by busctl, gdbus and a Python client on Gio: the docs' examples and the
# introspection XML, socket and bus changes as one sequence of revisions, group commit,
# errors, access, restarts, a missing bus, callers that never read, a huge Batch. The work is done by Tests/System/dbus_face.py
# (Debian's /usr/bin/python3, which has python3-gi); this wrapper checks the tools and
# bounds its time. The system bus under systemd is Tests/System/dbus-lab.sh.
#
#   Tests/System/dbus.sh                      # binaries from .build/debug
#   Tests/System/dbus.sh errors restarts      # only these parts
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
source Tests/System/lib/bounded.sh
for tool in dbus-daemon busctl gdbus setpriv; do
  command -v "$tool" >/dev/null || {
    echo "FAIL $tool is missing: scripts/deps.sh --test installs it"
    echo "0 passed, 1 failed"
    exit 1
  }
done
/usr/bin/python3 -c 'import gi' 2>/dev/null || {
  echo "FAIL python3-gi is missing: scripts/deps.sh --test installs it"
  echo "0 passed, 1 failed"
  exit 1
}
run_bounded "${DBUS_TEST_TIMEOUT:-180}" dbus_face.py /usr/bin/python3 Tests/System/dbus_face.py "$@"
