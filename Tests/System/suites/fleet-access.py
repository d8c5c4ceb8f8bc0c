#!/usr/bin/env python3
"""Access levels in a fleet: each host enforces the levels of its own clients. Three sectiond
share one list through three etcd members (Tests/System/lib/fleet_lab.py), each with the same
access rules: a test user at operate. On every host that user's TOGGLE goes through and
reaches every host, and its DELETE is refused alike, changing nothing on any host (no
revision, no event).

Needs root (for the user) and etcd (else one SKIP line). Prints PASS/FAIL lines, then
`N passed, N failed`.
"""

import os
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fleet_lab import FleetError, event_revision, run_fleet_suite  # noqa: E402
from sdlib import connect_as  # noqa: E402

LAB = {}
OPERATOR, TEAM = 47011, 47110


def open_to_operator(fleet):
    """Lets the operator reach each host's control socket, as group sectiond would."""
    for host in fleet.hosts:
        path = os.path.dirname(host.socket)
        while path not in ("/", "/tmp"):
            os.chmod(path, os.stat(path).st_mode | 0o011)
            path = os.path.dirname(path)
        os.chown(host.socket, 0, TEAM)


def levels(results):
    fleet = LAB["fleet"]
    open_to_operator(fleet)
    watches = [host.subscribe() for host in fleet.hosts]
    try:
        for host in fleet.hosts:
            operator = connect_as(host.socket, OPERATOR, [TEAM])
            status = operator.request("STATUS")
            results.check(status[0] == "status access operate", f"{host.name} gives the operator operate", status[0])
            reply = operator.request("TOGGLE 1")
            if not results.check(reply[-1].startswith("OK "), f"the operator's TOGGLE on {host.name} goes through",
                                 str(reply)):
                continue
            revision = int(reply[-1].split()[1])
            heard = []
            for watch in watches:
                try:
                    heard.append([e for e in watch.events_until(revision) if event_revision(e) == revision])
                except FleetError as error:
                    heard.append(str(error))
            results.check(all(len(events) == 1 for events in heard),
                          f"and reaches every host at revision {revision}", str(heard))
            revisions = [h.revision() for h in fleet.hosts]
            refused = operator.request("DELETE 0")
            results.check(refused[-1].startswith("ERR DENIED edit operate DELETE"),
                          f"the operator's DELETE on {host.name} is refused", str(refused))
            batch = operator.request("BATCH", "TOGGLE 2", "RENAME 0 Zero", "END")
            results.check(batch[-1].startswith("ERR DENIED edit operate line 2 of the batch"),
                          f"and its BATCH mixing levels on {host.name}, whole", str(batch))
            # A PING through each subscriber: an event sent before it would be read first.
            for watch, h, before in zip(watches, fleet.hosts, revisions):
                watch.client.request("PING")
                heard, watch.client.events = watch.client.events, []
                results.check(not heard and h.revision() == before, f"nothing of them reached {h.name}",
                              f"{heard}, revision {before} then {h.revision()}")
            operator.close()
    finally:
        for watch in watches:
            watch.close()


PARTS = {"levels": levels}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if os.geteuid() != 0:
        print("SKIP fleet-access: switching users needs root")
        return 77
    rules = tempfile.NamedTemporaryFile("w", prefix="access.", suffix=".conf", dir="/tmp", delete=False)
    rules.write(f"user {OPERATOR} operate\n")
    rules.close()
    os.chmod(rules.name, 0o644)
    try:
        return run_fleet_suite("fleet-access", PARTS, argv, LAB,
                               fleet_options={"extra_args": ["--access", rules.name]})
    finally:
        os.unlink(rules.name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
