#!/usr/bin/env bash
# Tests of sectiond as installed under a real systemd as PID 1 of a private namespace
# (Tests/System/lab.py builds the lab; Tests/System/systemd_lab.py has the checks): socket activation,
# synchronous reload, watchdog restart, stop, socket permissions, journal priorities,
# all against the hardened units exactly as scripts/install.sh installs them; and the
# lab itself (nothing leaks to the host, nothing outlives it). About 10 s.
#
# The installed binaries are the release build that `make install` ships (swift build
# -c release --static-swift-stdlib, about 20 s from cold here, seconds when up to date;
# bench.py reuses it), not $BUILD_DIR: the debug build links the Swift runtime
# dynamically and behaves differently under the hardened unit (a watchdog SIGABRT stalls
# 10 s in the runtime's backtracer). SYSTEMD_LAB_BUILD_DIR=DIR skips the build.
#
#   Tests/System/systemd-lab.sh                                # release build, every part
#   SYSTEMD_LAB_BUILD_DIR=.build/debug Tests/System/systemd-lab.sh reload watchdog
#
# Needs root; without it (or without unshare or systemd) prints one SKIP line saying why
# (SYSTEMD_LAB_REQUIRED=1 makes that a failure). Ends with "N passed, N failed"; exits 1
# on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source Tests/System/lib/bounded.sh

# What the lab needs (command:Debian package); installed only when missing and as root
# (without root the driver skips anyway). dbus is for the user manager (logind).
missing=()
for pair in unshare:util-linux nsenter:util-linux setpriv:util-linux useradd:passwd \
  /lib/systemd/systemd:systemd journalctl:systemd dbus-daemon:dbus python3:python3; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "installing: ${missing[*]}"
  apt-get update -qq >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    echo "warning: could not install ${missing[*]}"
fi
if [ -z "${SYSTEMD_LAB_BUILD_DIR:-}" ]; then
  build_log="$(mktemp)"
  trap 'rm -f "$build_log"' EXIT
  if ! run_bounded 900 "release build" swift build -c release --static-swift-stdlib >"$build_log" 2>&1; then
    tail -20 "$build_log"
    echo "FAIL release build (swift build -c release --static-swift-stdlib)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  SYSTEMD_LAB_BUILD_DIR="$(swift build -c release --static-swift-stdlib --show-bin-path)"
fi
export BUILD_DIR="$SYSTEMD_LAB_BUILD_DIR"
run_bounded "${SYSTEMD_LAB_TIMEOUT:-180}" systemd_lab.py python3 Tests/System/systemd_lab.py "$@"
