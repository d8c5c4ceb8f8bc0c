#!/usr/bin/env bash
# The web page (issue 22) in a real headless Chromium, against a real sectiond and websocketd
# (run with the command line of systemd/sectiond-web.service.in), and `sectionctl pipe` on its
# own: the work is done by Tests/System/web.py with Debian's python3-selenium, which belongs to
# /usr/bin/python3. This wrapper installs what is missing and bounds the time.
#
#   Tests/System/web.sh                        # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/web.sh
#   WEB_SCREENSHOTS=DIR Tests/System/web.sh    # where the light and dark screenshots go
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
needed=(websocketd chromium chromium-driver python3-selenium curl)
missing=()
for package in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "FAIL ${missing[*]} missing: run sudo apt-get install ${missing[*]} (or scripts/deps.sh --test)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null
fi
source Tests/System/lib/bounded.sh
run_bounded "${WEB_TIMEOUT:-300}" web.py /usr/bin/python3 Tests/System/web.py "$@"
