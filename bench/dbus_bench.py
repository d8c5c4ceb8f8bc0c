#!/usr/bin/env python3
"""sectiond's D-Bus face against a floor (docs/PERFORMANCE.md, "D-Bus").

    python3 bench/dbus_bench.py            # the full run (about 2 minutes)
    python3 bench/dbus_bench.py --smoke    # tiny counts, seconds; what `make test` runs

The floor is bench/dbus_floor.c, the least an sd-bus service does (a method that returns
at once, one signal), on the same private dbus-daemon as sectiond, driven by the same
client, bench/dbus_load.c (sd-bus, calls pipelined asynchronously). Three figures, each
the median of runs in which the two sides take turns:

- toggle_calls: Toggle calls per second (64 in flight on one connection) against the
  floor's Trivial calls; goal >= 0.8x.
- signals_100: signals per second delivered to 100 subscribers (each its own connection,
  matching the interface), each signal caused by one call (16 in flight), sectiond's
  Toggle against the floor's Fire; goal >= 0.8x.
- socket_toggle_bus: socket TOGGLE throughput (bench/loadgen.c, 50 connections, 1 in
  flight, as bench.py's write_c50_d1) with --bus session and no bus client, against the
  same daemon without --bus; goal >= 0.95x.

Two more figures put those goals beside the same work done by the floor, because two of
them compare unlike amounts of bus traffic (docs/PERFORMANCE.md, "D-Bus"):

- toggle_fire: Toggle calls per second against the floor's Fire, which like a Toggle is a
  call, a signal and a return through dbus-daemon (Trivial is a call and a return).
- socket_floor_bus: the floor's own socket face (dbus_floor --socket: every line is a
  change, answered after one signal) with the bus, against the same floor with --no-bus,
  loaded as socket_toggle_bus: what one signal per change costs a server that does
  nothing else, on this machine.

sectiond is the release build bench.py makes (or --sectiond-bin), with a state file (no
--sync). Standard library only; writes bench/out/dbus.json (or --json PATH). Exit status 0
when every figure was produced (goals are judged only with --require-targets), 1 when
something broke.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (build_sectiond, build_c, write_configs, Server, pin_to)

PROFILES = {
    "smoke": dict(runs=1, seconds=0.3, signals=20, subscribers=10, depth=64, signal_depth=1, conns=50,
                  warmup=0.05, timeout=30),
    "full": dict(runs=7, seconds=2.0, signals=400, subscribers=100, depth=64, signal_depth=1, conns=50,
                 warmup=0.3, timeout=60),
}
SECTIOND = ("org.sectiond.Sectiond1", "/org/sectiond/Sectiond1", "org.sectiond.Sectiond1")
FLOOR = ("org.sectiond.Floor1", "/org/sectiond/Floor1", "org.sectiond.Floor1")
BUS_CONFIG = os.path.join(bench.BENCH, "dbus-private.conf.in")
GOALS = {"toggle_calls": 0.8, "signals_100": 0.8, "socket_toggle_bus": 0.95, "toggle_fire": 0.8}
# socket_floor_bus is no goal of sectiond's: the floor under socket_toggle_bus's goal.


def log(message):
    print(message, file=sys.stderr, flush=True)


def compile_c(source, output, libs=()):
    cc = os.environ.get("CC") or shutil.which("cc") or "cc"
    done = subprocess.run([cc, "-O2", "-Wall", "-o", output, source, *libs], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"dbus_bench: compiling {source} failed:\n{done.stdout}")
    return output


class Bus:
    """A private dbus-daemon with a session bus's policy and limits raised for the load."""

    def __init__(self, tmp):
        self.path = os.path.join(tmp, "bus")
        config = os.path.join(tmp, "bus.conf")
        with open(config, "w") as f:
            f.write(open(BUS_CONFIG).read().replace("@SOCKET@", self.path))
        self.process = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.path):
            if time.monotonic() > deadline:
                raise RuntimeError("dbus-daemon did not start")
            time.sleep(0.01)
        self.address = f"unix:path={self.path}"
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = self.address

    def owned(self, name):
        done = subprocess.run(["busctl", "--user", "status", name], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        return done.returncode == 0

    def stop(self):
        self.process.kill()
        self.process.wait()


class Side:
    """One side of a comparison: a service started afresh for each run."""

    def __init__(self, env, kind, bus_attached=True, socket=False):
        self.env, self.kind, self.bus_attached, self.socket = env, kind, bus_attached, socket
        self.proc = None

    def __enter__(self):
        env = self.env
        if self.kind == "floor":
            argv = [env.floor] + (["--socket", env.sock] if self.socket else [])
            argv += [] if self.bus_attached else ["--no-bus"]
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                         preexec_fn=bench.pin_to(env.server_cpu))
            if self.proc.stdout.readline().strip() != "ready":
                raise RuntimeError("dbus_floor did not start")
            self.server = None
        else:
            extra = ["--bus", "session"] if self.bus_attached else []
            self.server = bench.Server("sectiond", env.sectiond_argv(extra), env.sock, env.logpath,
                                       env.server_cpu, cleanup=(env.state, env.state + ".journal")).start()
            self.proc = self.server.proc
        name = FLOOR[0] if self.kind == "floor" else SECTIOND[0]
        deadline = time.monotonic() + 10
        while self.bus_attached and not env.bus.owned(name):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not appear on the bus")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        if self.server:
            self.server.stop()
        else:
            self.proc.kill()
            self.proc.wait()


