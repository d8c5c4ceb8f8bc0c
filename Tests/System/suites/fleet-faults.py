#!/usr/bin/env python3
"""The fleet under concurrent changes and faults (docs/FLEET.md): three sectiond on
three etcd members (Tests/System/lib/fleet_lab.py), clients changing the list on every host at
once (lib/fleet_workload.py: what each client was told, checked against every host's history as
Jepsen's Elle checks a version order).

- concurrent: nine clients on three hosts change the list for a few seconds (TOGGLE, OPEN,
  CLOSE): HISTORY the same on every host, revisions without gaps or repeats, every
  acknowledged change at its revision and nothing applied twice, real-time order, every
  host's subscriber got the same events.
- oversized-group: a BATCH whose group takes about 1 MB reaches every host within seconds; one
  whose group takes more than the fleet's 1 MiB is refused with ERR LIMIT naming the limit,
  and no host applies anything, no subscriber hears anything.
- sectiond-kill: host 2 gets SIGKILL while its clients change the list, and starts again:
  it catches up to the others' revision, and every change it acknowledged is in every host's
  history (the workload's checks, over the kill).
- behind-snapshot: host 2 stopped, the others make changes until the fleet's log in etcd no
  longer reaches its revision, host 1 stopped a little later, then etcd compacted; both
  start: each resyncs to the others' revision, a subscriber with SUBSCRIBE FROM the revision
  it had gets the replay or !state and ends at the fleet's list, HISTORY agrees.
- big-snapshot: host 2 stopped, the list grown past 3 MB (sections with long titles, in groups
  under the limit): the next snapshot is in pieces under `P snapshot/`; 2,000 TOGGLEs later
  (a small log) it is still the snapshot; RENAMEs of long titles until the log no longer
  reaches host 2: the new snapshot's pieces are the only ones left, the log is a few dozen
  keys; host 2 starts, loads it (its subscriber gets `!state`) and every host ends with the
  same list.
- big-seed: a second fleet of two hosts whose config's list is about 3 MB: the first seeds it
  in pieces, the second adopts it, both the same; RELOAD of that list is ERR LIMIT naming the
  fleet's limit, nothing applied.
- leader-kill (last: the lab keeps two members after it): SIGKILL of the etcd leader while
  clients change the list with INSERTs of unique ids among their changes: every host
  writes again within 3 s of etcd's own recovery (a plain put loop, measured in the same
  run), nothing acknowledged lost, nothing applied twice.

Needs etcd (Debian's etcd-server; without it one SKIP line, exit 77). Run parts by name:
fleet-faults.py concurrent leader-kill. Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import base64
import json
import os
import secrets
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fleet_lab import FleetError, FleetLab, event_revision, run_fleet_suite  # noqa: E402
from fleet_workload import Workload, list_state, verify  # noqa: E402

LAB = {}
# Every change of the suite stays in every host's history (the default keeps 1,000), so that
# HISTORY FROM the start of a part lists all of the part's.
HISTORY = "20000"
# The fleet's limit on one group (Fleet.entryLimit), which ERR LIMIT names.
ENTRY_LIMIT = 1 << 20
# A group of about 1 MB reaches every host: 0.7-1.7 s with a debug build on a loaded 2-core machine
# (8.9-18 s while the etcd client searched a watch's whole line again for every piece that came).
BIG_GROUP_LIMIT = 5.0
# Writes resume within 3 s of etcd's own recovery (docs/FLEET-DESIGN.md, "Tests").
RESUME_LIMIT = 3.0


def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


def short(text, limit=200):
    """`text` cut to `limit` characters, for a failure's message (an event may name a long id)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def concurrent(results):
    workload = Workload(LAB["fleet"], tag="c")
    workload.start()
    time.sleep(4)
    workload.stop()
    verify(results, "concurrent", LAB["fleet"], workload)


def big_section(fleet, id_length):
    """A section with an id of `id_length` characters, inserted at the end: its index."""
    section = "big" + "x" * (id_length - 3)
    reply = fleet.hosts[0].request(f"INSERT end {section} Big")
    if not reply[-1].startswith("OK "):
        raise RuntimeError(f"INSERT of a section with a long id answered {reply}")
    return len(list_state(fleet.hosts[0])[1]) - 1


