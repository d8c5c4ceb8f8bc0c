#!/usr/bin/env python3
"""The fleet (issue 46, docs/FLEET.md): three sectiond sharing one list through three etcd
members, on the partition lab (Tests/System/lib/fleet_lab.py, etcd_lab.py) so that later parts
can cut and freeze members.

- toggle-everywhere: a TOGGLE on host 0 reaches the subscribers of every host with the revision
  host 0 acknowledged, the same event on each; the history names the host it came through.

Needs root, etcd, nftables (else one SKIP line). Run one part: fleet.py toggle-everywhere.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from etcd_lab import EtcdLab, LabUnavailable  # noqa: E402
from fleet_lab import FleetError, FleetLab, event_revision  # noqa: E402
from sdlib import require_binary, run_parts  # noqa: E402

LAB = {}


def toggle_everywhere(results):
    fleet = LAB["fleet"]
    watches = [host.subscribe() for host in fleet.hosts]
    try:
        reply = fleet.hosts[0].request("TOGGLE 1")
        acknowledged = results.check(reply[-1].startswith("OK "), "a TOGGLE on host 0 is acknowledged", str(reply))
        if not acknowledged:
            return
        revision = int(reply[-1].split()[1])
        expected = [f"!opened {revision} 1 beta"]
        for host, watch in zip(fleet.hosts, watches):
            try:
                events = [e for e in watch.events_until(revision) if event_revision(e) == revision]
                detail = f"{events}, expected {expected}"
            except FleetError as error:
                events, detail = None, str(error)
            results.check(events == expected, f"{host.name}'s subscriber gets the change at revision {revision}", detail)
        history = fleet.hosts[2].request(f"HISTORY FROM {revision - 1}")
        results.check(any("@h0 " in line for line in history[:-1]), "host 2's history names host 0 as the change's way in",
                      str(history))
    finally:
        for watch in watches:
            watch.close()


PARTS = {"toggle-everywhere": toggle_everywhere}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    require_binary()
    unknown = [name for name in argv if name not in PARTS]
    if unknown:
        sys.exit(f"unknown part {unknown}; the parts: {' '.join(PARTS)}")
    try:
        etcd = EtcdLab(partition=True).start()
    except LabUnavailable as reason:
        print(f"SKIP fleet: {reason}", flush=True)
        return 77  # skipped, for scripts/test.sh
    try:
        try:
            LAB["fleet"] = FleetLab(etcd).start()
        except (FleetError, RuntimeError, OSError) as error:
            print(f"FAIL the fleet of three sectiond starts: {error}", flush=True)
            print("0 passed, 1 failed", flush=True)
            return 1
        return run_parts(PARTS, argv)
    finally:
        if "fleet" in LAB:
            LAB.pop("fleet").stop()
        etcd.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