class Env:
    def __init__(self, args, prof, tmp, sectiond, loadgen, floor, load):
        self.prof, self.tmp = prof, tmp
        self.sectiond, self.loadgen, self.floor, self.load = sectiond, loadgen, floor, load
        self.config = bench.write_configs(tmp)
        self.sock = os.path.join(tmp, "s.sock")
        self.state = os.path.join(tmp, "state.json")
        self.logpath = os.path.join(tmp, "sectiond.log")
        self.bus = Bus(tmp)
        self.cpu = {}  # side -> [(service µs per call, dbus-daemon µs per call)], per scenario
        cpus = sorted(os.sched_getaffinity(0))
        self.client_cpu, self.server_cpu = (cpus[0], cpus[1]) if len(cpus) >= 2 and not args.no_pin else (None, None)

    def sectiond_argv(self, extra):
        return [self.sectiond, "--socket", self.sock, "--state", self.state, "--config", self.config] + extra

    def run(self, argv, timeout):
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                              preexec_fn=bench.pin_to(self.client_cpu))
        if done.returncode != 0:
            raise RuntimeError(f"{os.path.basename(argv[0])} failed: {done.stderr.strip()} {done.stdout.strip()}")
        return json.loads(done.stdout.strip().splitlines()[-1])


# --- scenarios: measure(env, side) -> one figure ---------------------------------