def item_batch(index):
    """200 ITEM INSERT lines of 2.5 KB into section `index`: 0.5 MB of lines (a request holds
    at most 1 MiB), and a group of 200 times (the id + 2.5 KB), since each record names the
    section by its id."""
    return ["BATCH", *[f"ITEM INSERT {index} end {n:04d} " + "t" * 2500 for n in range(200)], "END"]


def oversized_group(results):
    fleet = LAB["fleet"]
    # A group just under the limit (200 records naming an id of 2,600 characters: about 1.03 MB)
    # is committed and every host applies it, in its watch's one 1.4 MB line of base64.
    under, over = big_section(fleet, 2600), big_section(fleet, 3000)
    started = time.monotonic()
    reply = fleet.hosts[1].request(*item_batch(under), timeout=20)
    try:
        last = fleet.converged(timeout=30)
        took = time.monotonic() - started
        detail = f"{reply[-1]}, every host at {last} {took:.2f} s after the BATCH was sent"
    except FleetError as error:
        took, detail = None, short(str(error), 600)
    items = [len(host.request(f"ITEMS {under}")) - 1 for host in fleet.hosts]
    results.check(reply[-1].startswith("OK ") and took is not None and took <= BIG_GROUP_LIMIT and items == [200] * 3,
                  f"oversized-group: a group of about 1 MB is applied on every host within {BIG_GROUP_LIMIT:.0f} s",
                  f"{detail}; items {items}")  # fmt: skip
    # One over it (the id of 3,000 characters: about 1.1 MB, which etcd's 1.5 MiB would take).
    before = fleet.converged()
    watches = [host.subscribe() for host in fleet.hosts]
    try:
        started = time.monotonic()
        reply = fleet.hosts[1].request(*item_batch(over), timeout=20)
        took = time.monotonic() - started
        results.check(reply[-1].startswith("ERR LIMIT ") and str(ENTRY_LIMIT) in reply[-1],
                      f"oversized-group: a group over the fleet's {ENTRY_LIMIT} bytes is ERR LIMIT naming the limit",
                      f"{short(reply[-1], 300)} after {took:.2f} s")  # fmt: skip
        time.sleep(1)  # what a host would apply from its watch comes within milliseconds
        revisions = [host.revision() for host in fleet.hosts]
        items = [len(host.request(f"ITEMS {over}")) - 1 for host in fleet.hosts]
        for watch in watches:
            while watch.next_event(0.1) is not None:
                pass
        heard = [[e for e in watch.events if event_revision(e) is None or event_revision(e) > before] for watch in watches]
        results.check(revisions == [before] * 3 and items == [0] * 3 and heard == [[]] * 3,
                      "oversized-group: nothing applied on any host, no subscriber hears anything",
                      f"revisions {revisions} (was {before}), items {items}, "
                      f"events {[short(' '.join(h)) for h in heard]}")  # fmt: skip
        reply = fleet.hosts[1].request("TOGGLE 0")
        results.check(reply[-1] == f"OK {before + 1}", "oversized-group: the next change goes through", str(reply))
    finally:
        for watch in watches:
            watch.close()
        fleet.hosts[0].request("BATCH", f"DELETE {over}", f"DELETE {under}", "END")


def sectiond_kill(results):
    fleet = LAB["fleet"]
    victim = fleet.hosts[2]
    workload = Workload(fleet, tag="k")
    workload.start()
    time.sleep(1.5)
    killed_at = time.monotonic()
    victim.kill(signal.SIGKILL)
    time.sleep(1)
    victim.start()
    restarted_at = time.monotonic()
    # Until host 2's clients have changes acknowledged again (it catches up first), and a while.
    while time.monotonic() < restarted_at + 15:
        if any(op.sent > restarted_at and op.revision for op in workload.host_ops(2)):
            break
        time.sleep(0.1)
    time.sleep(1)
    workload.stop()
    before = [op for op in workload.host_ops(2) if op.acked is not None and op.acked < killed_at and op.revision]
    after = [op for op in workload.host_ops(2) if op.sent > restarted_at and op.revision]
    results.check(before and after, "sectiond-kill: host 2 changed the list before the kill and after its restart",
                  f"{len(before)} acknowledged before, {len(after)} after")  # fmt: skip
    try:
        last = fleet.converged(timeout=20)
        results.check(True, "sectiond-kill: the restarted host catches up to the others' revision", f"revision {last}")
    except FleetError as error:
        results.check(False, "sectiond-kill: the restarted host catches up to the others' revision", str(error))
        return
    # Host 2's subscriber ended with the kill: a new one, from the workload's first revision, is
    # the replay of the restarted host's history, to be the same as the others' streams.
    workload.collectors[2].subscription = fleet.hosts[2].subscribe(since=workload.base)
    verify(results, "sectiond-kill", fleet, workload)
    workload.collectors[2].subscription.close()


