#!/usr/bin/env python3
"""The fleet's figures (docs/PERFORMANCE.md, "The fleet"): sectiond --etcd
against etcd itself, in the same run.

    python3 bench/fleet_bench.py            # the full run (about 2 minutes)
    python3 bench/fleet_bench.py --smoke    # tiny counts; what `make test` runs

Three etcd members on loopback (Tests/System/lib/etcd_lab.py) and three release sectiond sharing
one list of 50 sections through them (Tests/System/lib/fleet_lab.py: host hN names member N
first), started once for the whole run. Each figure is the median of runs in which the two sides
take turns (the ratio's "paired" figure is the median of the runs' own ratios, steadier on a
busy machine):

- toggle_c1_d1: TOGGLEs per second through host h0, one connection, one in flight
  (bench/loadgen.c), against bench/etcd_cas.c on h0's member: the compare-and-swap a host's
  commit is (compare the head's mod revision and that the log entry is new, put a log entry and the head, of the sizes the
  fleet's own last entry and head have in etcd), one in flight, back to back on one kept-alive
  connection, the revision to compare taken from the previous txn's answer as a host takes it.
  Goal >= 0.9x.
- toggle_c1_d1_watched: the same while curl holds one watch on the plain client's log keys on
  each member, as the hosts hold theirs (on `log/`, not the head): the peer then pays etcd's
  sending of every change to the fleet's watches, which a host's commit cannot avoid; not its
  applying. Goal >= 0.9x. With both run, the summary also prints the watched peer's rate over
  the bare one's: what etcd's gateway spends feeding three watches, the most a fleet whose
  hosts learn each other's changes from watches can reach against the bare client here.
- toggle_c1_d1_read: the same against etcd_cas --read, which reads the head's mod revision
  before each txn (two round trips: a client that keeps no state). Goal >= 0.9x.
- toggle_c50_d16: TOGGLEs per second through h0 from 50 connections with 16 in flight each,
  against toggle_c1_d1's sectiond figure of the same run. Goal >= 5x. Also counted: the list's
  revisions (LIST) and etcd's (a txn is one etcd revision, and nothing else writes during the
  run) over the run, so changes per etcd txn, the group commit's size.
- a_to_b_p50: a TOGGLE sent on h0 until h1's subscriber reads its event, against a put on
  member 0 through the gateway until a watch on member 1 reads it; p50 of each, one change at
  a time, both measured by this script the same way. Goal: within 1 ms (the figure is the
  difference, sectiond minus etcd).
- cpu_c1_d1, cpu_c50_d16: what the fleet costs its hosts against what it costs etcd, from
  toggle_c1_d1's and toggle_c50_d16's own sectiond runs. Each run is a window that opens and
  closes with every host at the same revision (so the applying hosts' work for the window's
  changes is in it, and the STATUS requests that find them so), over which the utime + stime
  (/proc/PID/stat) of the three hosts' processes and of the three members' are summed and
  divided by the list revisions committed in it: the hosts' CPU a change against the members'.
  Goal at one in flight: the hosts' at most a tenth of the members' (cpu_c1_d1). cpu_c50_d16
  is shown, not judged: there one etcd txn carries hundreds of changes, which every host still
  applies one by one. /proc counts in clock ticks, so each process's reading over a window is
  within two ticks: a goal within that of the figure is not judged (n/a, the summary says
  why). An idle window of the same length at the start gives what both sides spend with no
  change at all, which a window's figure includes (the summary also gives the share without it).

The daemons run with their state files (--fsync everysec, the default); --fsync no passes
`--fsync no` to them, for telling what the state file costs. No CPU pinning: three members and
three daemons share the machine's CPUs. Standard library only, plus libcurl's headers for
etcd_cas.c (libcurl4-openssl-dev, which the daemon's build needs anyway). Writes
bench/out/fleet.json (or --json PATH). Exit status 0 when every figure was produced (goals are
judged only with --require-targets), 77 when etcd is not installed, 1 when something broke.
"""

import argparse
import base64
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (build_sectiond, build_c, BENCH, ROOT)

