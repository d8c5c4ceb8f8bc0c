#!/usr/bin/env python3
"""Soak test of a real sectiond under load.

200 client slots loop for the whole run, each connecting (mostly to the control socket,
some to the read-only one), sending a random mix of every command of protocol 1 (one at a
time or pipelined), and leaving by QUIT, by closing, or by vanishing with replies unread.
50 subscribers stay connected throughout, 10 of them reading slowly so that the daemon
has to replace their backlog by `!state` snapshots; another 5 come and go.

Afterwards: the daemon is alive; its RSS is back within a small margin of where it stood
after a warm-up of the same load (10 s; with runtime edits in the mix, the list, its journal
and the caches reach their working sizes there, so that the check is about leaks);
every subscriber session saw revs that follow one another by exactly 1 or are bridged by a
`!state` snapshot; the state file, LIST, a fresh SUBSCRIBE snapshot and every subscriber's
own picture of the state agree. The figures are printed at the end.

usage: soak.py [--seconds N] [--warm-up N] [--clients N] [--subscribers N] [--slow N] [--seed S]
       (SOAK_SECONDS in the environment sets the default duration, 60 s)
"""

import argparse
import asyncio
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from sdlib import Client, Daemon, Results, config_json, is_status, require_binary  # noqa: E402

SECTIONS = [f"s{i}" for i in range(8)]
CHANGING = ("OPEN", "CLOSE", "TOGGLE", "MODE ", "RELOAD", "INSERT", "DELETE", "MOVE", "RENAME", "ITEM",
            "BATCH")
ALLOWED_ERRORS = ("ERR MODE", "ERR READONLY", "ERR NOSECTION", "ERR UNKNOWN", "ERR SYNTAX", "ERR EXISTS",
                  "ERR NOITEM", "ERR RANGE")


class Stats:
    def __init__(self):
        self.requests = 0  # replies received whole
        self.connections = 0
        self.vanished = 0  # closed with requests unanswered
        self.changes_ok = 0
        self.errors = []  # unexpected replies
        self.busy = 0
        self.max_live = 0
        self.live = 0

    def error(self, text):
        if len(self.errors) < 20:
            self.errors.append(text)


def random_request(rng):
    ref = rng.choice([str(rng.randrange(len(SECTIONS))), rng.choice(SECTIONS)])
    roll = rng.random()
    if roll < 0.10:
        return "PING"
    if roll < 0.13:
        return "VERSION"
    if roll < 0.25:
        return "LIST"
    if roll < 0.30:
        return f"ITEMS {ref}"
    if roll < 0.37:
        return "VIEW"
    if roll < 0.52:
        return f"TOGGLE {ref}"
    if roll < 0.62:
        return f"OPEN {ref}"
    if roll < 0.72:
        return f"CLOSE {ref}"
    if roll < 0.74:
        return "OPEN ALL"
    if roll < 0.76:
        return "CLOSE ALL"
    if roll < 0.79:
        return "MODE"
    if roll < 0.82:
        return "MODE " + rng.choice(["exclusive", "multi"])
    if roll < 0.85:
        return "SUBSCRIBE"
    if roll < 0.88:
        return "UNSUBSCRIBE"
    if roll < 0.90:
        return "HELP"
    if roll < 0.905:
        return "RELOAD"
    if roll < 0.93:
        return rng.choice(["FROB", "OPEN 99", "ITEMS nosuch", "PING extra", "TOGGLE"])
    # Runtime edits: sections t0..t19 come and go, items grow and shrink.
    temporary = f"t{rng.randrange(20)}"
    if roll < 0.95:
        return rng.choice([f"ITEM INSERT {ref} end soak item", f"ITEM DELETE {ref} 0", f"ITEM SET {ref} 0 set",
                           f"ITEM MOVE {ref} 0 1", f"RENAME {ref} Renamed {rng.randrange(9)}"])
    if roll < 0.96:
        return f"MOVE {ref} {rng.randrange(len(SECTIONS))}"
    if roll < 0.975:
        return f"INSERT {rng.choice(['end', '0', '3'])} {temporary} Temporary {temporary}"
    if roll < 0.99:
        return f"DELETE {temporary}"
    return (f"BATCH\nINSERT end {temporary} In a batch\nITEM INSERT {temporary} end x\nMOVE {temporary} 0\n"
            f"DELETE t{rng.randrange(20)}\nEND")


async def read_reply(reader):
    """Lines up to the status line; events in between are skipped. None at end of input. (The
    asyncio twin of sdlib.Client.read_reply, for the soak's hundreds of connections in one thread.)"""
    lines = []
    while True:
        raw = await reader.readline()
        if not raw:
            return None
        line = raw.decode(errors="replace").rstrip("\n")
        if line.startswith("!"):
            continue
        lines.append(line)
        if is_status(line):
            return lines