def log_start(etcd, prefix):
    """The first revision the fleet's log in etcd still holds (None: no entry), and etcd's
    revision. A log key is its group's last revision; the group's first is its first change's."""
    key = prefix + "log/"
    status, answer = etcd.call(0, "/v3/kv/range", {"key": b64(key), "range_end": b64(prefix + "log0"), "limit": 1})
    if status != 200:
        raise OSError(f"range of {key}: {answer}")
    first = None
    for kv in answer.get("kvs", []):
        lines = base64.b64decode(kv["value"]).decode(errors="replace").split("\n")[1:]
        first = next((int(line.split(" ")[1]) for line in lines if line and not line.startswith("by ")), None)
    return first, int(answer["header"]["revision"])


def follow(subscription, state):
    """The open sections a subscriber ends with, applying its events to `state` (the list it
    started from, a set of ids): (the set, its last revision, whether a !state came, problems)."""
    opened, revision = set(state[1]), state[0]
    got_state, problems = False, []
    for event in subscription.events:
        words = event.split(" ")
        if words[0] == "!state":
            opened, revision, got_state = set(words[3].split(",")) - {"-"}, int(words[1]), True
            continue
        if int(words[1]) != revision + 1:
            problems.append(f"{event} after revision {revision}")
        revision = int(words[1])
        (opened.add if words[0] == "!opened" else opened.discard)(words[3])
    return opened, revision, got_state, problems


def follow_until(subscription, stopped, last):
    """`follow` of a SUBSCRIBE FROM the revision of `stopped` (list_state when its host stopped)
    up to revision `last`: from the state SUBSCRIBE answered, when it did, else from `stopped`."""
    start = (stopped[0], stopped[2])
    if subscription.state is not None:  # SUBSCRIBE FROM answered the state: it starts there
        words = subscription.state.split(" ")
        start = (int(words[1]), set(words[3].split(",")) - {"-"})
    try:
        subscription.events_until(last)
    except FleetError:
        pass
    return follow(subscription, start)


def behind_snapshot(results):
    fleet, etcd = LAB["fleet"], LAB["etcd"]
    fleet.converged()
    stopped = {}
    fleet.hosts[2].kill(signal.SIGTERM)
    stopped[2] = list_state(fleet.hosts[0])
    oldest = None
    made = 0
    # Batches of 100 TOGGLEs (one group each) until the log no longer has the revision after
    # host 2's: a snapshot every 1,000 revisions, the log trimmed before the previous one.
    while made < 5000:
        reply = fleet.hosts[0].request("BATCH", *[f"TOGGLE {n % 4}" for n in range(100)], "END")
        if not reply[-1].startswith("OK "):
            results.check(False, "behind-snapshot: the others change the list", str(reply))
            return
        made += 100
        oldest, _ = log_start(etcd, fleet.prefix)  # a group saved whole (a reload) has none
        if oldest is not None and oldest > stopped[2][0] + 1:
            break
    results.check(oldest is not None and oldest > stopped[2][0] + 1,
                  "behind-snapshot: the fleet's log no longer reaches the stopped host's revision",
                  f"{made} changes; host 2 at {stopped[2][0]}, the log from {oldest}")  # fmt: skip
    fleet.converged(hosts=fleet.hosts[:2])
    fleet.hosts[1].kill(signal.SIGTERM)
    stopped[1] = list_state(fleet.hosts[0])
    for n in range(30):
        fleet.hosts[0].request(f"TOGGLE {n % 4}")
    _, revision = log_start(etcd, fleet.prefix)
    status, answer = etcd.call(0, "/v3/kv/compaction", {"revision": str(revision), "physical": True}, timeout=10)
    results.check(status == 200, f"behind-snapshot: etcd compacted to its revision {revision}", str(answer))
    subscriptions = {}
    for index in (2, 1):
        fleet.hosts[index].start()
        subscriptions[index] = fleet.hosts[index].subscribe(since=stopped[index][0])
    try:
        try:
            last = fleet.converged(timeout=30)
        except FleetError as error:
            results.check(False, "behind-snapshot: the stopped hosts resync to the others' revision", str(error))
            return
        final = list_state(fleet.hosts[0])
        results.check(all(list_state(host) == final for host in fleet.hosts),
                      "behind-snapshot: the stopped hosts resync to the others' revision and list", f"revision {last}")  # fmt: skip
        for index, subscription in subscriptions.items():
            opened, seen, got_state, problems = follow_until(subscription, stopped[index], last)
            how = "the state at SUBSCRIBE" if subscription.state else "!state" if got_state else "the replay"
            results.check(opened == final[2] and seen == last and not problems,
                          f"behind-snapshot: host {index}'s SUBSCRIBE FROM {stopped[index][0]} ends at the fleet's list",
                          f"through {how}, {len(subscription.events)} events, at {seen} of {last}; "
                          f"{sorted(opened)} against {sorted(final[2])}; {problems[:2]}")  # fmt: skip
        histories = [host.request("HISTORY 50") for host in fleet.hosts]
        results.check(all(history == histories[0] for history in histories),
                      "behind-snapshot: HISTORY 50 is the same on every host",
                      " | ".join(f"{h[0][:60]}..{h[-1]}" for h in histories))  # fmt: skip
    finally:
        for subscription in subscriptions.values():
            subscription.close()