sys.path.insert(0, os.path.join(bench.ROOT, "Tests", "System", "lib"))
from etcd_lab import ETCD, EtcdLab, LabUnavailable  # noqa: E402
from fleet_lab import FleetError, FleetLab, event_revision  # noqa: E402
from sdlib import Client  # noqa: E402

PROFILES = {
    "smoke": dict(runs=1, seconds=0.3, warmup=0.05, reps=5, timeout=30),
    "full": dict(runs=5, seconds=3.0, warmup=0.5, reps=200, timeout=60),
}
SECTIONS = 50
GOALS = {"toggle_c1_d1": ("ratio", 0.9), "toggle_c1_d1_read": ("ratio", 0.9),
         "toggle_c1_d1_watched": ("ratio", 0.9), "toggle_c50_d16": ("ratio", 5.0),
         "a_to_b_p50": ("difference", 1.0), "cpu_c1_d1": ("share", 0.1), "cpu_c50_d16": ("share", None)}
# The CPU rows: each is made from the named scenario's sectiond runs at that shape.
CPU_ROWS = {"cpu_c1_d1": ("toggle_c1_d1", 1, 1), "cpu_c50_d16": ("toggle_c50_d16", 50, 16)}
TICK = os.sysconf("SC_CLK_TCK")


def log(message):
    print(message, file=sys.stderr, flush=True)


def cpu_seconds(pid):
    """The CPU time process `pid` has used, all its threads (gone ones too), in seconds: utime +
    stime from /proc/PID/stat, in clock ticks (1/SC_CLK_TCK s, truncated)."""
    path = f"/proc/{pid}/stat"
    try:
        with open(path) as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the command's name, which may hold anything
        return (int(fields[11]) + int(fields[12])) / TICK  # fields 14 and 15 of proc(5)
    except (OSError, IndexError, ValueError) as error:
        raise RuntimeError(f"{path}: no utime and stime to read ({error}): is process {pid} gone?") from None


def b64(text):
    return base64.b64encode(text.encode()).decode()


class Gateway:
    """One kept-alive HTTP connection to a member's JSON gateway."""

    def __init__(self, url, timeout):
        host, port = url.split("//", 1)[1].rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port), timeout=timeout)

    def post(self, path, body):
        self.connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"etcd {path}: HTTP {response.status}: {data[:200]!r}")
        return json.loads(data)

    def revision(self):
        """etcd's current revision (every txn that writes advances it by one)."""
        return int(self.post("/v3/kv/range", {"key": b64("/"), "count_only": True})["header"]["revision"])

    def close(self):
        self.connection.close()