def judge(request, reply, readonly, stats):
    status = reply[-1]
    if status.startswith("OK"):
        if request.upper().startswith(CHANGING) and request.upper() != "MODE":
            stats.changes_ok += 1
        return
    if status.startswith("ERR BUSY"):
        stats.busy += 1
        return
    if status.startswith(ALLOWED_ERRORS):
        if status.startswith("ERR READONLY") and not readonly:
            stats.error(f"{request!r} on the control socket: {status}")
        return
    stats.error(f"{request!r}: {status}")


async def client_slot(daemon, rng, deadline, stats):
    while time.monotonic() < deadline:
        readonly = rng.random() < 0.15
        path = daemon.readonly_socket if readonly else daemon.socket
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=1 << 20)
        except OSError as error:
            stats.error(f"connect: {error}")
            await asyncio.sleep(0.05)
            continue
        stats.connections += 1
        stats.live += 1
        stats.max_live = max(stats.max_live, stats.live)
        try:
            for _ in range(rng.randrange(1, 40)):
                if time.monotonic() >= deadline:
                    break
                batch = [random_request(rng) for _ in range(rng.choice([1, 1, 1, 2, 5, 20]))]
                writer.write("".join(r + "\n" for r in batch).encode())
                if rng.random() < 0.03:  # vanish with the replies unread
                    stats.vanished += 1
                    break
                for request in batch:
                    reply = await asyncio.wait_for(read_reply(reader), 10)
                    if reply is None:
                        stats.error(f"connection closed before the reply to {request!r}")
                        break
                    stats.requests += 1
                    judge(request, reply, readonly, stats)
                if rng.random() < 0.2:
                    await asyncio.sleep(rng.uniform(0, 0.01))
            else:
                if rng.random() < 0.5:
                    writer.write(b"QUIT\n")
                    reply = await asyncio.wait_for(read_reply(reader), 10)
                    if reply is not None:
                        stats.requests += 1
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            stats.error(f"client: {error!r}")
        finally:
            writer.close()
            stats.live -= 1


class Subscriber:
    """One SUBSCRIBE session; checks the rev sequence and keeps its own picture of the state:
    mode, open ids and the ids in order. The order comes from a LIST sent right after
    SUBSCRIBE, then from the edit events; after an event that replaces what it knew
    (`!state`, `!reload`) it LISTs again, as docs/PROTOCOL.md asks of clients."""

    def __init__(self, name, slow):
        self.name, self.slow = name, slow
        self.rev = None
        self.mode = None
        self.open = set()
        self.ids = None  # the ids in order; None until a LIST reply gives them
        self.listing = None  # the ids of a LIST reply being read
        self.want_list = False
        self.events = 0
        self.resyncs = 0
        self.problems = []
        self.stayed = True
        self.hurry = False  # set at the end so slow readers catch up

    def problem(self, text):
        if len(self.problems) < 5:
            self.problems.append(text)

    def apply(self, line):
        fields = line.split(" ")
        kind = fields[0]
        if kind == "section":
            if self.listing is None:
                self.listing = []
            self.listing.append(fields[2])
            return
        if kind == "OK":
            # The LIST reply: replies never overtake events, so it shows the revision reached.
            if int(fields[1]) != self.rev:
                self.problem(f"LIST at rev {fields[1]} while the events reached {self.rev}")
            self.ids, self.listing = self.listing or [], None
            return
        if kind == "!state":
            rev = int(fields[1])
            if rev < self.rev:
                self.problem(f"!state {rev} goes back from {self.rev}")
            self.rev, self.mode = rev, fields[2]
            self.open = set() if fields[3] == "-" else set(fields[3].split(","))
            self.resyncs += 1
            self.ids, self.want_list = None, True
            return
        if kind in ("!opened", "!closed", "!mode", "!reload", "!inserted", "!deleted", "!moved", "!renamed",
                    "!items"):
            rev = int(fields[1])
            if rev != self.rev + 1:
                self.problem(f"{line!r} after rev {self.rev}")
            self.rev = rev
            self.events += 1
            if kind == "!opened":
                self.open.add(fields[3])
            elif kind == "!closed":
                self.open.discard(fields[3])
            elif kind == "!mode":
                self.mode = fields[2]
            elif kind == "!reload":
                self.ids, self.want_list = None, True
            elif kind == "!deleted":
                self.open.discard(fields[3])
                if self.ids is not None:
                    if self.ids[int(fields[2])] != fields[3]:
                        self.problem(f"{line!r} but index {fields[2]} is {self.ids[int(fields[2])]}")
                    del self.ids[int(fields[2])]
            elif kind == "!inserted" and self.ids is not None:
                self.ids.insert(int(fields[2]), fields[3])
            elif kind == "!moved" and self.ids is not None:
                self.ids.insert(int(fields[3]), self.ids.pop(int(fields[2])))
                if self.ids[int(fields[3])] != fields[4]:
                    self.problem(f"{line!r} moved {self.ids[int(fields[3])]}")
            return
        self.problem(f"unexpected line {line!r}")

    async def run(self, path, until):
        # A slow reader must be slow at the socket: asyncio reads ahead up to twice `limit`.
        reader, writer = await asyncio.open_unix_connection(path, limit=512 if self.slow else 1 << 20)
        try:
            writer.write(b"SUBSCRIBE\nLIST\n")
            reply = await asyncio.wait_for(read_reply(reader), 10)
            state, ok = reply
            fields = state.split(" ")
            self.rev, self.mode = int(fields[1]), fields[2]
            self.open = set() if fields[3] == "-" else set(fields[3].split(","))
            if ok != f"OK {self.rev}":
                self.problem(f"SUBSCRIBE reply {reply}")
            pending = b""
            while not until.is_set():
                if self.slow and not self.hurry:
                    chunk = await reader.read(128)  # about 2.5 KB/s
                    await asyncio.sleep(0.05)
                else:
                    chunk = await reader.read(65536)
                if not chunk:
                    self.problem("the daemon closed the connection")
                    self.stayed = False
                    return
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self.apply(line.decode(errors="replace"))
                if self.want_list:
                    self.want_list = False
                    writer.write(b"LIST\n")
        finally:
            writer.close()