def prefix_count(etcd, key):
    """How many keys under `key` etcd holds now."""
    status, answer = etcd.call(0, "/v3/kv/range", {"key": b64(key), "range_end": b64(key[:-1] + chr(ord(key[-1]) + 1)), "count_only": True})  # fmt: skip
    if status != 200:
        raise OSError(f"count of {key}: {answer}")
    return int(answer.get("count", 0))


def snapshot_value(etcd, prefix):
    status, answer = etcd.call(0, "/v3/kv/range", {"key": b64(prefix + "snapshot")}, timeout=10)
    if status != 200:
        raise OSError(f"range of {prefix}snapshot: {answer}")
    return base64.b64decode(answer["kvs"][0]["value"]).decode(errors="replace") if answer.get("kvs") else ""


def log_lines(host, text):
    return [line.split("fleet: ", 1)[-1] for line in host.log().splitlines() if text in line]


# Sections with titles of 3,000 bytes: 1,000 of them make a state of about 3 MB, in groups of
# 200 (about 600 KB each, under the fleet's limit on a group).
BIG_SECTIONS, BIG_TITLE = 1000, 3000


def big_snapshot(results):
    fleet, etcd = LAB["fleet"], LAB["etcd"]
    fleet.converged()
    fleet.hosts[2].kill(signal.SIGTERM)
    stopped = list_state(fleet.hosts[0])
    ids = [f"big{n:04d}" for n in range(BIG_SECTIONS)]
    try:
        for start in range(0, BIG_SECTIONS, 200):
            reply = fleet.hosts[0].request("BATCH", *[f"INSERT end {i} {i} " + "t" * BIG_TITLE for i in ids[start:start + 200]], "END", timeout=30)  # fmt: skip
            if not reply[-1].startswith("OK "):
                results.check(False, "big-snapshot: the list grows past 3 MB", short(str(reply)))
                return
        def change(lines, what):
            reply = fleet.hosts[0].request("BATCH", *lines, "END", timeout=30)
            if not reply[-1].startswith("OK "):
                raise RuntimeError(f"big-snapshot: {what} answered {short(str(reply))}")

        def pointer():
            return snapshot_value(etcd, fleet.prefix).split(" ")

        # TOGGLEs until a snapshot is in pieces (at the next multiple of 1,000 revisions).
        toggles = [f"TOGGLE {n % 4}" for n in range(100)]
        for _ in range(12):
            if pointer()[:2] == ["sectiond-snapshot", "1"]:
                break
            change(toggles, "TOGGLE")
        deadline = time.monotonic() + 20  # its pieces are written after the commit: 1-4 s here
        while pointer()[:2] != ["sectiond-snapshot", "1"] and time.monotonic() < deadline:
            time.sleep(0.1)
        first = pointer()
        # 2,000 more: their log (about 60 KB) is far from half the state: no new snapshot yet.
        for _ in range(20):
            change(toggles, "TOGGLE")
        time.sleep(0.5)  # a snapshot due would be under way by now
        results.check(first[:2] == ["sectiond-snapshot", "1"] and len(first) == 7 and int(first[4]) >= 3 and pointer() == first,
                      "big-snapshot: a 3 MB state is snapshotted in pieces, not again until the log holds half its size",
                      f"first {' '.join(first)[:100]}, after 2,000 TOGGLEs {' '.join(pointer())[:100]}; "
                      f"{log_lines(fleet.hosts[0], 'snapshot at revision')[-2:]}")  # fmt: skip
        # RENAMEs of 3,000 bytes, 200 a group, until the log no longer reaches host 2: the next
        # snapshot made current deletes the log before the first.
        made, oldest = 0, None
        while made < 4000:
            change([f"RENAME {i} {made} " + "r" * BIG_TITLE for i in ids[made % BIG_SECTIONS:][:200]], "RENAME")
            made += 200
            oldest, _ = log_start(etcd, fleet.prefix)
            if oldest is not None and oldest > stopped[0] + 1:
                break
        last_pointer = pointer()
        pieces = prefix_count(etcd, fleet.prefix + "snapshot/")
        logs = prefix_count(etcd, fleet.prefix + "log/")
        results.check(oldest is not None and oldest > stopped[0] + 1 and last_pointer[:2] == ["sectiond-snapshot", "1"]
                      and len(last_pointer) == 7 and pieces == int(last_pointer[4]) and logs <= 60,
                      "big-snapshot: the next snapshot deletes the log before the first and the first's pieces",
                      f"{made} renames; host 2 at {stopped[0]}, the log from {oldest}, {logs} log keys; "
                      f"pointer {' '.join(last_pointer)[:100]}, {pieces} keys under snapshot/; "
                      f"{log_lines(fleet.hosts[0], 'snapshot at revision')[-2:]}")  # fmt: skip
        fleet.hosts[2].start()
        subscription = fleet.hosts[2].subscribe(since=stopped[0])
        try:
            try:
                last = fleet.converged(timeout=30)
            except FleetError as error:
                results.check(False, "big-snapshot: the host far behind loads the snapshot", short(str(error), 600))
                return
            final = list_state(fleet.hosts[0])
            opened, seen, got_state, problems = follow_until(subscription, stopped, last)
            results.check(all(list_state(host) == final for host in fleet.hosts) and opened == final[2]
                          and seen == last and (got_state or subscription.state is not None) and not problems,
                          "big-snapshot: the host far behind loads the snapshot, its subscriber gets !state, every host the same",
                          f"revision {last}, {len(final[1])} sections; !state {got_state}; {problems[:2]}; "
                          f"{log_lines(fleet.hosts[2], 'loaded the fleet')[-1:]}")  # fmt: skip
        finally:
            subscription.close()
    finally:
        # The parts after this one work on the small list.
        fleet.hosts[0].request("BATCH", *[f"DELETE {i}" for i in ids], "END", timeout=30)
        if not fleet.hosts[2].alive():
            fleet.hosts[2].start()


