#!/usr/bin/env bash
# The systemd lab never sees the machine's own sectiond state, config or enabled units
# (issue 23): Tests/System/lab_clean.py runs in a private mount namespace whose /var, /etc
# and /root are overlays seeded with them, so the host's files are neither needed nor
# touched. A few seconds; needs root (else one SKIP line). Ends with "N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
source Tests/System/lib/bounded.sh
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  echo "SKIP lab-clean: needs root and unshare"
  exit 77 # skipped, for scripts/test.sh
fi
layers=$(mktemp -d /tmp/sdlabclean.XXXXXX)
trap 'rm -rf "$layers"' EXIT
run_bounded 120 lab_clean.py unshare --mount --propagation private bash -c '
  set -e
  for d in var etc root; do
    mkdir -p "$1/$d/upper" "$1/$d/work"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$1/$d/upper,workdir=$1/$d/work" "/$d"
  done
  mkdir -p /var/lib/sectiond /etc/sectiond /root/.local/state/sectiond /etc/systemd/system/sockets.target.wants
  echo "{\"mode\":\"multi\",\"revision\":7,\"sections\":[{\"id\":\"stray\",\"title\":\"Stray\",\"open\":true}]}" \
    >/var/lib/sectiond/state.json
  cp /var/lib/sectiond/state.json /root/.local/state/sectiond/state.json
  echo "{\"sections\":[{\"title\":\"Stray\"}]}" >/etc/sectiond/sections.json
  ln -sf /usr/local/lib/systemd/system/sectiond.socket /etc/systemd/system/sockets.target.wants/sectiond.socket
  exec python3 Tests/System/lab_clean.py
' lab-clean "$layers"