async def subscriber_task(sub, path, until):
    try:
        await sub.run(path, until)
    except (OSError, asyncio.TimeoutError, ValueError) as error:
        sub.problem(f"{error!r}")
        sub.stayed = False


async def churning_subscribers(path, rng, deadline, sessions):
    """Subscribers that leave at random moments and come back."""
    while time.monotonic() < deadline:
        sub = Subscriber(f"churn{len(sessions)}", slow=False)
        sub.stayed = False
        sessions.append(sub)
        stop = asyncio.Event()
        task = asyncio.create_task(subscriber_task(sub, path, stop))
        await asyncio.sleep(rng.uniform(0.2, 3))
        stop.set()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass


def rss(daemon):
    return daemon.rss_kib()


async def soak(args, results):
    rng = random.Random(args.seed)
    daemon = Daemon(config=config_json(SECTIONS))
    daemon.start()
    try:
        with daemon.connect() as c:
            c.request("LIST")
        # Warm-up: the same mix of clients, whose figures are not counted.
        warm_up = time.monotonic() + args.warm_up
        await asyncio.gather(*[client_slot(daemon, random.Random(rng.random()), warm_up, Stats())
                               for _ in range(args.clients)])
        await asyncio.sleep(1.0)  # as before the final figure: closed connections freed
        rss_start = rss(daemon)
        deadline = time.monotonic() + args.seconds
        stop_subscribers = asyncio.Event()
        subscribers = [Subscriber(f"sub{i}", slow=i < args.slow) for i in range(args.subscribers)]
        sub_tasks = [asyncio.create_task(subscriber_task(s, daemon.socket if i % 5 else daemon.readonly_socket,
                                                         stop_subscribers))
                     for i, s in enumerate(subscribers)]
        churned = []
        stats = Stats()
        rss_peak = rss_start

        async def sample():
            nonlocal rss_peak
            while time.monotonic() < deadline:
                rss_peak = max(rss_peak, rss(daemon))
                await asyncio.sleep(0.25)

        started = time.monotonic()
        load = [asyncio.create_task(client_slot(daemon, random.Random(rng.random()), deadline, stats))
                for _ in range(args.clients)]
        load += [asyncio.create_task(churning_subscribers(daemon.socket, random.Random(rng.random()), deadline,
                                                          churned)) for _ in range(5)]
        load.append(asyncio.create_task(sample()))
        await asyncio.gather(*load)
        elapsed = time.monotonic() - started

        # Quiet now: let every subscriber, slow ones included, read to the end.
        with daemon.connect() as c:
            final_rev = int(c.request("LIST")[-1].split()[1])
        for sub in subscribers:
            sub.hurry = True
        catch_up = time.monotonic() + 30
        # Caught up: at the final revision, and after a `!state` with the LIST it asked for read.
        while time.monotonic() < catch_up and any(s.stayed and (s.rev != final_rev or s.ids is None)
                                                  for s in subscribers):
            await asyncio.sleep(0.05)
        stop_subscribers.set()
        for task in sub_tasks:
            task.cancel()
        await asyncio.gather(*sub_tasks, return_exceptions=True)

        alive = daemon.alive()
        with daemon.connect() as c:
            listing = c.request("LIST")
            snapshot = c.request("SUBSCRIBE")
        listed_open = {line.split(" ")[2] for line in listing[:-1] if line.split(" ")[3] == "open"}
        listed_ids = [line.split(" ")[2] for line in listing[:-1]]
        listed_rev = int(listing[-1].split()[1])
        with daemon.connect() as c:
            mode = c.request("MODE")[0].split(" ")[1]
        saved = daemon.saved_state()
        saved_open = {s for s, v in saved["sections"].items() if v is not None}
        snap = snapshot[0].split(" ")
        snap_open = set() if snap[3] == "-" else set(snap[3].split(","))

        await asyncio.sleep(1.0)  # let the daemon free what the closed connections held
        rss_end = rss(daemon)

        stayed = [s for s in subscribers if s.stayed]
        slow_resynced = sum(1 for s in subscribers if s.slow and s.resyncs > 0)
        resyncs = sum(s.resyncs for s in subscribers + churned)
        sequence_problems = [f"{s.name}: {p}" for s in subscribers + churned for p in s.problems
                             if not p.startswith("CancelledError")]
        disagree = [f"{s.name}: rev {s.rev} {s.mode} {sorted(s.open)} {s.ids}" for s in stayed
                    if (s.rev, s.mode, s.open, s.ids) != (listed_rev, mode, listed_open, listed_ids)]

        results.check(alive and daemon.alive(), "daemon alive after the soak")
        results.check(not stats.errors, "every reply was one the protocol allows", "; ".join(stats.errors[:5]))
        results.check(stats.busy == 0, "no client was turned away (ERR BUSY)", f"{stats.busy}")
        results.check(len(stayed) == len(subscribers), "all 50 long-lived subscribers stayed connected",
                      f"{len(stayed)}/{len(subscribers)}")
        results.check(not sequence_problems, "subscriber revs follow by exactly 1 or are bridged by !state",
                      "; ".join(sequence_problems[:5]))
        results.check(slow_resynced > 0, "slow subscribers were resynced by !state snapshots",
                      f"{slow_resynced} of {args.slow} slow subscribers, {resyncs} snapshots in all")
        results.check(not disagree, "every subscriber's picture (open ids, and the order its edit events "
                      "lead to) matches LIST", "; ".join(disagree[:3]))
        results.check(saved["revision"] == listed_rev and saved["mode"] == mode and saved_open == listed_open,
                      "state file and LIST agree",
                      f"file rev {saved['revision']} {saved['mode']} {sorted(saved_open)}; "
                      f"LIST rev {listed_rev} {mode} {sorted(listed_open)}")
        results.check(int(snap[1]) == listed_rev and snap[2] == mode and snap_open == listed_open,
                      "last snapshot and LIST agree", snapshot[0])
        margin = max(2048, rss_start // 5)
        results.check(rss_end <= rss_start + margin, "RSS back within a small margin of where it stood after the warm-up",
                      f"{rss_start} KiB -> {rss_end} KiB (margin {margin} KiB, peak {rss_peak} KiB)")

        print(f"soak figures: {elapsed:.0f} s, {stats.requests} requests served "
              f"({stats.requests / elapsed:.0f}/s), {stats.changes_ok} changes acknowledged, final rev {listed_rev}; "
              f"{stats.connections} client connections from {args.clients} slots (at most {stats.max_live} at once), "
              f"{stats.vanished} vanished mid-request; {args.subscribers} subscribers ({args.slow} slow) + "
              f"{len(churned)} short subscriber sessions; {slow_resynced}/{args.slow} slow subscribers resynced, "
              f"{resyncs} !state snapshots; RSS {rss_start} KiB before, {rss_peak} KiB peak, {rss_end} KiB after",
              flush=True)
        code = daemon.kill(signal.SIGTERM)
        results.check(code == 0, "daemon stops with 0 on SIGTERM after the soak", f"exit {code}")
    finally:
        daemon.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", "60")))
    parser.add_argument("--warm-up", type=float, default=10.0, help="seconds of load before the RSS baseline")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--slow", type=int, default=10)
    parser.add_argument("--seed", default=os.environ.get("SOAK_SEED", str(int(time.time()))))
    args = parser.parse_args()
    require_binary()
    print(f"soak: {args.seconds:.0f} s, {args.clients} clients, {args.subscribers} subscribers "
          f"({args.slow} slow), seed {args.seed}", flush=True)
    results = Results()
    try:
        asyncio.run(soak(args, results))
    except Exception as error:
        results.check(False, "soak ran to the end", repr(error))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