def big_seed(results):
    sections = [{"id": f"s{n:04d}", "title": f"s{n:04d} " + "t" * BIG_TITLE, "items": ["i"]} for n in range(BIG_SECTIONS + 1)]  # fmt: skip
    # Host 1's config has a section more: its RELOAD would replace the list with it.
    configs = [json.dumps({"mode": "multi", "sections": sections[:count]}) for count in (BIG_SECTIONS, BIG_SECTIONS + 1)]
    try:
        fleet = FleetLab(LAB["etcd"], hosts=2, configs=configs).start()
    except FleetError as error:
        results.check(False, "big-seed: a list of 3 MB seeds the fleet in pieces, the second host adopts it", short(str(error), 800))  # fmt: skip
        return
    with fleet:
        states = [list_state(host) for host in fleet.hosts]
        pointer = snapshot_value(LAB["etcd"], fleet.prefix).split(" ")
        results.check(states[0] == states[1] and len(states[0][1]) == BIG_SECTIONS and pointer[:2] == ["sectiond-snapshot", "1"]
                      and int(pointer[4]) >= 3 and prefix_count(LAB["etcd"], fleet.prefix + "snapshot/") == int(pointer[4]),
                      "big-seed: a list of 3 MB seeds the fleet in pieces, the second host adopts it",
                      f"{[len(state[1]) for state in states]} sections; pointer {' '.join(pointer)[:120]}; "
                      f"{log_lines(fleet.hosts[1], 'loaded the fleet')[-1:]}")  # fmt: skip
        before = fleet.converged()
        reply = fleet.hosts[1].request("RELOAD", timeout=30)
        results.check(reply[-1].startswith("ERR LIMIT ") and str(ENTRY_LIMIT) in reply[-1]
                      and [host.revision() for host in fleet.hosts] == [before] * 2,
                      "big-seed: RELOAD of a list over the fleet's limit is ERR LIMIT naming it, nothing applied",
                      short(reply[-1], 300))  # fmt: skip


