#!/usr/bin/env python3
"""What the fleet asks of etcd stays bounded (docs/FLEET.md, "Sizing etcd's quota" and "Limits"):
three sectiond on three etcd members whose quota is small (QUOTA), Tests/System/lib/fleet_lab.py.

- flood: one client sends FLOOD_CHANGES RENAMEs with titles of 4 KB as fast as its host takes
  them: more bytes than the quota, which etcd keeps until its history is compacted. The fleet
  compacts it at each snapshot: no change is refused, etcd never raises NOSPACE, and its
  database stays under QUOTA throughout.
- large-entries: host 2 stopped just after a snapshot, then groups of about 1 MB each (the
  largest a group may be) committed on host 0; host 2, and a new host, both with the client's
  answer limit lowered to 4 MiB (SECTIOND_ETCD_ANSWER_LIMIT, so that five entries pass it
  instead of the fifty that pass the default 64 MiB), catch up: every host the same list.
- no-space: etcd's NOSPACE alarm raised: a change on every host is refused at once with
  ERR UNAVAILABLE naming NOSPACE and the fix; STATUS says fleet-state no-space, fleet-error
  the same, and fleet-stale-since stays `-` (etcd answers); once the alarm is disarmed, STATUS
  is serving again without a change, and every host takes changes.

Needs etcd (Debian's etcd-server; without it one SKIP line, exit 77). Run parts by name:
fleet-bounds.py flood. Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fleet_lab import FleetError, Host, run_fleet_suite  # noqa: E402
from fleet_workload import list_state  # noqa: E402
from sdlib import config_json  # noqa: E402

LAB = {}
# etcd's quota for the suite: far below the default 2 GiB, so that the flood writes more than it
# holds within seconds.
QUOTA = 32 << 20
# RENAMEs with titles of 4 KB: without the fleet's compaction etcd's database grew about 8.4 KB a
# change, and etcd refused the 3,974th for want of space (debug build, this quota).
FLOOD_CHANGES = 4500
# The answer limit of the hosts that catch up in large-entries (the fleet's lowest).
ANSWER_LIMIT = 4 << 20
# A change is refused during NOSPACE at once: etcd answers; 2 s leaves room for a loaded machine.
REFUSAL_LIMIT = 2.0


def short(text, limit=300):
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def batch(host, lines, what, timeout=30):
    reply = host.request("BATCH", *lines, "END", timeout=timeout)
    if not reply[-1].startswith("OK "):
        raise RuntimeError(f"{what} answered {short(str(reply))}")
    return int(reply[-1].split()[1])


def large_entries(results):
    fleet = LAB["fleet"]
    revision = fleet.converged()
    # Just past a multiple of 1,000: the group that crosses it writes the snapshot (the list is
    # small), so host 2, stopped at or after it, catches up from the log, as does a new host
    # that loads that snapshot; the groups below stay before the next multiple.
    toggles = 1000 - revision % 1000 + 1
    base = batch(fleet.hosts[0], [f"TOGGLE {n % 4}" for n in range(toggles)], "TOGGLEs to a snapshot")
    fleet.converged()
    fleet.hosts[2].kill(signal.SIGTERM)
    # A section whose id takes 3,000 bytes: each ITEM INSERT's record names it, so a change
    # takes about 7 KB of its group and 140 make a group of about 1 MB.
    section = "big" + "x" * 2997
    reply = fleet.hosts[0].request(f"INSERT end {section} Big")
    if not reply[-1].startswith("OK "):
        raise RuntimeError(f"INSERT of a section with a long id answered {reply}")
    index = len(list_state(fleet.hosts[0])[1]) - 1
    try:
        groups, sizes = 5, []
        for group in range(groups):
            lines = [f"ITEM INSERT {index} end g{group}i{n:03d} " + "t" * 3900 for n in range(140)]
            revision = batch(fleet.hosts[0], lines, "a group of about 1 MB")
            sizes.append(len(LAB["etcd"].value(f"{fleet.prefix}log/{revision:020d}") or b""))
        results.check(revision // 1000 == base // 1000 and min(sizes) > 900_000,
                      "large-entries: groups of about 1 MB, all between two snapshots",
                      f"revisions {base}-{revision}, entries of {sizes} bytes")  # fmt: skip
        fleet.environment[3] = {"SECTIOND_ETCD_ANSWER_LIMIT": str(ANSWER_LIMIT)}
        newcomer = Host(fleet, 3, config_json(["other"]))
        fleet.hosts.append(newcomer)
        started = time.monotonic()
        fleet.hosts[2].start()
        newcomer.start()
        try:
            last = fleet.converged(timeout=60)
        except FleetError as error:
            results.check(False, "large-entries: a restarted and a new host catch up past groups of 1 MB",
                          short(str(error), 1200))  # fmt: skip
            return
        took = time.monotonic() - started
        final = list_state(fleet.hosts[0])
        results.check(last == revision and all(list_state(host) == final for host in fleet.hosts),
                      "large-entries: a restarted and a new host catch up past groups of 1 MB, every host the same",
                      f"revision {last} (the last group's {revision}), {took:.1f} s")  # fmt: skip
        print(f"   large-entries: {groups} groups of about 1 MB caught up in {took:.1f} s", flush=True)
    finally:
        if len(fleet.hosts) > 3:
            fleet.hosts.pop().kill(signal.SIGTERM)
        fleet.hosts[0].request(f"DELETE {section}")
        if not fleet.hosts[2].alive():
            fleet.hosts[2].start()


def no_space(results):
    fleet, etcd = LAB["fleet"], LAB["etcd"]
    before = fleet.converged()
    etcd.alarm("ACTIVATE")
    try:
        replies = []
        for host in fleet.hosts:
            started = time.monotonic()
            reply = host.request("TOGGLE 1")
            replies.append((host.name, reply[-1], time.monotonic() - started))
        results.check(all(r.startswith("ERR UNAVAILABLE ") and "NOSPACE" in r and "disarm" in r and took < REFUSAL_LIMIT
                          for _, r, took in replies) and [h.revision() for h in fleet.hosts] == [before] * 3,
                      "no-space: a change on every host is refused at once naming NOSPACE and the fix, nothing applied",
                      short(str([(n, r[:160], round(t, 2)) for n, r, t in replies]), 900))  # fmt: skip
        # Across several polls (every 2 s), changes still refused: etcd answers, so the hosts
        # are not stale.
        samples = []
        for _ in range(3):
            time.sleep(1.5)
            for host in fleet.hosts:
                host.request("TOGGLE 1")
            samples.append([(s.get("fleet-state"), s.get("fleet-stale-since"), s.get("fleet-error", ""))
                            for s in (host.status() for host in fleet.hosts)])  # fmt: skip
        results.check(all(state == "no-space" and stale == "-" and "NOSPACE" in error
                          for sample in samples for state, stale, error in sample),
                      "no-space: STATUS says no-space and NOSPACE, fleet-stale-since stays - while etcd answers",
                      short(str(samples), 900))  # fmt: skip
    finally:
        etcd.alarm("DEACTIVATE")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = [host.status().get("fleet-state") for host in fleet.hosts]
        if states == ["serving"] * 3:
            break
        time.sleep(0.2)
    replies = [host.request("TOGGLE 1")[-1] for host in fleet.hosts]
    results.check(states == ["serving"] * 3 and all(r.startswith("OK ") for r in replies),
                  "no-space: disarmed, every host says serving without a change, then takes changes",
                  f"states {states}; {short(str(replies))}")  # fmt: skip


def flood(results):
    fleet, etcd = LAB["fleet"], LAB["etcd"]
    fleet.converged()
    changes, refused, largest, alarms = 0, [], 0, set()
    started = time.monotonic()
    with fleet.hosts[0].connect(timeout=15) as client:
        while changes < FLOOD_CHANGES and len(refused) < 5:
            reply = client.request(f"RENAME {changes % 4} {changes:08d} " + "r" * 4000)
            if reply[-1].startswith("OK "):
                changes += 1
            else:
                refused.append(reply[-1])
            if changes % 250 == 0:
                sizes, found = etcd.database()
                largest, alarms = max(largest, *sizes), alarms | found
    took = time.monotonic() - started
    sizes, found = etcd.database()
    largest, alarms = max(largest, *sizes), alarms | found
    print(f"   flood: {changes} RENAMEs in {took:.1f} s; etcd's database at most {largest / 1e6:.1f} MB, "
          f"at the end {[round(s / 1e6, 1) for s in sizes]} MB", flush=True)  # fmt: skip
    results.check(changes == FLOOD_CHANGES and not refused and not alarms and largest < QUOTA,
                  f"flood: {FLOOD_CHANGES} RENAMEs of 4 KB titles: no NOSPACE, etcd's database stays under the quota",
                  f"{changes} changes; refused {short(str(refused[:2]))}; alarms {alarms}; "
                  f"largest database {largest} of {QUOTA}")  # fmt: skip
    warnings = [line for host in fleet.hosts for line in host.log().splitlines() if "compacting etcd" in line]
    results.check(not warnings, "flood: every compaction of etcd's history went through", short(str(warnings[:3])))
    try:
        last = fleet.converged(timeout=30)
        results.check(len({str(list_state(h)) for h in fleet.hosts}) == 1,
                      "flood: every host the same after it", f"revision {last}")  # fmt: skip
    except FleetError as error:
        results.check(False, "flood: every host the same after it", short(str(error), 900))


# The flood first: on the small list the suite starts with, so that what etcd's database holds
# after it is the flood's alone (large-entries leaves history records of 1 MB groups, which
# every later snapshot carries).
PARTS = {
    "flood": flood,
    "large-entries": large_entries,
    "no-space": no_space,
}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    return run_fleet_suite(
        "fleet-bounds", PARTS, argv, LAB, etcd_options={"flags": [f"--quota-backend-bytes={QUOTA}"]},
        fleet_options={"environment": {2: {"SECTIOND_ETCD_ANSWER_LIMIT": str(ANSWER_LIMIT)}}})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
