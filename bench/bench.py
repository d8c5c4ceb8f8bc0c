#!/usr/bin/env python3
"""sectiond against redis-server, side by side.

    python3 bench/bench.py            # the full run (a few minutes), same as --full
    python3 bench/bench.py --smoke    # tiny counts, a few seconds; for CI

It installs redis-server when missing (apt-get), builds sectiond in release mode
(`swift build -c release --static-swift-stdlib --product sectiond`), compiles bench/loadgen.c with
`cc -O2`, starts both servers on Unix sockets in a temporary directory, runs
every scenario (bench/README.md) against both in the same run (medians of several
runs, the two servers alternating), prints one table and writes the figures as
JSON (bench/out/results.json, or --json PATH).

Standard library only.  Every wait is bounded.  Exit status: 0 when every
scenario produced its figures (timings are not judged, except with
--require-targets), 1 when something broke, 2 on bad usage.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")

PROFILES = {
    # every count tiny: the point is that each code path runs, not the figures
    "smoke": dict(
        runs=1, other_runs=1, seconds=0.3, warmup=0.05, conns=50,
        fan1_subs=20, fan1_reps=5, fan9_subs=60, fan9_reps=3,
        idle_conns=60, startup_n=3, settle=0.1, timeout=10,
    ),
    "full": dict(
        runs=11, other_runs=5, seconds=2.0, warmup=0.3, conns=50,
        fan1_subs=1000, fan1_reps=200, fan9_subs=9000, fan9_reps=50,
        idle_conns=9000, startup_n=20, settle=0.5, timeout=60,
    ),
}

NOTIFY_WAIT = 2.0  # seconds to wait for READY=1 before calling start-up "n/a"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Skip(Exception):
    """A figure that cannot be produced for a known, acceptable reason (n/a)."""


# --------------------------------------------------------------------------
# set-up


def ensure_redis():
    exe = shutil.which("redis-server")
    if exe:
        return exe
    log("bench: redis-server is missing; installing the Debian package")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(sudo + ["apt-get", "install", "-y", "-q", "redis-server"], env=env)
    if r.returncode != 0:
        subprocess.run(sudo + ["apt-get", "update", "-q"], env=env, timeout=600)
        subprocess.run(sudo + ["apt-get", "install", "-y", "-q", "redis-server"], env=env,
                       timeout=900)
    exe = shutil.which("redis-server")
    if not exe:
        raise SystemExit("bench: could not install redis-server")
    # Debian starts the packaged service; it listens on TCP only and does not disturb us.
    return exe


def build_sectiond(args, fleet=False):
    """Return the path of a release sectiond binary, or None (with a message). With `fleet`,
    sectiond-fleet must be beside it (what `sectiond --etcd` execs: docs/FLEET.md)."""
    if args.sectiond_bin:
        fleet_bin = os.path.join(os.path.dirname(os.path.abspath(args.sectiond_bin)), "sectiond-fleet")
        if not os.access(args.sectiond_bin, os.X_OK):
            log(f"bench: --sectiond-bin {args.sectiond_bin} is not an executable")
        elif fleet and not os.access(fleet_bin, os.X_OK):
            log(f"bench: --sectiond-bin: no sectiond-fleet beside it ({fleet_bin}), which --etcd runs")
        else:
            return os.path.abspath(args.sectiond_bin)
        return None
    # Built as `make install` builds it: the Swift runtime linked in, as deployed.
    binpath = swift_product(args, "sectiond", ["--static-swift-stdlib"])
    if binpath:
        warn_if_link_order_stale(binpath)
    # sectiond-fleet too, whichever driver builds: bench/fleet_bench.py runs after bench.py
    # with --no-build (make bench, scripts/test.sh) and needs it beside sectiond.
    if binpath and not swift_product(args, "sectiond-fleet", ["--static-swift-stdlib"]) and fleet:
        return None
    return binpath


# A smoke run's counts are too small for its figures to mean anything: it checks that every
# figure is produced, and its "met?" column is printed only to show the table's shape.
SMOKE_NOTE = ("  smoke run: the counts are too small to judge the goals; a NO above fails nothing "
              "(`make bench` measures them, docs/PERFORMANCE.md has the figures)")


def version(argv):
    """The first line `argv` prints (a tool's --version), for the JSON's record of what ran;
    None when it cannot be run."""
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=10).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return None


def side_by_side_options(ap, json_name):
    """The options of the drivers that measure sectiond beside a peer scenario by scenario
    (bench/dbus_bench.py, bench/fleet_bench.py): counts, which scenarios, where the JSON goes
    (bench/out/json_name by default), which sectiond binary."""
    ap.add_argument("--smoke", action="store_true", help="tiny counts (CI)")
    ap.add_argument("--runs", type=int, help="runs per side and scenario (median)")
    ap.add_argument("--only", help="comma-separated scenarios")
    ap.add_argument("--json", default=os.path.join(BENCH, "out", json_name))
    ap.add_argument("--sectiond-bin", help="use this sectiond binary, do not build")
    ap.add_argument("--scratch-path", help="swift build --scratch-path for the release build")
    ap.add_argument("--no-build", action="store_true", help="do not run swift build")


def build_client_load(args):
    """The SectionClient load generator (Sources/client-load), built in release beside
    sectiond; None (with a message) when it cannot be built."""
    return swift_product(args, "client-load")


def swift_product(args, product, flags=()):
    """Builds `product` in release (unless --no-build) and returns its path, or None with a
    message."""
    cmd = ["swift", "build", "-c", "release", *flags, "--product", product]
    if args.scratch_path:
        cmd += ["--scratch-path", args.scratch_path]
    if not args.no_build:
        if not shutil.which("swift"):
            log(f"bench: no swift toolchain on PATH; cannot build {product}")
            return None
        log("bench: " + " ".join(cmd))
        r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=3600)
        if r.returncode != 0:
            log(f"bench: building {product} failed; last lines:\n  "
                + "\n  ".join(r.stdout.strip().splitlines()[-15:]))
            return None
    binpath = None
    try:
        r = subprocess.run(cmd + ["--show-bin-path"], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=120)
        if r.returncode == 0 and r.stdout.strip():
            binpath = os.path.join(r.stdout.strip().splitlines()[-1], product)
    except (OSError, subprocess.TimeoutExpired):
        pass
    if not binpath:
        base = args.scratch_path or os.path.join(ROOT, ".build")
        binpath = os.path.join(base, "release", product)
    if not os.access(binpath, os.X_OK):
        log(f"bench: no {product} binary at {binpath}")
        return None
    return binpath


def warn_if_link_order_stale(binpath):
    """The idle RSS depends on Sources/sectiond/sectiond.order naming the functions the
    daemon runs (see docs/PERFORMANCE.md); say so when many of them are gone from the binary."""
    order = os.path.join(ROOT, "Sources", "sectiond", "sectiond.order")
    try:
        with open(order) as f:
            wanted = {line.strip() for line in f if line.strip()}
        r = subprocess.run(["nm", "--defined-only", binpath], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return
    present = {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}
    missing = len(wanted - present)
    if wanted and missing * 10 > len(wanted):
        log(f"bench: {missing} of the {len(wanted)} functions in sectiond.order are not in the "
            "binary; run scripts/order-file.py, or idle RSS grows")


def build_c(name, outdir):
    """Compiles bench/NAME.c (the load generator, or the floor server) into outdir."""
    src = os.path.join(BENCH, f"{name}.c")
    exe = os.path.join(outdir, name)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"
    r = subprocess.run([cc, "-O2", "-Wall", "-o", exe, src], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"bench: compiling {name}.c failed:\n" + r.stdout)
    return exe


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        try:  # root may raise the hard limit (up to fs.nr_open)
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, need))
            soft = hard = need
        except (ValueError, OSError):
            log(f"bench: RLIMIT_NOFILE hard limit {hard} < {need}: big scenarios may fail")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def write_configs(tmp):
    big = os.path.join(tmp, "sections.json")
    with open(big, "w") as f:
        json.dump({"mode": "multi",
                   "sections": [{"title": f"S{i}", "items": ["a"]} for i in range(50)]}, f)
    return big


def write_list_config(tmp, sections=1000, items=100, name="list.json"):
    """The list clients grow with runtime edits: 1,000 sections of 100 items, a state of about 2 MB;
    or as many sections as sectiond allows (10,000) but room for the inserted ones."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump({"mode": "multi",
                   "sections": [{"id": f"L{i}", "title": f"List section {i}",
                                 "items": [f"item {j} of section {i}" for j in range(items)]}
                                for i in range(sections)]}, f)
    return path


