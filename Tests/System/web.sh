#!/usr/bin/env bash
# The web page (issue 22) in a real headless Chromium, against a real sectiond and websocketd
# (run with the command line of systemd/sectiond-web.service.in), and `sectionctl pipe` on its
# own: the work is done by Tests/System/web.py (and its web_*.py) with Debian's python3-selenium,
# which belongs to /usr/bin/python3. This wrapper installs what is missing and bounds the time.
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
# websocketd, chromium, chromium-driver, python3-selenium and curl come with deps.sh --test.
if ! { command -v websocketd && command -v chromium && command -v chromedriver && command -v curl &&
  /usr/bin/python3 -c 'import selenium'; } >/dev/null 2>&1; then
  scripts/deps.sh --test >&2 || {
    echo "FAIL the browser test's packages are missing: run scripts/deps.sh --test as root"
    echo "0 passed, 1 failed"
    exit 1
  }
fi
source Tests/System/lib/bounded.sh
run_bounded "${WEB_TIMEOUT:-300}" web.py /usr/bin/python3 Tests/System/web.py "$@"
