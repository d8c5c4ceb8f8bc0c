#!/usr/bin/env bash
# End-to-end tests of `sectionctl ui` (issue 12): the ui runs in tmux at fixed sizes against
# a real sectiond, is driven with `tmux send-keys` (keys, and mouse clicks as raw SGR bytes)
# and read with `tmux capture-pane -p`, and the checks are on what a person would see. The
# work is done by Tests/System/ui.py; this wrapper installs tmux when missing and bounds the time.
#
#   Tests/System/ui.sh                        # binaries from .build/debug
#   BUILD_DIR=.build/release Tests/System/ui.sh
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
if ! command -v tmux >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "FAIL tmux is missing: run sudo apt-get install tmux"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "installing tmux" >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends tmux; } >/dev/null
fi
source Tests/System/lib/bounded.sh
run_bounded "${UI_TIMEOUT:-240}" ui.py python3 Tests/System/ui.py "$@"