def leader(etcd, alive):
    """The index of the member the others follow, asked of the members in `alive`."""
    statuses = {}
    for index in alive:
        status, answer = etcd.call(index, "/v3/maintenance/status", {})
        if status == 200:
            statuses[answer["header"]["member_id"]] = (index, answer["leader"])
    leaders = {lead for _, lead in statuses.values()}
    if len(leaders) != 1 or next(iter(leaders)) not in statuses:
        raise OSError(f"no one leader among the members: {statuses}")
    return statuses[leaders.pop()][0]


class PutLoop(threading.Thread):
    """etcd's own recovery: plain puts asking for a leader, through the members alive, one after
    another; `recovered` is when the first one sent after `since` succeeded (a put waits at most
    0.25 s: one that a member still forwards to the dead leader would hold the figure back)."""

    def __init__(self, etcd, members):
        super().__init__(daemon=True)
        self.etcd = etcd
        self.members = members
        self.key = b64(f"/probe{secrets.token_hex(4)}")
        self.since = None
        self.recovered = None
        self.stopping = threading.Event()

    def run(self):
        n = 0
        while not self.stopping.is_set():
            member = self.members[n % len(self.members)]
            n += 1
            sent = time.monotonic()
            try:
                status, _ = self.etcd.call(member, "/v3/kv/put", {"key": self.key, "value": b64(str(n))},
                                           has_leader=True, timeout=0.25)  # fmt: skip
            except OSError:
                status = None
            if status == 200 and self.since is not None and sent >= self.since and self.recovered is None:
                self.recovered = time.monotonic()
            if status != 200:
                time.sleep(0.01)


def leader_kill(results):
    fleet, etcd = LAB["fleet"], LAB["etcd"]
    killed = leader(etcd, range(3))
    alive = [i for i in range(3) if i != killed]
    probe = PutLoop(etcd, alive)
    probe.start()
    workload = Workload(fleet, tag="l", inserts=True)
    workload.start()
    time.sleep(1.5)
    probe.since = killed_at = time.monotonic()
    etcd.kill(killed)
    while probe.recovered is None and time.monotonic() < killed_at + 15:
        time.sleep(0.05)
    time.sleep(RESUME_LIMIT + 1)
    workload.stop()
    probe.stopping.set()
    probe.join()
    if not results.check(probe.recovered is not None, f"leader-kill: etcd writes again after m{killed}, the leader, is killed",
                         "" if probe.recovered is None else f"{probe.recovered - killed_at:.2f} s after the kill"):  # fmt: skip
        return
    etcd_took = probe.recovered - killed_at
    for index, host in enumerate(fleet.hosts):
        # Nothing commits between the kill and a new leader's election (over a second): an OK
        # that late is a write made after it.
        oks = [op.acked for op in workload.host_ops(index) if op.revision and op.acked > killed_at + 0.3]
        took = min(oks) - killed_at if oks else None
        results.check(took is not None and took - etcd_took <= RESUME_LIMIT,
                      f"leader-kill: {host.name} writes again within {RESUME_LIMIT:.0f} s of etcd's own recovery",
                      f"first OK {took:.2f} s after the kill, etcd's own {etcd_took:.2f} s" if oks else "no OK after the kill")  # fmt: skip
    refused = [op for op in workload.ops() if op.reply and op.reply[-1].startswith("ERR")]
    print(f"   leader-kill: {len(workload.ops())} requests, {len(refused)} refused: "
          f"{sorted({op.reply[-1][:90] for op in refused})[:3]}", flush=True)  # fmt: skip
    verify(results, "leader-kill", fleet, workload)


PARTS = {
    "concurrent": concurrent,
    "oversized-group": oversized_group,
    "sectiond-kill": sectiond_kill,
    "behind-snapshot": behind_snapshot,
    "big-snapshot": big_snapshot,
    "big-seed": big_seed,
    "leader-kill": leader_kill,
}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    return run_fleet_suite("fleet-faults", PARTS, argv, LAB, fleet_options={"extra_args": ("--history", HISTORY)})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