def cpu_seconds(pid):
    """User and system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def toggle_calls(env, side, floor_method="Trivial"):
    p = env.prof
    dest, method = (FLOOR, floor_method) if side == "floor" else (SECTIOND, "Toggle")
    with Side(env, side) as s:
        before = cpu_seconds(s.proc.pid), cpu_seconds(env.bus.process.pid)
        result = env.run([env.load, "calls", *dest, method, "0", str(p["depth"]), str(p["seconds"])],
                         p["seconds"] * 2 + p["timeout"])
        after = cpu_seconds(s.proc.pid), cpu_seconds(env.bus.process.pid)
    # CPU per call of the service and of dbus-daemon, the warm-up's counted on both sides of the division
    env.cpu.setdefault(side, []).append(tuple((b - a) * 1e6 / result["all_calls"] for a, b in zip(before, after)))
    return result["rate"]


def signals_100(env, side):
    p = env.prof
    dest, method = (FLOOR, "Fire") if side == "floor" else (SECTIOND, "Toggle")
    with Side(env, side):
        result = env.run([env.load, "signals", *dest, method, "0", "-", str(p["subscribers"]), str(p["signals"]),
                          str(p["signal_depth"])], p["timeout"] * 3)
    return result["rate"]


def toggle_fire(env, side):
    return toggle_calls(env, side, floor_method="Fire")


def socket_toggle_bus(env, side, server="sectiond"):
    p = env.prof
    with Side(env, server, bus_attached=(side == "bus"), socket=True) as s:
        before = cpu_seconds(env.bus.process.pid)
        result = env.run([env.loadgen, "--proto", "sectiond", "--socket", env.sock, "--timeout", str(p["timeout"]),
                          "--server-pid", str(s.proc.pid), "rps", "-c", str(p["conns"]), "-d", "1",
                          "-t", str(p["seconds"]), "-w", str(p["warmup"]), "--cmd", "TOGGLE %d\\n"],
                         p["seconds"] + p["timeout"])
        daemon = (cpu_seconds(env.bus.process.pid) - before) * 1e6 / (result["rps"] * result["seconds"])
    if result["errors"]:
        raise RuntimeError(f"{result['errors']} error replies")
    env.cpu.setdefault(side, []).append((result["server_cpu_us_per_request"], daemon))
    return result["rps"]


def socket_floor_bus(env, side):
    return socket_toggle_bus(env, side, server="floor")


SCENARIOS = [
    ("toggle_calls", toggle_calls, ("sectiond", "floor"), "calls/s"),
    ("signals_100", signals_100, ("sectiond", "floor"), "signals/s"),
    ("socket_toggle_bus", socket_toggle_bus, ("bus", "nobus"), "TOGGLE/s"),
    ("toggle_fire", toggle_fire, ("sectiond", "floor"), "calls/s"),
    ("socket_floor_bus", socket_floor_bus, ("bus", "nobus"), "lines/s"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bench.side_by_side_options(ap, "dbus.json")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the service and the client to CPUs")
    ap.add_argument("--require-targets", action="store_true", help="exit 1 when a goal is missed")
    args = ap.parse_args()
    began = time.monotonic()
    prof = dict(PROFILES["smoke" if args.smoke else "full"])
    if args.runs:
        prof["runs"] = args.runs
    for tool in ("dbus-daemon", "busctl"):
        if not shutil.which(tool):
            log(f"dbus_bench: {tool} is missing (scripts/deps.sh --test installs it)")
            return 1
    sectiond = bench.build_sectiond(args)
    if not sectiond:
        return 1
    only = set(args.only.split(",")) if args.only else None
    results = {}
    with tempfile.TemporaryDirectory(prefix="sdbusbench.") as tmp:
        floor = compile_c(os.path.join(bench.BENCH, "dbus_floor.c"), os.path.join(tmp, "dbus_floor"), ["-lsystemd"])
        load = compile_c(os.path.join(bench.BENCH, "dbus_load.c"), os.path.join(tmp, "dbus_load"), ["-lsystemd"])
        loadgen = bench.build_c("loadgen", tmp)
        env = Env(args, prof, tmp, sectiond, loadgen, floor, load)
        try:
            for name, measure, sides, unit in SCENARIOS:
                if only and name not in only:
                    continue
                figures = {side: [] for side in sides}
                for run in range(prof["runs"]):
                    order = sides if run % 2 == 0 else sides[::-1]
                    for side in order:
                        figures[side].append(measure(env, side))
                ours, theirs = (statistics.median(figures[s]) for s in sides)
                paired = statistics.median(a / b for a, b in zip(figures[sides[0]], figures[sides[1]]))
                goal = GOALS.get(name)
                results[name] = dict(unit=unit, sides=list(sides), runs=figures, ratio=ours / theirs,
                                     paired_ratio=paired, goal=goal, met=None if goal is None else paired >= goal,
                                     **{sides[0]: ours, sides[1]: theirs})
                if env.cpu:
                    for side, figures_ in env.cpu.items():
                        service, daemon = (statistics.median(f[i] for f in figures_) for i in (0, 1))
                        results[name][f"{side}_cpu_us_per_request"] = dict(service=service, dbus_daemon=daemon)
                        log(f"  {side}: {service:.1f} µs CPU per call in the service, {daemon:.1f} µs in dbus-daemon")
                    env.cpu = {}
                log(f"{name}: {sides[0]} {ours:,.0f} {unit}, {sides[1]} {theirs:,.0f} {unit}, "
                    f"ratio {ours / theirs:.2f} (paired {paired:.2f})"
                    + (f", goal >= {GOALS[name]}" if name in GOALS else ", the floor under socket_toggle_bus"))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            log(f"dbus_bench: {e}")
            return 1
        finally:
            env.bus.stop()
    print(f"{'scenario':<20} {'sectiond':>12} {'peer':>12} {'ratio':>6} {'paired':>6} {'goal':>5}  met")
    for name, r in results.items():
        a, b = r["sides"]
        goal, met = ("-", "-") if r["goal"] is None else (r["goal"], "yes" if r["met"] else "NO")
        print(f"{name:<20} {r[a]:>12,.0f} {r[b]:>12,.0f} {r['ratio']:>6.2f} {r['paired_ratio']:>6.2f} "
              f"{goal:>5}  {met}")
    if args.smoke:
        print(bench.SMOKE_NOTE)
    load1 = os.getloadavg()[0]
    if load1 > len(os.sched_getaffinity(0)):
        print(f"note: load average {load1:.1f} on {len(os.sched_getaffinity(0))} CPUs: other work shared the machine")
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(dict(profile="smoke" if args.smoke else "full", load_average=os.getloadavg(),
                       seconds=round(time.monotonic() - began, 1),
                       versions={"dbus-daemon": bench.version(["dbus-daemon", "--version"])}, results=results),
                  f, indent=2)
    missed = [n for n, r in results.items() if r["met"] is False]
    return 1 if args.require_targets and missed else 0


if __name__ == "__main__":
    sys.exit(main())
