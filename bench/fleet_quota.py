#!/usr/bin/env python3
"""What one client's changes cost etcd's database (docs/FLEET.md, "Sizing etcd's quota").

    python3 bench/fleet_quota.py                 # release build, 60 s a flood (about 3 minutes)
    python3 bench/fleet_quota.py --sectiond-bin .build/debug/sectiond --seconds 20
    python3 bench/fleet_quota.py --seconds 10    # shorter

Three etcd members on loopback (Tests/System/lib/etcd_lab.py) with the default quota and three
release sectiond sharing one list (Tests/System/lib/fleet_lab.py). One client on host h0 sends,
back to back on one connection, for --seconds each:

- rename-4k: RENAMEs of one section with titles of 4,000 bytes, one a request: the most bytes
  a single-change request carries (a line holds at most 4,096).
- batch-1m: BATCHes of 240 RENAMEs of 240 sections with titles of 4,000 bytes: groups of about
  1 MiB, the most one group may take in the fleet (Fleet.entryLimit).

For each: changes and groups a second, the bytes of the fleet's log entries a second (each
group's entry, read back from etcd), and etcd's database size (every member's `dbSize`, the
figure etcd's quota is checked against) sampled every 2 s through the flood: its largest, at
the end, and the largest member's every 10 s (whether it levels off).
The bytes a second times an hour is what etcd's periodic compaction of one hour would keep of
the log alone. Writes bench/out/fleet_quota.json (or --json PATH); exit status 77 without etcd.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (build_sectiond, ROOT)

sys.path.insert(0, os.path.join(bench.ROOT, "Tests", "System", "lib"))
from etcd_lab import EtcdLab, LabUnavailable  # noqa: E402
from fleet_lab import FleetLab  # noqa: E402
from sdlib import config_json  # noqa: E402

TITLE = 4000
BATCH = 240


def flood(etcd, fleet, name, seconds, sections):
    host = fleet.hosts[0]
    changes = groups = entries = 0
    largest, alarms, refused, samples = 0, set(), [], []
    started = time.monotonic()
    next_sample = started
    with host.connect(timeout=30) as client:
        while time.monotonic() - started < seconds:
            stamp = f"{groups:08d} "
            if name == "rename-4k":
                reply = client.request(f"RENAME {sections[0]} " + stamp + "r" * (TITLE - len(stamp)))
                count = 1
            else:
                lines = [f"RENAME {s} " + stamp + "r" * (TITLE - len(stamp)) for s in sections[:BATCH]]
                reply = client.request("BATCH", *lines, "END")
                count = BATCH
            if not reply[-1].startswith("OK "):
                refused.append(reply[-1][:200])
                break
            changes += count
            groups += 1
            if groups % 50 == 1 or count > 1:
                entries += len(etcd.value(f"{fleet.prefix}log/{int(reply[-1].split()[1]):020d}") or b"")
            if time.monotonic() >= next_sample:
                sizes, found = etcd.database()
                largest, alarms = max(largest, *sizes), alarms | found
                samples.append((round(time.monotonic() - started), max(sizes)))
                next_sample += 2
    took = time.monotonic() - started
    sizes, found = etcd.database()
    largest, alarms = max(largest, *sizes), alarms | found
    sampled = groups if name != "rename-4k" else (groups + 49) // 50
    per_group = entries / max(1, sampled)
    return {
        "changes": changes, "groups": groups, "seconds": round(took, 1),
        "changes_per_second": round(changes / took, 1), "groups_per_second": round(groups / took, 2),
        "entry_bytes": round(per_group), "log_bytes_per_second": round(per_group * groups / took),
        "log_bytes_per_hour": round(per_group * groups / took * 3600),
        "largest_db_bytes": largest, "final_db_bytes": sizes,
        "db_bytes_every_10s": [size for _, size in samples[::5]], "alarms": sorted(alarms), "refused": refused,
    }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--json", default=os.path.join(bench.BENCH, "out", "fleet_quota.json"))
    parser.add_argument("--sectiond-bin", help="use this sectiond binary (sectiond-fleet beside it), do not build")
    parser.add_argument("--scratch-path", help="swift build --scratch-path for the release build")
    parser.add_argument("--no-build", action="store_true", help="do not run swift build")
    parser.add_argument("--quota", type=int, default=0, help="etcd's --quota-backend-bytes (0: its default)")
    args = parser.parse_args(argv)
    sectiond = bench.build_sectiond(args, fleet=True)
    if not sectiond:
        return 1
    os.environ["BUILD_DIR"] = os.path.dirname(sectiond)  # the fleet lab's daemons are this build
    flags = [f"--quota-backend-bytes={args.quota}"] if args.quota else []
    sections = [f"s{n:03d}" for n in range(BATCH)]
    try:
        etcd = EtcdLab(flags=flags).start()
    except LabUnavailable as reason:
        print(f"SKIP: {reason}", flush=True)
        return 77
    results = {"sectiond": sectiond, "quota": args.quota or "default"}
    try:
        with FleetLab(etcd, configs=[config_json(sections)] * 3) as fleet:
            for name in ("rename-4k", "batch-1m"):
                results[name] = flood(etcd, fleet, name, args.seconds, sections)
                print(name, json.dumps(results[name]), flush=True)
    finally:
        etcd.stop()
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as out:
        json.dump(results, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