class Env:
    def __init__(self, prof, tmp, etcd, fleet, loadgen, cas):
        self.prof, self.tmp, self.etcd, self.fleet = prof, tmp, etcd, fleet
        self.loadgen, self.cas = loadgen, cas
        self.windows = []  # every loadgen run on h0: its changes, etcd txns and each side's CPU
        self.scenario, self.run_index = None, None  # what is being measured, for the windows' record
        self.d1 = {}  # run -> toggle_c1_d1's sectiond figure, toggle_c50_d16's peer
        self.cpu = {}  # scenario side -> the host's CPU µs per TOGGLE, per run (loadgen's count)
        self.peer_watchers = 0  # watches on the peer's prefix while it runs (toggle_c1_d1_watched)
        self.sizes = None  # (entry bytes, head bytes) of the fleet's last commit: the peer's values

    def run(self, argv):
        p = self.prof
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=p["seconds"] + p["warmup"] + p["timeout"])
        if done.returncode != 0:
            raise RuntimeError(f"{os.path.basename(argv[0])} failed ({done.returncode}): "
                               f"{done.stderr.strip()} {done.stdout.strip()}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def usage(self):
        """The fleet at rest (every host at the same revision) and what each side has used so far:
        (that revision, etcd's revision, each host's CPU seconds, each member's)."""
        revision = self.fleet.converged(timeout=self.prof["timeout"])
        gateway = Gateway(self.etcd.urls[0], self.prof["timeout"])
        try:
            txns = gateway.revision()
        finally:
            gateway.close()
        return (revision, txns, [cpu_seconds(h.pid) for h in self.fleet.hosts],
                [cpu_seconds(m.pid) for m in self.etcd.processes])

    def window(self, before, after, seconds, **record):
        """One measured stretch between two usage() readings, as kept in the JSON."""
        return dict(record, seconds=round(seconds, 3), changes=after[0] - before[0], etcd_txns=after[1] - before[1],
                    hosts_cpu_s=[round(b - a, 3) for a, b in zip(before[2], after[2])],
                    members_cpu_s=[round(b - a, 3) for a, b in zip(before[3], after[3])])

    def idle(self):
        """What the hosts and the members use with no change made, over a window as long as a run's."""
        before, began = self.usage(), time.monotonic()
        time.sleep(self.prof["seconds"] + self.prof["warmup"])
        return self.window(before, self.usage(), time.monotonic() - began, scenario="idle")

    def toggles(self, host, conns, depth):
        p = self.prof
        before, began = self.usage(), time.monotonic()
        try:
            result = self.run([self.loadgen, "--proto", "sectiond", "--socket", host.socket, "--timeout",
                               str(p["timeout"]), "--server-pid", str(host.pid), "rps", "-c", str(conns), "-d",
                               str(depth), "-t", str(p["seconds"]), "-w", str(p["warmup"]), "--cmd", "TOGGLE %d\\n"])
        except RuntimeError as error:
            raise RuntimeError(f"{error}; {host.name} {'runs' if host.alive() else 'is gone'}, its directory "
                               f"{'is there' if os.path.isdir(os.path.dirname(host.socket)) else 'is gone'}; "
                               f"its log ends: {' | '.join(host.log().splitlines()[-3:])}") from None
        if result["errors"]:
            raise RuntimeError(f"{result['errors']} error replies from {host.name}")
        self.cpu.setdefault(f"c{conns}_d{depth}", []).append(result.get("server_cpu_us_per_request"))
        self.windows.append(self.window(before, self.usage(), time.monotonic() - began, scenario=self.scenario,
                                        run=self.run_index, conns=conns, depth=depth))
        return result

    def cas_peer(self, read):
        p = self.prof
        prefix = f"/bench{secrets.token_hex(4)}/"
        # watches on the peer's log keys, one on each member in turn, as the hosts watch theirs:
        # what etcd spends sending the events, without a host applying them (toggle_c1_d1_watched)
        watchers = [subprocess.Popen(
            ["curl", "-sN", "-X", "POST", f"{self.etcd.urls[i % len(self.etcd.urls)]}/v3/watch", "-d",
             json.dumps({"create_request": {"key": b64(prefix + "log/"), "range_end": b64(prefix + "log0")}})],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(self.peer_watchers)]
        try:
            time.sleep(0.2 if watchers else 0)
            entry, head = self.fleet_sizes()
            return self.run([self.cas, self.etcd.urls[0], prefix, str(p["seconds"]), str(p["warmup"]),
                             "--value-bytes", str(entry), "--head-bytes", str(head)] + (["--read"] if read else []))
        finally:
            for watcher in watchers:
                watcher.kill()
                watcher.wait()


    def fleet_sizes(self):
        """The sizes of the fleet's newest log entry and of its head in etcd (after a TOGGLE of
        h0's, made twice so the list is as it was), for the peer's txn to be the host's size."""
        if self.sizes is None:
            for _ in range(2):
                self.fleet.hosts[0].request("TOGGLE 0")
            gateway = Gateway(self.etcd.urls[0], self.prof["timeout"])
            try:
                prefix = self.fleet.prefix
                log = gateway.post("/v3/kv/range", {"key": b64(prefix + "log/"), "range_end": b64(prefix + "log0"),
                                                    "sort_order": "DESCEND", "limit": 1})
                head = gateway.post("/v3/kv/range", {"key": b64(prefix + "head")})
            finally:
                gateway.close()
            self.sizes = tuple(len(base64.b64decode(r["kvs"][0]["value"])) for r in (log, head))
        return self.sizes


# --- scenarios: measure(env, side, run) -> one figure ---------------------------------


def toggle_c1_d1(env, side, run, read=False):
    if side == "sectiond":
        rate = env.toggles(env.fleet.hosts[0], 1, 1)["rps"]
        env.d1.setdefault(run, rate)
        return rate
    return env.cas_peer(read)["rate"]


def toggle_c1_d1_read(env, side, run):
    return toggle_c1_d1(env, side, run, read=True)


def toggle_c1_d1_watched(env, side, run):
    env.peer_watchers = len(env.fleet.hosts)
    try:
        return toggle_c1_d1(env, side, run)
    finally:
        env.peer_watchers = 0


def toggle_c50_d16(env, side, run):
    host = env.fleet.hosts[0]
    if side != "sectiond":
        if run not in env.d1:
            env.d1[run] = env.toggles(host, 1, 1)["rps"]
        return env.d1[run]
    return env.toggles(host, 50, 16)["rps"]


def a_to_b(env, side, run):
    """p50 in ms of one change's way from where it is made to a reader on another host/member."""
    p = env.prof
    waits = []
    if side == "sectiond":
        a, b = env.fleet.hosts[0], env.fleet.hosts[1]
        began = time.monotonic()
        env.fleet.converged(timeout=p["timeout"])  # after toggle_c50_d16's flood the others may lag
        if time.monotonic() - began > 1:
            log(f"  a_to_b_p50: the hosts took {time.monotonic() - began:.1f} s to converge first")
        with Client(a.socket, timeout=p["timeout"]) as sender, b.subscribe(timeout=p["timeout"]) as watch:
            seen = watch.revision  # nothing else changes the list: each TOGGLE is the next revision
            for _ in range(p["reps"]):
                t0 = time.perf_counter()
                sender.send("TOGGLE 0\n")
                while True:  # an event of an earlier revision (one still in flight) is not this one's
                    event = watch.next_event(p["timeout"])
                    if event is None:
                        raise RuntimeError(f"h1's subscriber saw no event of revision {seen + 1} within {p['timeout']} s")
                    if (event_revision(event) or 0) > seen:
                        break
                t1 = time.perf_counter()
                reply = sender.read_reply()
                if not reply[-1].startswith("OK"):
                    raise RuntimeError(f"TOGGLE 0 on h0 answered {reply}")
                seen = int(reply[-1].split()[1])
                if event_revision(event) != seen:
                    raise RuntimeError(f"h1's event {event!r} is not h0's change, OK {seen}")
                waits.append(t1 - t0)
                time.sleep(0.01)
        return statistics.median(waits) * 1e3
    key = b64(f"/bench{secrets.token_hex(4)}/k")
    host, port = env.etcd.urls[1].split("//", 1)[1].rsplit(":", 1)
    stream = http.client.HTTPConnection(host, int(port), timeout=p["timeout"])
    putter = Gateway(env.etcd.urls[0], p["timeout"])
    try:
        stream.request("POST", "/v3/watch", json.dumps({"create_request": {"key": key}}),
                       {"Content-Type": "application/json"})
        response = stream.getresponse()
        created = json.loads(response.readline())
        if not created.get("result", {}).get("created"):
            raise RuntimeError(f"the watch on member 1 was not created: {created}")
        for n in range(p["reps"]):
            t0 = time.perf_counter()
            putter.post("/v3/kv/put", {"key": key, "value": b64(str(n))})
            message = json.loads(response.readline())
            t1 = time.perf_counter()
            if not message.get("result", {}).get("events"):
                raise RuntimeError(f"the watch on member 1 answered {message}")
            waits.append(t1 - t0)
            time.sleep(0.01)
    finally:
        putter.close()
        stream.close()
    return statistics.median(waits) * 1e3


SCENARIOS = [
    ("toggle_c1_d1", toggle_c1_d1, ("sectiond", "etcd_cas"), "req/s"),
    ("toggle_c1_d1_read", toggle_c1_d1_read, ("sectiond", "etcd_cas --read"), "req/s"),
    ("toggle_c1_d1_watched", toggle_c1_d1_watched, ("sectiond", "etcd_cas watched"), "req/s"),
    ("toggle_c50_d16", toggle_c50_d16, ("sectiond", "sectiond c1 d1"), "req/s"),
    ("a_to_b_p50", a_to_b, ("sectiond", "etcd"), "ms"),
]


def judge(name, ours, theirs, paired):
    kind, goal = GOALS[name]
    if kind == "ratio":
        return f">= {goal:g}x", paired >= goal
    return f"<= etcd + {goal:g} ms", ours - theirs <= goal


def cpu_row(name, windows, idle):
    """The row `name` of CPU_ROWS from its scenario's windows (None when it did not run): the
    hosts' and the members' CPU µs a change per window, and the paired figure's range over what
    /proc's clock ticks leave unknown (each process's reading within two ticks), by which the
    goal is judged: met when even the range's top meets it, missed when even its bottom
    misses it, not judged (met None, with the reason) in between. Beside it, for the reader,
    the paired figure with both sides' idle use (the `idle` window's rate) taken out, and each
    process's median (h0 and member 0 first: h0 sends its txns to member 0)."""
    scenario, conns, depth = CPU_ROWS[name]
    chosen = [w for w in windows if (w["scenario"], w.get("conns"), w.get("depth")) == (scenario, conns, depth)]
    if not chosen:
        return None
    if any(w["changes"] <= 0 for w in chosen):
        raise RuntimeError(f"{name}: a window of {scenario} committed no change: {chosen}")
    sides = ("hosts", "etcd members")
    runs = {side: [sum(w[key]) * 1e6 / w["changes"] for w in chosen]
            for side, key in zip(sides, ("hosts_cpu_s", "members_cpu_s"))}
    hosts, members = ([sum(w[key]) for w in chosen] for key in ("hosts_cpu_s", "members_cpu_s"))
    slack = [len(chosen[0][key]) * 2 / TICK for key in ("hosts_cpu_s", "members_cpu_s")]
    low = statistics.median(max(h - slack[0], 0) / (m + slack[1]) for h, m in zip(hosts, members))
    high = statistics.median((h + slack[0]) / (m - slack[1]) if m > slack[1] else float("inf")
                             for h, m in zip(hosts, members))
    ours, theirs = (statistics.median(runs[side]) for side in sides)
    paired = statistics.median(h / m if m else float("inf") for h, m in zip(hosts, members))
    # what each side spends with no change at all, at the idle window's rate, taken out of both
    rates = [sum(idle[key]) / idle["seconds"] for key in ("hosts_cpu_s", "members_cpu_s")]
    busy = [(h - rates[0] * w["seconds"], m - rates[1] * w["seconds"]) for h, m, w in zip(hosts, members, chosen)]
    paired_less_idle = statistics.median(h / m if m > 0 else float("inf") for h, m in busy)
    goal = GOALS[name][1]
    row = dict(unit="µs/change", sides=list(sides), runs=runs, sectiond=ours, peer=theirs,
               ratio=ours / theirs if theirs else float("inf"), paired=paired, paired_range=[low, high],
               paired_less_idle=paired_less_idle,
               by_process={side: [statistics.median(w[key][i] * 1e6 / w["changes"] for w in chosen)
                                  for i in range(len(chosen[0][key]))]
                           for side, key in zip(sides, ("hosts_cpu_s", "members_cpu_s"))},
               changes=[w["changes"] for w in chosen], seconds=[w["seconds"] for w in chosen])
    if goal is None:
        return dict(row, goal="none (1 x 1 judged)", met=None,
                    not_judged="shown, not a goal (the goal is at one in flight): there one etcd txn carries "
                               "hundreds of changes, which every host still applies one by one")
    row.update(goal=f"<= {goal:g}x", met=True if high <= goal else False if low > goal else None)
    if row["met"] is None:
        row["not_judged"] = "the goal is within /proc's clock ticks of the figure (longer runs narrow them)"
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bench.side_by_side_options(ap, "fleet.json")
    ap.add_argument("--fsync", choices=("always", "everysec", "no"), help="the daemons' --fsync (default theirs)")
    ap.add_argument("--hosts", type=int, default=3, help="sectiond hosts in the fleet (default 3; a_to_b_p50 needs 2)")
    ap.add_argument("--require-targets", action="store_true", help="exit 1 when a goal is missed")
    args = ap.parse_args()
    began = time.monotonic()
    prof = dict(PROFILES["smoke" if args.smoke else "full"])
    if args.runs:
        prof["runs"] = args.runs
    only = set(args.only.split(",")) if args.only else None
    if only and only - {s[0] for s in SCENARIOS}:
        ap.error(f"unknown scenario(s): {', '.join(sorted(only - {s[0] for s in SCENARIOS}))}")
    if "toggle_c50_d16" in (only or ()) and "toggle_c1_d1" not in only:
        log("fleet_bench: toggle_c50_d16's peer is measured on its own (toggle_c1_d1 not run)")
    sectiond = bench.build_sectiond(args, fleet=True)
    if not sectiond:
        return 1
    os.environ["BUILD_DIR"] = os.path.dirname(sectiond)  # the fleet lab's daemons are this build
    config = json.dumps({"mode": "multi", "sections": [{"title": f"S{i}", "items": ["a"]} for i in range(SECTIONS)]})
    results = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="sdfleetbench.") as tmp:
        loadgen = bench.build_c("loadgen", tmp)
        cas = os.path.join(tmp, "etcd_cas")
        cc = os.environ.get("CC") or "cc"
        done = subprocess.run([cc, "-O2", "-Wall", "-o", cas, os.path.join(bench.BENCH, "etcd_cas.c"), "-lcurl"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if done.returncode != 0:
            log(f"fleet_bench: compiling etcd_cas.c failed (libcurl4-openssl-dev?):\n{done.stdout}")
            return 1
        try:
            etcd = EtcdLab().start()
        except LabUnavailable as reason:
            print(f"SKIP the fleet bench: {reason}", flush=True)
            return 77
        try:
            extra = ("--fsync", args.fsync) if args.fsync else ()
            with FleetLab(etcd, hosts=args.hosts, configs=[config] * args.hosts, extra_args=extra) as fleet:
                env = Env(prof, tmp, etcd, fleet, loadgen, cas)
                idle = env.idle()
                for name, measure, sides, unit in SCENARIOS:
                    if only and name not in only:
                        continue
                    figures = {side: [] for side in sides}
                    env.scenario = name
                    for run in range(prof["runs"]):
                        env.run_index = run
                        for side in sides if run % 2 == 0 else sides[::-1]:
                            windows = len(env.windows)
                            figures[side].append(measure(env, side, run))
                            log(f"  {name} run {run + 1}/{prof['runs']} {side}: {figures[side][-1]:,.3f} {unit}")
                            for w in env.windows[windows:]:
                                log(f"    its window: {w['changes']:,} changes in {w['seconds']:.1f} s, the hosts' "
                                    f"CPU {sum(w['hosts_cpu_s']) * 1e3:,.0f} ms, the members' "
                                    f"{sum(w['members_cpu_s']) * 1e3:,.0f} ms")
                    ours, theirs = (statistics.median(figures[s]) for s in sides)
                    if GOALS[name][0] == "ratio":
                        paired = statistics.median(a / b for a, b in zip(*(figures[s] for s in sides)))
                    else:
                        paired = statistics.median(a - b for a, b in zip(*(figures[s] for s in sides)))
                    goal, met = judge(name, ours, theirs, paired)
                    results[name] = dict(unit=unit, sides=list(sides), runs=figures, sectiond=ours, peer=theirs,
                                         ratio=ours / theirs, paired=paired, goal=goal, met=met)
                    if name == "toggle_c50_d16":
                        counted = [w for w in env.windows if w["scenario"] == name and w["conns"] == 50]
                        changes, txns = (sum(w[key] for w in counted) for key in ("changes", "etcd_txns"))
                        results[name].update(list_revisions=changes, etcd_txns=txns,
                                             changes_per_txn=changes / txns if txns else None)
                        log(f"  toggle_c50_d16: {changes} changes in {txns} etcd txns "
                            f"({changes / max(txns, 1):.1f} a txn)")
                for name in CPU_ROWS:
                    row = cpu_row(name, env.windows, idle)
                    if row:
                        results[name] = row
        except (RuntimeError, FleetError, subprocess.TimeoutExpired) as error:
            log(f"fleet_bench: {error}")
            return 1
        finally:
            etcd.stop()
    load_after = os.getloadavg()[0]
    print(f"\nsectiond --etcd against etcd itself ({'smoke' if args.smoke else 'full'}; medians of "
          f"{prof['runs']} runs; paired = median of the runs' own ratios, or differences for ms)")
    print(f"{'scenario':<20} {'sectiond':>10} {'peer':>16} {'':>10} {'ratio':>6} {'paired':>7}  {'goal':<20} met")
    for name, r in results.items():
        peer = r["sides"][1]
        print(f"{name:<20} {r['sectiond']:>10,.3f} {peer:>16} {r['peer']:>10,.3f} {r['ratio']:>6.2f} "
              f"{r['paired']:>7.2f}  {r['goal']:<20} {'n/a' if r['met'] is None else 'yes' if r['met'] else 'NO'}")
    if args.smoke:
        print(bench.SMOKE_NOTE)
    for name, r in results.items():
        if r["met"] is None:
            print(f"  {name} is not judged: {r['not_judged']}")
    for name in CPU_ROWS:
        if name in results:
            r = results[name]
            print(f"  {name}: the hosts' CPU a change {r['sectiond']:,.0f} µs, the members' {r['peer']:,.0f} µs "
                  f"(medians of {len(r['changes'])} windows of {statistics.median(r['changes']):,.0f} changes; "
                  f"paired {r['paired']:.3f}x, {r['paired_range'][0]:.3f}x to {r['paired_range'][1]:.3f}x "
                  f"within /proc's ticks, {r['paired_less_idle']:.3f}x without the idle use)")
    print(f"  idle for {idle['seconds']:.1f} s: the hosts used {sum(idle['hosts_cpu_s']) * 1e3:.0f} ms of CPU, "
          f"the members {sum(idle['members_cpu_s']) * 1e3:.0f} ms (in every window's figure)")
    if "toggle_c1_d1" in results and "toggle_c1_d1_watched" in results:
        bare, watched = (results[n]["peer"] for n in ("toggle_c1_d1", "toggle_c1_d1_watched"))
        results["toggle_c1_d1"]["peer_watched_share"] = watched / bare
        print(f"  etcd feeding the hosts' three watches: etcd_cas at {watched / bare:.2f} of its own bare rate when it "
              f"holds them, the most a fleet whose hosts watch can reach against the bare client on these CPUs "
              f"(sectiond: {results['toggle_c1_d1']['ratio']:.2f})")
    if "toggle_c50_d16" in results:
        r = results["toggle_c50_d16"]
        print(f"  toggle_c50_d16: {r['list_revisions']} list revisions in {r['etcd_txns']} etcd txns "
              f"({r['changes_per_txn'] or 0:.1f} changes a txn: one txn per group commit)")
    cpu = {k: statistics.median(v) for k, v in env.cpu.items() if None not in v and v}
    if cpu:
        print("  h0's CPU per TOGGLE: " + ", ".join(f"{k} {v:.0f} µs" for k, v in cpu.items()))
    if env.sizes:
        print(f"  the peer's txn: a log entry of {env.sizes[0]} bytes and a head of {env.sizes[1]}, as h0's TOGGLE's")
    print(f"  load average {load_before:.2f} before, {load_after:.2f} after, on {os.cpu_count()} CPUs"
          + ("; the daemons ran with --fsync " + args.fsync if args.fsync else ""))
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(dict(profile="smoke" if args.smoke else "full", fsync=args.fsync, hosts=args.hosts, host_cpu_us_per_toggle=cpu,
                       peer_value_bytes=env.sizes, cpu_idle=idle, cpu_windows=env.windows, clock_ticks_per_s=TICK,
                       load_average=[load_before, load_after], seconds=round(time.monotonic() - began, 1),
                       versions=dict(etcd=bench.version([ETCD, "--version"])), results=results), f, indent=2)
    missed = [n for n, r in results.items() if r["met"] is False]
    return 1 if args.require_targets and missed else 0


if __name__ == "__main__":
    sys.exit(main())
