#!/usr/bin/env bash
# Soak test of a real sectiond (issue 6, "Load"): 200 clients mixing every command with
# random disconnects, 50 subscribers (10 reading slowly), for SOAK_SECONDS (default 60).
# The work is done by Tests/System/soak.py, which prints the figures at the end.
#
#   Tests/System/soak.sh                          # 60 s, binaries from .build/debug
#   SOAK_SECONDS=600 Tests/System/soak.sh         # longer, by hand
#   Tests/System/soak.sh --seconds 3600 --seed 42
#   BUILD_DIR=.build/release Tests/System/soak.sh
#
# Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR="${BUILD_DIR:-.build/debug}"
seconds="${SOAK_SECONDS:-60}"
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = "--seconds" ]; then j=$((i + 1)); seconds="${!j}"; fi
done
limit=$(python3 -c "print(int(float('$seconds')) + 140)")
source Tests/System/lib/bounded.sh
run_bounded "$limit" soak.py python3 Tests/System/soak.py --seconds "$seconds" "$@"
