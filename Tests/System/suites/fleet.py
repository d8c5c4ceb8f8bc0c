#!/usr/bin/env python3
"""The fleet (docs/FLEET.md, "Failures"): three sectiond sharing one list through three etcd
members, on the partition lab (Tests/System/lib/fleet_lab.py, etcd_lab.py) so that later parts
can cut and freeze members.

- toggle-everywhere: a TOGGLE on host 0 reaches the subscribers of every host with the revision
  host 0 acknowledged, the same event on each; the history names the host it came through.
- cut-then-freeze: host 0's member isolated from its peers, then the member host 1 uses frozen
  (SIGSTOP): each time the host answers a change within 10 s (done through a healthy member, or
  ERR UNAVAILABLE) and answers reads at once; after the heal and the thaw every host has applied
  the same revision, and every subscriber got the same events, without gaps.

Needs root, etcd, nftables (else one SKIP line). Run one part: fleet.py toggle-everywhere.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fleet_lab import FleetError, event_revision, run_fleet_suite  # noqa: E402

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


# What docs/FLEET.md ("Failures") allows a host with a cut or frozen member before it answers a change.
CHANGE_LIMIT = 10.0
# A read is answered from the host's own state: milliseconds; the margin is for a loaded CI.
READ_LIMIT = 2.0


def member_of(fleet, host):
    """The index of the etcd member `host` uses now (STATUS's fleet-member)."""
    return fleet.etcd.urls.index(host.status()["fleet-member"])


def change_while_broken(results, fleet, host, what):
    """A TOGGLE on `host` is answered within CHANGE_LIMIT (done, or ERR UNAVAILABLE), and a read on
    another connection while the change waits is answered at once (from the last applied state)."""
    with host.connect(timeout=CHANGE_LIMIT + 5) as changer:
        started = time.monotonic()
        changer.send("TOGGLE 3\n")
        time.sleep(1)
        read_started = time.monotonic()
        try:
            reply = host.request("LIST", timeout=CHANGE_LIMIT)
        except OSError as error:
            reply = [repr(error)]
        read_took = time.monotonic() - read_started
        results.check(reply[-1].startswith("OK ") and read_took < READ_LIMIT,
                      f"{what}: {host.name} answers a read at once while a change waits",
                      f"{reply[-1]} after {read_took:.3f} s")  # fmt: skip
        try:
            reply = changer.read_reply()
        except OSError as error:
            reply = [repr(error)]
        took = time.monotonic() - started
    answered = reply[-1].startswith("OK ") or reply[-1].startswith("ERR UNAVAILABLE ")
    results.check(answered and took <= CHANGE_LIMIT,
                  f"{what}: {host.name} answers a change within {CHANGE_LIMIT:.0f} s, done or ERR UNAVAILABLE",
                  f"{reply[-1]} after {took:.2f} s, member now m{member_of(fleet, host)}")  # fmt: skip


def cut_then_freeze(results):
    fleet, etcd = LAB["fleet"], LAB["fleet"].etcd
    watches = [host.subscribe() for host in fleet.hosts]
    first = watches[0].revision
    try:
        cut = member_of(fleet, fleet.hosts[0])
        etcd.isolate(cut)
        try:
            change_while_broken(results, fleet, fleet.hosts[0], f"m{cut} isolated")
            status, answer = etcd.call(cut, "/v3/kv/put", {"key": "eA==", "value": "eA=="}, has_leader=True)
            results.check(status != 200 and "no leader" in answer.get("error", ""),
                          f"the cut holds: m{cut} itself refuses a write that asks for a leader", str(answer))  # fmt: skip
            reply = fleet.hosts[1].request("TOGGLE 2", timeout=CHANGE_LIMIT + 5)
            results.check(reply[-1].startswith("OK "), "meanwhile host 1 changes the list", str(reply))
        finally:
            etcd.heal(cut)
        frozen = member_of(fleet, fleet.hosts[1])
        etcd.freeze(frozen)
        try:
            change_while_broken(results, fleet, fleet.hosts[1], f"m{frozen} frozen")
        finally:
            etcd.thaw(frozen)
        try:
            last = fleet.converged(timeout=20)
        except FleetError as error:
            results.check(False, "healed and thawed, every host applies the same revision", str(error))
            return
        results.check(last > first, "healed and thawed, every host applies the same revision", f"revision {last}")
        streams = []
        for watch in watches:
            try:
                streams.append(watch.events_until(last))
            except FleetError as error:
                streams.append([str(error)])
        revisions = [event_revision(e) for e in streams[0]]
        results.check(revisions == list(range(first + 1, last + 1)),
                      "host 0's subscriber got every revision once, in order", str(streams[0]))  # fmt: skip
        for host, stream in zip(fleet.hosts[1:], streams[1:]):
            results.check(stream == streams[0], f"{host.name}'s subscriber got the same events as host 0's",
                          f"{stream} against {streams[0]}")  # fmt: skip
    finally:
        for watch in watches:
            watch.close()


PARTS = {"toggle-everywhere": toggle_everywhere, "cut-then-freeze": cut_then_freeze}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    return run_fleet_suite("fleet", PARTS, argv, LAB, etcd_options={"partition": True})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
