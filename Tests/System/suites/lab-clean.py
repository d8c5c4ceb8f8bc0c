#!/usr/bin/env python3
"""The systemd lab starts from a state of its own, whatever the machine holds:
a `make run` as root, a `make install` or the package leave /var/lib/sectiond,
/etc/sectiond and enabled units on the host, and before the fix the lab's /var and /etc
overlays showed them, so a README walk-through's `sectionctl add x X` appeared in the lab's
lists and the package test saw a /var/lib/sectiond it had not made.

Runs itself again inside a private mount namespace whose /var, /etc and /root are overlays
seeded with such files (the host's own are never touched); the lab must see none of them,
while the namespace it starts from still has them. A few seconds; needs root and unshare
(else one SKIP line).

Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from lab import Lab, LabUnavailable, skip_line  # noqa: E402
from sdlib import Results  # noqa: E402

SEEDED = ["/var/lib/sectiond/state.json", "/etc/sectiond/sections.json",
          "/root/.local/state/sectiond/state.json",
          "/etc/systemd/system/sockets.target.wants/sectiond.socket"]


def main():
    results = Results()
    outside = [path for path in SEEDED if os.path.lexists(path)]
    results.check(outside == SEEDED, "the machine (this namespace) holds a stray state, config and unit",
                  str(outside))
    try:
        with Lab() as lab:
            for path in SEEDED:
                seen = lab.run(["sh", "-c", f'test -e "{path}" || test -L "{path}"'], check=False)
                results.check(seen.returncode != 0, f"the lab does not see the machine's {path}")
            listing = lab.run(["ls", "-A", "/var/lib"], check=False).stdout.split()
            results.check("sectiond" not in listing, "the lab's /var/lib has no sectiond of the machine's",
                          " ".join(listing))
    except LabUnavailable as reason:
        return skip_line(str(reason))
    still = [path for path in SEEDED if os.path.lexists(path)]
    results.check(still == SEEDED, "the machine's files are untouched by the lab", str(still))
    return results.finish()


# The namespace's side: overlays over /var, /etc and /root in the layers folder ($1), the stray
# files in them, then this file again ($2 $3) to run the checks.
SEED = r'''
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
  exec "$2" "$3"
'''


def in_seeded_namespace():
    """Runs this file again inside the seeded namespace; returns its status."""
    if os.getuid() != 0 or shutil.which("unshare") is None:
        print("SKIP lab-clean: needs root and unshare")
        return 77  # skipped, for scripts/test.sh
    with tempfile.TemporaryDirectory(prefix="sdlabclean.", dir="/tmp") as layers:
        command = ["unshare", "--mount", "--propagation", "private", "bash", "-c", SEED, "lab-clean", layers,
                   sys.executable, os.path.abspath(__file__)]
        return subprocess.run(command, env=dict(os.environ, LAB_CLEAN_SEEDED="1")).returncode


if __name__ == "__main__":
    sys.exit(main() if os.environ.get("LAB_CLEAN_SEEDED") == "1" else in_seeded_namespace())