# --------------------------------------------------------------------------
# servers


def pin_to(cpu):
    if cpu is None:
        return None

    def pre():
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass
    return pre


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def ping_ok(path, kind, timeout=0.5):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(b"PING\r\n" if kind == "redis" else b"PING\n")
            data = b""
            while b"\n" not in data:
                chunk = s.recv(256)
                if not chunk:
                    return False
                data += chunk
            return data.startswith(b"+PONG") if kind == "redis" else data.startswith(b"OK")
    except OSError:
        return False


class Server:
    """One server process on a Unix socket in the temporary directory."""

    def __init__(self, kind, argv, sock, logpath, cpu, cleanup=()):
        self.kind, self.argv, self.sock, self.logpath = kind, argv, sock, logpath
        self.cpu, self.cleanup, self.proc = cpu, cleanup, None

    def start(self, timeout=10.0):
        for p in self.cleanup:
            if os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            elif os.path.exists(p):
                os.unlink(p)
        self.logf = open(self.logpath, "ab")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.logf,
                                     stderr=subprocess.STDOUT, preexec_fn=pin_to(self.cpu))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited with status {self.proc.returncode} "
                                   f"at start-up: {self.log_tail()}")
            if os.path.exists(self.sock) and ping_ok(self.sock, self.kind):
                return self
            time.sleep(0.01)
        self.stop()
        raise RuntimeError(f"{self.kind} did not answer PING within {timeout} s: {self.log_tail()}")

    def rss_kib(self):
        return rss_kib(self.proc.pid)

    def log_tail(self):
        try:
            with open(self.logpath, "rb") as f:
                return " | ".join(f.read().decode(errors="replace").strip().splitlines()[-5:])
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.proc:
            self.logf.close()
        self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Env:
    def __init__(self, args, prof, tmp, sectiond, redis, loadgen, floor):
        self.args, self.prof, self.tmp = args, prof, tmp
        self.sectiond, self.redis, self.loadgen, self.floor = sectiond, redis, loadgen, floor
        self.client_load = None  # set by main when a client_* scenario runs
        self.big_config = write_configs(tmp)
        self.list_config = write_list_config(tmp)
        self.long_list_config = write_list_config(tmp, sections=9900, items=10,
                                                  name="long-list.json")
        ncpu = len(os.sched_getaffinity(0))
        self.server_cpu = self.loadgen_cpu = None
        if not args.no_pin and ncpu >= 2:
            cpus = sorted(os.sched_getaffinity(0))
            self.loadgen_cpu, self.server_cpu = cpus[0], cpus[1]
        elif not args.no_pin:
            # A shell pinned by taskset passes its affinity on: every server and generator then
            # shares one CPU, and the ratios are not those of a pinned run.
            log(f"bench: warning: this process may run on CPU {sorted(os.sched_getaffinity(0))} only "
                "(its affinity), so servers and load generators share it; run from an unpinned "
                "shell (taskset -p -c 0-N $$) for figures comparable with pinned runs")

    def sectiond_argv(self, demo=False, extra=(), config=None):
        t = self.tmp
        argv = [self.sectiond, "--socket", f"{t}/s.sock", "--state", f"{t}/state.json",
                "--max-clients", "10000"]
        if not demo:
            argv += ["--config", config or self.big_config]
        return argv + list(extra)

    def redis_argv(self, aof=False, extra=(), sync=False):
        t = self.tmp
        argv = [self.redis, "--port", "0", "--unixsocket", f"{t}/r.sock", "--save", "",
                "--maxclients", "10100", "--daemonize", "no", "--dir", f"{t}/redis-data",
                "--logfile", ""]
        if aof:
            argv += ["--appendonly", "yes", "--appendfsync", "always" if sync else "everysec"]
        return argv + list(extra)

    def server(self, kind, demo=False, aof=False, big_list=False, long_list=False, sync=False,
               extra=()):
        """sync: sectiond with --sync, redis with appendfsync always (with aof); extra: more
        sectiond options."""
        t = self.tmp
        if kind == "floor":
            return Server(kind, [self.floor, "--socket", f"{t}/f.sock"], f"{t}/f.sock",
                          f"{t}/floor.log", self.server_cpu)
        if kind == "sectiond":
            if sync:
                return Server(kind, self.sectiond_argv(extra=["--sync"]), f"{t}/s.sock",
                              f"{t}/sectiond.log", self.server_cpu,
                              cleanup=(f"{t}/state.json", f"{t}/state.json.journal"))
            # the list scenarios grow items without end: lift the limits out of the way
            config, lifted = ((self.long_list_config if long_list else self.list_config,
                               ["--max-section-items", "100000000", "--max-items", "100000000"])
                              if big_list or long_list else (None, []))
            return Server(kind, self.sectiond_argv(demo=demo, extra=lifted + list(extra), config=config),
                          f"{t}/s.sock", f"{t}/sectiond.log", self.server_cpu,
                          cleanup=(f"{t}/state.json", f"{t}/state.json.journal"))
        os.makedirs(f"{t}/redis-data", exist_ok=True)
        s = Server(kind, self.redis_argv(aof=aof, sync=sync), f"{t}/r.sock", f"{t}/redis.log",
                   self.server_cpu, cleanup=())
        shutil.rmtree(f"{t}/redis-data", ignore_errors=True)
        os.makedirs(f"{t}/redis-data")
        return s

    def loadgen_argv(self, kind, sock, mode_args):
        return [self.loadgen, "--proto", kind, "--socket", sock,
                "--timeout", str(self.prof["timeout"])] + mode_args

    def run_loadgen(self, kind, sock, mode_args, timeout):
        argv = self.loadgen_argv(kind, sock, mode_args)
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, preexec_fn=pin_to(self.loadgen_cpu))
        if r.returncode != 0:
            raise RuntimeError(f"loadgen failed ({r.returncode}): {r.stderr.strip()}"
                               f" {r.stdout.strip()}")
        return json.loads(r.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------
# scenarios: each measure(env, kind) returns one number for one run


def throughput(depth, write=False, edit=None, redis_edit=("INCR k%d\\r\\n",), replies=1,
               long_list=False, sync=False, peer="redis"):
    """edit: the sectiond requests on the 1,000 x 100 list (long_list: 9,900 x 10),
    each connection sending them in turn, against redis_edit with AOF (a request answered by
    `replies` replies). sync: sectiond --sync against redis appendfsync always. peer "floor":
    PING against bench/floor.c instead of redis (the second kind measured is the peer); peer
    "--history 0": the same sectiond keeping no history (what the history costs)."""
    def measure(env, kind):
        p = env.prof
        extra = ()
        if kind != "sectiond" and peer == "floor":
            kind = "floor"
        if kind != "sectiond" and peer == "--history 0":
            kind, extra = "sectiond", ("--history", "0")
        if kind in ("sectiond", "floor"):
            cmds = edit or ("TOGGLE %d\\n" if write else "PING\\n",)
            per_request = 1
        else:
            cmds = redis_edit if write or edit else ("PING\\r\\n",)
            per_request = replies if edit else 1
        with env.server(kind, aof=write or bool(edit), big_list=bool(edit),
                        long_list=long_list, sync=sync, extra=extra).start() as srv:
            res = env.run_loadgen("redis" if kind == "redis" else "sectiond", srv.sock,
                                  ["--server-pid", str(srv.proc.pid),
                                   "rps", "-c", str(p["conns"]), "-d", str(depth),
                                   "-t", str(p["seconds"]), "-w", str(p["warmup"]),
                                   "--replies", str(per_request)]
                                  + [arg for cmd in cmds for arg in ("--cmd", cmd)],
                                  timeout=p["seconds"] + p["warmup"] + p["timeout"])
            if srv.proc.poll() is not None:
                raise RuntimeError(f"{kind} died during the run: {srv.log_tail()}")
        if res["errors"]:
            raise RuntimeError(f"{res['errors']} error replies")
        return res["rps"], res
    measure.peer = peer
    return measure


def client_throughput(depth, pipeline=False):
    """50 SectionClient connections (AsyncClient, Sources/client-load) sending
    TOGGLE <i> with `depth` in flight each, against bench/loadgen.c sending the same on the
    same daemon (write_c50_d1's sectiond side): what the library costs next to the protocol.
    The peer is the C generator. The requests come from `depth` tasks per connection, each
    waiting for its reply; with `pipeline`, from one task per connection sending `depth` at
    once and waiting for them together (`perform(each:)`)."""
    c_generator = throughput(depth, write=True)

    def measure(env, kind):
        if kind != "sectiond":
            return c_generator(env, "sectiond")
        if not env.client_load:
            raise Skip("no client-load binary")
        p = env.prof
        with env.server("sectiond").start() as srv:
            r = subprocess.run([env.client_load, "--socket", srv.sock, "-c", str(p["conns"]),
                                "-d", str(depth), "-t", str(p["seconds"]), "-w", str(p["warmup"])]
                               + (["--pipeline"] if pipeline else []),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=pin_to(env.loadgen_cpu),
                               timeout=p["seconds"] + p["warmup"] + p["timeout"])
            if r.returncode != 0:
                raise RuntimeError(f"client-load failed ({r.returncode}): {r.stderr.strip()}")
            if srv.proc.poll() is not None:
                raise RuntimeError(f"sectiond died during the run: {srv.log_tail()}")
        res = json.loads(r.stdout.strip().splitlines()[-1])
        if res["errors"]:
            raise RuntimeError(f"{res['errors']} error replies")
        return res["rps"], res
    measure.peer = "C loadgen"
    return measure


def client_events(env, kind):
    """One SectionClient event sequence (client-load --events) follows the daemon
    while bench/loadgen.c toggles as fast as it can (50 x 16 in flight). The figure is the
    events consumed per second; a snapshot after the first means the consumer fell behind and
    the daemon skipped events for it (the details count them)."""
    if kind != "sectiond":
        raise Skip("sectiond only")
    if not env.client_load:
        raise Skip("no client-load binary")
    p = env.prof
    seconds = max(p["seconds"], 0.5)
    with env.server(kind).start() as srv:
        consumer = subprocess.Popen(
            [env.client_load, "--events", "--socket", srv.sock, "-t", str(seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=pin_to(env.loadgen_cpu))
        time.sleep(0.2)
        flood = env.run_loadgen("sectiond", srv.sock,
                                ["rps", "-c", str(p["conns"]), "-d", "16",
                                 "-t", str(seconds + 0.5), "-w", "0", "--cmd", "TOGGLE %d\\n"],
                                timeout=seconds + 0.5 + p["timeout"])
        try:
            out, err = consumer.communicate(timeout=p["timeout"])
        except subprocess.TimeoutExpired:
            consumer.kill()
            out, err = consumer.communicate()
            raise RuntimeError("the event consumer did not finish: fewer events than the run lasted?")
        if consumer.returncode != 0:
            raise RuntimeError(f"client-load --events failed: {err.decode(errors='replace').strip()}")
    res = json.loads(out.decode().strip().splitlines()[-1])
    res["produced_rps"] = flood["rps"]
    return res["rate"], res


def read_latency_under_flood(env, kind):
    """Four control clients flood TOGGLEs (2,000 in flight each, as fast as
    the daemon answers); one read-only client sends LIST, waits for the reply, and again.
    The figure is the 99th percentile of those LIST round trips: a read waits for one save
    at most, however many changes are pipelined."""
    if kind != "sectiond":
        raise Skip("sectiond only")
    p = env.prof
    seconds = max(p["seconds"], 0.5)
    with env.server(kind).start() as srv:
        flood = subprocess.Popen(
            env.loadgen_argv("sectiond", srv.sock,
                             ["rps", "-c", "4", "-d", "2000", "-t", str(seconds + 1.0), "-w", "0",
                              "--cmd", "TOGGLE %d\\n"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=pin_to(env.loadgen_cpu))
        waits = []
        try:
            time.sleep(0.3)
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(p["timeout"])
                # The read-only socket is named after the control socket (s.sock: s.readonly.sock).
                s.connect(srv.sock[:-len(".sock")] + ".readonly.sock")
                end = time.monotonic() + seconds
                data = b""
                while time.monotonic() < end:
                    t0 = time.monotonic()
                    s.sendall(b"LIST\n")
                    while not (data.startswith(b"OK") or b"\nOK" in data):
                        chunk = s.recv(1 << 16)
                        if not chunk:
                            raise RuntimeError("sectiond closed the reader's connection")
                        data += chunk
                    waits.append((time.monotonic() - t0) * 1e3)
                    data = b""
        finally:
            out, err = flood.communicate(timeout=seconds + p["timeout"])
        if flood.returncode != 0:
            raise RuntimeError(f"flooding loadgen failed: {err.decode(errors='replace').strip()}")
        if srv.proc.poll() is not None:
            raise RuntimeError(f"sectiond died during the run: {srv.log_tail()}")
    waits.sort()
    p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
    return p99, dict(lists=len(waits), median_ms=statistics.median(waits), max_ms=waits[-1],
                     flood=json.loads(out.decode().strip().splitlines()[-1]))


def fanout(subs_key, reps_key):
    def measure(env, kind):
        p = env.prof
        with env.server(kind).start() as srv:
            res = env.run_loadgen(kind, srv.sock,
                                  ["fanout", "-s", str(p[subs_key]), "-r", str(p[reps_key])],
                                  timeout=p["timeout"] * 4)
        # loadgen_busy_ms shows how much of the figure the load generator's own
        # reading accounts for (one thread reading every subscriber)
        return res["median_ms"], res
    return measure


def read_line(proc, timeout):
    """One line of proc.stdout within timeout (select on the pipe)."""
    import select
    deadline = time.monotonic() + timeout
    buf = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
        if b"\n" in buf:
            return buf.decode(errors="replace")
    return buf.decode(errors="replace")


def idle_conn_memory(env, kind):
    p = env.prof
    k = p["idle_conns"]
    with env.server(kind).start() as srv:
        time.sleep(p["settle"])
        base = srv.rss_kib()
        argv = env.loadgen_argv(kind, srv.sock, ["idle", "-k", str(k),
                                                 "--hold-max", str(p["timeout"] * 2)])
        lg = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, preexec_fn=pin_to(env.loadgen_cpu))
        try:
            line = read_line(lg, p["timeout"] * 2)
            if not line.startswith("ready"):
                lg.kill()
                _, err = lg.communicate(timeout=10)
                raise RuntimeError(f"loadgen idle: {err.decode(errors='replace').strip()}")
            time.sleep(p["settle"])
            loaded = srv.rss_kib()
            lg.stdin.write(b"\n")
            lg.stdin.flush()
            out, err = lg.communicate(timeout=p["timeout"])
            if lg.returncode != 0:
                raise RuntimeError(f"loadgen idle failed: {err.decode(errors='replace').strip()}")
        finally:
            if lg.poll() is None:
                lg.kill()
                lg.wait()
    return (loaded - base) * 1024.0 / k


def list_rss(env, kind):
    """RSS with the 1,000 x 100 list loaded, after a LIST and a VIEW of it were served."""
    if kind != "sectiond":
        raise Skip("sectiond only")
    with env.server(kind, big_list=True).start() as srv:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(srv.sock)
            s.sendall(b"OPEN ALL\nLIST\nVIEW\nQUIT\n")
            while s.recv(1 << 20):
                pass
        time.sleep(env.prof["settle"])
        return srv.rss_kib() / 1024.0


def idle_rss(env, kind):
    with env.server(kind, demo=True).start() as srv:
        time.sleep(env.prof["settle"])
        return srv.rss_kib() / 1024.0


def startup(env, kind):
    """exec to READY=1 on a test-owned NOTIFY_SOCKET; median of startup_n."""
    t = env.tmp
    npath = f"{t}/notify.sock"
    if os.path.exists(npath):
        os.unlink(npath)
    if kind == "sectiond":
        argv, sock = env.sectiond_argv(demo=True), f"{t}/s.sock"
        # a state left by an earlier scenario (the 2 MB list's) is not what start-up measures
        for leftover in (f"{t}/state.json", f"{t}/state.json.journal"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    else:
        argv, sock = env.redis_argv(extra=["--supervised", "systemd"]), f"{t}/r.sock"
    os.makedirs(f"{t}/redis-data", exist_ok=True)
    env_vars = dict(os.environ, NOTIFY_SOCKET=npath)
    samples = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as ns:
        ns.bind(npath)
        for i in range(env.prof["startup_n"]):
            ns.setblocking(False)
            try:
                while True:
                    ns.recv(4096)
            except BlockingIOError:
                pass
            log_f = open(f"{t}/{kind}-startup.log", "ab")
            t0 = time.monotonic()
            proc = subprocess.Popen(argv, env=env_vars, stdin=subprocess.DEVNULL, stdout=log_f,
                                    stderr=subprocess.STDOUT)
            ready = None
            deadline = t0 + NOTIFY_WAIT
            try:
                while ready is None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    ns.settimeout(left)
                    try:
                        msg = ns.recv(4096)
                    except socket.timeout:
                        break
                    if b"READY=1" in msg.split(b"\n") or msg.startswith(b"READY=1"):
                        ready = time.monotonic()
                if ready is None:
                    code = proc.poll()
                    why = (f"exited with status {code}" if code is not None
                           else f"no READY=1 within {NOTIFY_WAIT:.0f} s")
                    raise Skip(f"{kind}: {why} (sd_notify support missing?)")
                samples.append((ready - t0) * 1e3)
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                log_f.close()
            # wait for the socket file to go (the daemon removes it on exit)
            end = time.monotonic() + 2
            while os.path.exists(sock) and time.monotonic() < end and kind == "sectiond":
                time.sleep(0.005)
    return statistics.median(samples)


# --------------------------------------------------------------------------
# the bounds the defaults set: the largest state they accept, the worst request

DEFAULT_TEXT_BYTES = 16 << 20  # sectiond --max-text-bytes
DEFAULT_ITEMS = 1_000_000      # --max-items
DEFAULT_SECTIONS = 10_000      # --max-sections
DEFAULT_REQUEST_CHANGES = 100_000  # --max-request-changes
RENDERED_LIMIT = 16 << 20      # SectionService.renderedLimit
BOUND_CONFIG = '{"sections":[{"id":"a","title":"A"}]}'


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_bound_states(t):
    """The largest states the default limits accept, written the way the daemon writes them:
    every character a `"` (two bytes in JSON, the worst escaping). Returns {name: (state,
    journal or None)}. Each lists the config's section "a" as saved, so a start saves nothing."""
    out = {}
    head = '{"format":2,"revision":%d,"mode":"multi","sections":{%s},\n"list":[\n'
    a_entry = '{"id":"a","title":"A","items":[],"origin":"config"}'
    # 1. a million items (the --max-items) of 16 quotes in 10,000 sections: the most strings
    nsec = DEFAULT_SECTIONS - 1
    ids = [f"s{n:04d}" for n in range(nsec)]
    per = (DEFAULT_TEXT_BYTES - 2 - nsec * 6) // DEFAULT_ITEMS
    item = json.dumps('"' * per)
    items = ",".join([item] * (DEFAULT_ITEMS // nsec))
    # 1b. the same with the history full: 1,000 changes of a section with an id as
    # long as a line allows, 4 MB of events, all kept (their revisions end at the state's)
    long_id = "h" + "x" * 3990
    history = ",\n".join(json.dumps(f"{rev} 2026-12-03T20:41:07.123Z socket 1000 4242 waybar "
                                     f"{'opened' if rev % 2 else 'closed'} {rev} 1 {long_id}")
                          for rev in range(1, 1001))
    for name, revision, tail in [("1M items of 16 quotes", 1, ""),
                                 ("the same with a full history", 1000, ',\n"history":[' + history + "]")]:
        path = f"{t}/bound-items-{revision}.json"
        with open(path, "w") as f:
            f.write(head % (revision, ",".join(['"a":null'] + [f'"{i}":null' for i in ids])))
            f.write(a_entry)
            for i in ids:
                f.write(',\n{"id":"%s","title":"\\"","items":[%s],"origin":"client"}' % (i, items))
            f.write('],\n"deleted":[],"edited":[]' + tail + "}\n")
        out[name] = (path, None)
    # 2. items of 4,000 quotes, and a journal just under the size that makes the next save
    # compact it (twice the state file), of ITEM SETs that rewrite them
    count = (DEFAULT_TEXT_BYTES - 2 - 4) // 4000
    path = f"{t}/bound-long.json"
    with open(path, "w") as f:
        f.write(head % (1, '"a":null,"big":null'))
        f.write(a_entry + ',\n{"id":"big","title":"\\"","items":[%s],"origin":"client"}'
                % ",".join([json.dumps('"' * 4000)] * count))
        f.write('],\n"deleted":[],"edited":[]}\n')
    out["4,194 items of 4,000 quotes"] = (path, None)
    size = os.path.getsize(path)
    journal = path + ".journal"
    with open(journal, "w") as f:
        rev, written, position = 1, 0, 0
        while written < 2 * size - 10_000:
            lines = []
            for _ in range(100):
                rev += 1
                text = chr(ord("a") + position // count % 26) + '"' * 3999
                lines.append(f"items {rev} 1 big {count} set {position % count} {text}\n")
                position += 1
            lines.append(f"commit {rev}\n")
            chunk = "".join(lines)
            f.write(chunk)
            written += len(chunk)
    out["the same with a journal of twice its size"] = (path, journal)
    return out


def bound_states(env):
    if not hasattr(env, "_bound_states"):
        env._bound_states = write_bound_states(env.tmp)
        with open(f"{env.tmp}/bound-config.json", "w") as f:
            f.write(BOUND_CONFIG)
    return env._bound_states


def start_with_state(env, state, journal):
    """Starts sectiond on a copy of `state` (and `journal`); returns (server, seconds from exec
    to the first PING answered, CPU seconds the daemon spent until then)."""
    t = env.tmp
    shutil.copyfile(state, f"{t}/state.json")
    if journal:
        shutil.copyfile(journal, f"{t}/state.json.journal")
    elif os.path.exists(f"{t}/state.json.journal"):
        os.unlink(f"{t}/state.json.journal")
    srv = Server("sectiond", env.sectiond_argv(config=f"{t}/bound-config.json"), f"{t}/s.sock",
                 f"{t}/sectiond.log", env.server_cpu)
    begun = time.monotonic()
    srv.start(timeout=120)
    took = time.monotonic() - begun
    return srv, took, proc_cpu_s(srv.proc.pid)


def load_bound_state(env, kind):
    """Exec to the first PING answered, with the largest states the default limits accept:
    the slowest of them. The details give each, with its size and rate."""
    if kind != "sectiond":
        raise Skip("sectiond only")
    worst, details = 0.0, {}
    for name, (state, journal) in bound_states(env).items():
        srv, took, cpu = start_with_state(env, state, journal)
        srv.stop()
        size = os.path.getsize(state) + (os.path.getsize(journal) if journal else 0)
        details[name] = dict(mb=round(size / 1e6, 1), seconds=round(took, 3), cpu_seconds=cpu,
                             mb_per_s=round(size / 1e6 / took, 1))
        log(f"    {name}: {size / 1e6:.1f} MB ready after {took * 1000:.0f} ms "
            f"(CPU {cpu:.2f} s, {size / 1e6 / took:.0f} MB/s)")
        worst = max(worst, took * 1000)
    return worst, details


def turn_of(path, head, last, timeout=60):
    """Sends `head` (a batch's lines), then `last` (the line that completes the request) on
    one connection and, at once, PING on another that was idle. The request's reply comes
    after its turn's save; the PING's after the work of the turn that reads it (replies that
    wait for nothing go out during the turn). Returns (the request's reply, the longer of the
    two waits in ms)."""
    with socket.socket(socket.AF_UNIX) as c, socket.socket(socket.AF_UNIX) as p:
        for s in (c, p):
            s.settimeout(timeout)
            s.connect(path)
        p.sendall(b"PING\n")
        p.recv(64)
        c.sendall(head)
        time.sleep(0.3)  # the batch's lines are read and kept before its END arrives
        begun = time.monotonic()
        c.sendall(last)
        p.sendall(b"PING\n")
        p.recv(64)
        pinged = time.monotonic() - begun
        reply = b""
        while not (reply.endswith(b"\n") and reply.rsplit(b"\n", 2)[-2][:3] in (b"OK", b"OK ", b"ERR")):
            chunk = c.recv(1 << 16)
            if not chunk:
                break
            reply += chunk
        replied = time.monotonic() - begun
        return reply.decode(errors="replace").strip().splitlines()[-1], max(pinged, replied) * 1000


def worst_turn(env, kind):
    """The longest loop turn the worst requests the defaults accept make (see `turn_of`): OPEN ALL / CLOSE ALL
    on 10,000 sections up to --max-request-changes, ITEM INSERTs into a section with a
    4,000-byte id up to what a request may render, and the first change after a start with
    the largest state (which writes the whole state file)."""
    if kind != "sectiond":
        raise Skip("sectiond only")
    t = env.tmp
    ids = ["L" * 4000] + [f"s{n}" for n in range(1, DEFAULT_SECTIONS)]
    with open(f"{t}/turn-config.json", "w") as f:
        json.dump({"sections": [{"id": i, "title": "T"} for i in ids]}, f)
    flips = DEFAULT_REQUEST_CHANGES // DEFAULT_SECTIONS
    per_line = 2 * (4000 + 30)
    candidates = [
        (f"BATCH of {flips} OPEN ALL / CLOSE ALL, 10,000 sections",
         b"BATCH\n" + b"OPEN ALL\nCLOSE ALL\n" * (flips // 2)),
        ("the same, 10,000 lines: refused at the bound",
         b"BATCH\n" + b"OPEN ALL\nCLOSE ALL\n" * 5000),
        (f"BATCH of {RENDERED_LIMIT // per_line:,} ITEM INSERT, 4,000-byte id",
         b"BATCH\n" + b"ITEM INSERT 0 end x\n" * (RENDERED_LIMIT // per_line)),
    ]
    worst, details = 0.0, {}
    srv = Server("sectiond", env.sectiond_argv(config=f"{t}/turn-config.json"), f"{t}/s.sock",
                 f"{t}/sectiond.log", env.server_cpu, cleanup=(f"{t}/state.json", f"{t}/state.json.journal"))
    with srv.start(timeout=60):
        for name, request in candidates:
            reply, took = turn_of(srv.sock, request, b"END\n")
            details[name] = dict(ms=round(took, 1), reply=reply[:60])
            log(f"    {name}: {took:.1f} ms ({reply[:50]})")
            worst = max(worst, took)
    state, journal = bound_states(env)["1M items of 16 quotes"]
    srv, _, _ = start_with_state(env, state, journal)
    try:
        name = "first change after a start with the largest state (whole state written)"
        reply, took = turn_of(srv.sock, b"", b"TOGGLE a\n")
        details[name] = dict(ms=round(took, 1), reply=reply[:60])
        log(f"    {name}: {took:.1f} ms ({reply[:50]})")
        worst = max(worst, took)
    finally:
        srv.stop()
    return worst, details


# name, label, unit, measure, runs key, better ("higher"/"lower"), target
SCENARIOS = [
    ("ping_c50_d1", "PING, 50 conns x 1 in flight", "req/s", throughput(1), "runs",
     "higher", ("ratio", 1.0)),
    ("ping_c50_d16", "PING, 50 conns x 16 in flight", "req/s", throughput(16), "runs",
     "higher", ("ratio", 1.0)),
    ("ping_floor_c50_d1", "PING, 50 x 1 / C floor server", "req/s", throughput(1, peer="floor"),
     "runs", "higher", ("ratio", 0.95)),
    ("ping_floor_c50_d16", "PING, 50 x 16 / C floor server", "req/s",
     throughput(16, peer="floor"), "runs", "higher", ("ratio", 0.75)),
    ("write_c50_d1", "TOGGLE i / INCR k (AOF), 50 x 1", "req/s", throughput(1, write=True),
     "runs", "higher", ("ratio", 1.0)),
    ("sync_c50_d1", "TOGGLE i --sync / INCR k (AOF always), 50 x 1", "req/s",
     throughput(1, write=True, sync=True), "runs", "higher", ("ratio", 1.0)),
    ("write_c50_d16", "TOGGLE i / INCR k (AOF), 50 x 16", "req/s", throughput(16, write=True),
     "runs", "higher", ("ratio", 1.5)),
    # keeping each change's history (the default, 1,000) should cost at most 5%
    ("history_cost_c50_d16", "TOGGLE i, 50 x 16 / the same --history 0", "req/s",
     throughput(16, write=True, peer="--history 0"), "runs", "higher", ("ratio", 0.95)),
    ("write_sync_c50_d16", "TOGGLE --sync / INCR fsync always, 50x16", "req/s",
     throughput(16, write=True, sync=True), "runs", "higher", ("ratio", 1.0)),
    ("client_toggle_c50_d1", "SectionClient TOGGLE i, 50 x 1 / C loadgen", "req/s",
     client_throughput(1), "runs", "higher", ("ratio", 0.9)),
    ("client_toggle_c50_d16", "SectionClient TOGGLE i, 50 x 16 / C loadgen", "req/s",
     client_throughput(16), "runs", "higher", ("ratio", 0.9)),
    ("client_pipeline_c50_d16", "SectionClient perform(each:) 16, 50 conns / C", "req/s",
     client_throughput(16, pipeline=True), "runs", "higher", ("ratio", 0.9)),
    ("client_events_rate", "SectionClient events consumed, TOGGLE flood", "ev/s", client_events,
     "other_runs", "higher", ("abs", 100000.0)),
    ("read_p99_flood4", "LIST p99 while 4 clients flood TOGGLE", "ms", read_latency_under_flood,
     "other_runs", "lower", ("abs", 50.0)),
    ("toggle_list_c50_d1", "TOGGLE i, 1000x100 list / INCR (AOF)", "req/s",
     throughput(1, edit=("TOGGLE %d\\n",)), "runs", "higher", ("ratio", 0.8)),
    ("insert_list_c50_d1", "INSERT 0 / DELETE in turn, 1000x100 / INCR", "req/s",
     throughput(1, edit=("INSERT 0 n%d New\\n", "DELETE n%d\\n")), "runs", "higher",
     ("ratio", 0.8)),
    ("insert_long_list_c50_d1", "INSERT 0 / DELETE in turn, 9900x10 / INCR", "req/s",
     throughput(1, edit=("INSERT 0 n%d New\\n", "DELETE n%d\\n"), long_list=True), "runs",
     "higher", ("ratio", 0.8)),
    ("batch_list_c50_d1", "BATCH INSERT+DELETE / MULTI 2xINCR EXEC", "req/s",
     throughput(1, edit=("BATCH\\nINSERT 0 n%d New\\nDELETE n%d\\nEND\\n",),
                redis_edit=("MULTI\\r\\nINCR a%d\\r\\nINCR b%d\\r\\nEXEC\\r\\n",), replies=4),
     "runs", "higher", ("ratio", 0.8)),
    ("item_insert_list_c50_d1", "ITEM INSERT i end, 1000x100 / INCR", "req/s",
     throughput(1, edit=("ITEM INSERT %d end new item\\n",)), "runs", "higher", ("ratio", 0.8)),
    ("list_rss_mib", "RSS, 1000x100 list, after LIST+VIEW", "MiB", list_rss, "other_runs",
     "lower", ("abs", 64.0)),
    ("fanout_1k", "fan-out to {fan1_subs} subs, median", "ms", fanout("fan1_subs", "fan1_reps"),
     "other_runs", "lower", ("ratio", 1.0)),
    ("fanout_9k", "fan-out to {fan9_subs} subs, median", "ms", fanout("fan9_subs", "fan9_reps"),
     "other_runs", "lower", ("ratio", 1.0)),
    ("idle_conn_mem", "memory per idle conn ({idle_conns})", "B/conn", idle_conn_memory,
     "other_runs", "lower", ("ratio", 1.0)),
    ("startup_ms", "start-up, exec to READY=1", "ms", startup, "other_runs", "lower",
     ("abs", 20.0)),
    ("idle_rss_mib", "idle RSS, demo config", "MiB", idle_rss, "other_runs", "lower",
     ("abs", 8.0)),
    ("load_bound_state_ms", "start-up, largest state the defaults accept", "ms", load_bound_state,
     "other_runs", "lower", ("abs", 2000.0)),
    ("worst_turn_ms", "longest loop turn, worst accepted request", "ms", worst_turn,
     "other_runs", "lower", ("abs", 1000.0)),
]


# --------------------------------------------------------------------------
# driver


def fmt_num(v, unit):
    if v is None:
        return "n/a"
    if unit in ("req/s", "ev/s"):
        return f"{v:,.0f}"
    if unit == "B/conn":
        return f"{v:,.0f} B"
    if unit == "MiB":
        return f"{v:.2f} MiB"
    if unit == "ms":
        return f"{v:.3f} ms"
    return f"{v:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--smoke", action="store_true", help="tiny counts, a few seconds (CI)")
    g.add_argument("--full", action="store_true", help="the real figures (default)")
    ap.add_argument("--json", default=os.path.join(BENCH, "out", "results.json"),
                    help="where to write the figures (default bench/out/results.json)")
    ap.add_argument("--runs", type=int, help="runs per throughput scenario (median)")
    ap.add_argument("--other-runs", type=int, help="runs per other scenario (median)")
    ap.add_argument("--only", help="comma-separated scenario names to run")
    ap.add_argument("--sectiond-bin", help="use this sectiond binary, do not build")
    ap.add_argument("--scratch-path", help="swift build --scratch-path for the release build")
    ap.add_argument("--no-build", action="store_true", help="do not run swift build")
    ap.add_argument("--allow-missing-sectiond", action="store_true",
                    help="exit 0 even when sectiond could not be built (redis side only)")
    ap.add_argument("--no-pin", action="store_true",
                    help="do not pin the server and the load generator to separate CPUs")
    ap.add_argument("--require-targets", action="store_true",
                    help="exit 1 when a target is missed")
    args = ap.parse_args()

    mode = "smoke" if args.smoke else "full"
    prof = dict(PROFILES[mode])
    if args.runs:
        prof["runs"] = args.runs
    if args.other_runs:
        prof["other_runs"] = args.other_runs
    only = set(args.only.split(",")) if args.only else None
    if only:
        unknown = only - {s[0] for s in SCENARIOS}
        if unknown:
            ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")

    t_begin = time.monotonic()
    redis = ensure_redis()
    sectiond = build_sectiond(args)
    if not sectiond:
        log("bench: SKIPPING the sectiond side: no sectiond binary (figures show n/a)")
    tmp = tempfile.mkdtemp(prefix="sectiond-bench-")
    loadgen = build_c("loadgen", tmp)
    floor = build_c("floor", tmp)  # the floor under sectiond's PING: reads lines, answers OK
    nofile = raise_nofile(max(prof["fan9_subs"], prof["idle_conns"]) * 2 + 1024)
    env = Env(args, prof, tmp, sectiond, redis, loadgen, floor)
    if sectiond and any(name.startswith("client_") and (not only or name in only)
                        for name, *_ in SCENARIOS):
        env.client_load = build_client_load(args)
    log(f"bench: {mode} run in {tmp}; RLIMIT_NOFILE={nofile[0]}; "
        f"server on cpu {env.server_cpu}, loadgen on cpu {env.loadgen_cpu}")

    load_before = os.getloadavg()[0]
    if load_before > 0.5 * (os.cpu_count() or 1):
        log(f"bench: note: load average {load_before:.2f} before the run; "
            "the machine is busy, expect noisy figures")
    results, broke = [], []
    try:
        for name, label, unit, measure, runs_key, better, target in SCENARIOS:
            if only and name not in only:
                continue
            label = label.format(**prof)
            runs = prof[runs_key]
            figs = {"sectiond": [], "redis": []}
            details = {"sectiond": [], "redis": []}
            notes = {}
            for r in range(runs):
                order = ["sectiond", "redis"] if r % 2 == 0 else ["redis", "sectiond"]
                for kind in order:
                    if kind in notes:
                        continue
                    if kind == "sectiond" and not sectiond:
                        notes[kind] = "no sectiond binary"
                        continue
                    try:
                        v = measure(env, kind)
                        if isinstance(v, tuple):
                            v, extra = v
                            details[kind].append(extra)
                        figs[kind].append(v)
                        log(f"  {name} run {r + 1}/{runs} {kind}: {fmt_num(v, unit)}")
                    except Skip as e:
                        notes[kind] = str(e)
                        log(f"  {name} {kind}: n/a: {e}")
                    except Exception as e:  # noqa: BLE001 - report and go on
                        notes[kind] = f"error: {e}"
                        broke.append(f"{name} {kind}: {e}")
                        log(f"  {name} {kind}: ERROR: {e}")
            med = {k: (statistics.median(v) if v else None) for k, v in figs.items()}
            s, rd = med["sectiond"], med["redis"]
            ratio = s / rd if s is not None and rd else None
            # bursty noise on shared machines hits both servers of one run alike:
            # the median of the per-run ratios is the steadier figure
            pairs = [a / b for a, b in zip(figs["sectiond"], figs["redis"]) if b]
            paired = statistics.median(pairs) if pairs else None
            kind_t, val = target
            peer = getattr(measure, "peer", "redis")
            if kind_t == "ratio":
                tgt = f"{'>=' if better == 'higher' else '<='} {val:.2g}x {peer}"
                if ratio is None:
                    met = None
                else:
                    met = ratio >= val if better == "higher" else ratio <= val
            else:
                tgt = f"{'>=' if better == 'higher' else '<='} {val:g} {unit}"
                met = None if s is None else (s >= val if better == "higher" else s <= val)
            results.append(dict(name=name, scenario=label, unit=unit, better=better, peer=peer,
                                sectiond=s, redis=rd, ratio=ratio, paired_ratio=paired,
                                target=tgt, met=met,
                                sectiond_runs=figs["sectiond"], redis_runs=figs["redis"],
                                notes=notes, loadgen=details))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # the table
    head = ("scenario", "sectiond", "peer", "ratio", "target", "met?")
    rows = []
    for r in results:
        rows.append((r["scenario"], fmt_num(r["sectiond"], r["unit"]),
                     fmt_num(r["redis"], r["unit"]),
                     "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}x", r["target"],
                     "n/a" if r["met"] is None else ("yes" if r["met"] else "NO")))
    widths = [max(len(x[i]) for x in rows + [head]) for i in range(len(head))]
    line = lambda cells: "| " + " | ".join(  # noqa: E731
        c.ljust(w) if i == 0 or i == 4 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    ) + " |"
    print(f"\nsectiond vs redis-server or the C floor server ({mode}; medians of {prof['runs']} "
          f"runs for throughput, {prof['other_runs']} for the rest; ratio = sectiond / peer)")
    print(line(head))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))
    if mode == "smoke":
        print(SMOKE_NOTE)
    paired = [f"{r['name']} {r['paired_ratio']:.2f}x" for r in results
              if r["paired_ratio"] is not None and len(r["sectiond_runs"]) > 1]
    if paired:
        print("  median of per-run ratios: " + ", ".join(paired))
    for r in results:
        cpu = {k: [d["server_cpu_us_per_request"] for d in r["loadgen"][k]
                   if d.get("server_cpu_us_per_request", -1) > 0] for k in ("sectiond", "redis")}
        r["server_cpu_us_per_request"] = {k: (statistics.median(v) if v else None)
                                          for k, v in cpu.items()}
        if cpu["sectiond"] and cpu["redis"]:
            a, b = statistics.median(cpu["sectiond"]), statistics.median(cpu["redis"])
            print(f"  {r['name']}: server CPU per request sectiond {a:.2f} us, redis {b:.2f} us"
                  f" ({a / b:.2f}x; steadier than throughput on a busy machine)")
    for r in results:
        busy = {k: [d["loadgen_busy_ms"] for d in r["loadgen"][k] if "loadgen_busy_ms" in d]
                for k in ("sectiond", "redis")}
        if busy["sectiond"] or busy["redis"]:
            parts = [f"{k} {statistics.median(v):.3f} ms" for k, v in busy.items() if v]
            print(f"  {r['name']}: the load generator itself spent " + ", ".join(parts)
                  + " per repetition reading the events (a floor under both figures)")
    load_after = os.getloadavg()[0]
    if max(load_before, load_after) > 0.5 * (os.cpu_count() or 1):
        print(f"  note: load average {load_before:.2f} before, {load_after:.2f} after "
              "(the bench itself adds about 1-2): figures are noisy")
    for r in results:
        for kind, note in r["notes"].items():
            print(f"  note: {r['name']} {kind}: {note}")
    sys.stdout.flush()

    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
    except OSError:
        pass
    doc = dict(
        mode=mode, profile=prof, seconds=round(time.monotonic() - t_begin, 1),
        machine=dict(platform=platform.platform(), cpu=cpu, cpus=os.cpu_count(),
                     loadavg_before=load_before, loadavg_after=os.getloadavg(),
                     pinned=env.server_cpu is not None),
        versions=dict(redis=version([redis, "--version"]),
                      sectiond=version([sectiond, "--version"]) if sectiond else None),
        results=results, errors=broke,
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"figures written to {args.json} ({doc['seconds']} s)")

    # what counts as broken: an error in any scenario, a missing table row,
    # or no sectiond at all (unless allowed)
    expected = [s[0] for s in SCENARIOS if not only or s[0] in only]
    if [r["name"] for r in results] != expected:
        broke.append("the table is missing scenarios")
    for r in results:
        if r["redis"] is None and "redis" not in r["notes"]:
            broke.append(f"{r['name']}: no redis figure")
        if sectiond and r["sectiond"] is None and "sectiond" not in r["notes"]:
            broke.append(f"{r['name']}: no sectiond figure")
    if not sectiond and not args.allow_missing_sectiond:
        broke.append("sectiond could not be built (use --allow-missing-sectiond to accept)")
    if broke:
        log("bench: FAILED:\n  " + "\n  ".join(broke))
        return 1
    if args.require_targets and any(r["met"] is False for r in results):
        log("bench: targets missed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
