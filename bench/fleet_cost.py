#!/usr/bin/env python3
"""What one TOGGLE costs a fleet's hosts, in user-space instructions and in syscalls: h0, the
host the client talks to (it makes the change and commits it to etcd), and h1, a host that
applies it from its watch.

Wall-clock and /proc figures swing on a shared machine; these do not. A fleet of two hosts on
the etcd lab's three members (Tests/System/lib/etcd_lab.py, fleet_lab.py, as bench/fleet_bench.py
starts one, with its list of 50 sections) runs with both hosts under valgrind --tool=callgrind
(or strace -c -f), and bench/loadgen sends N TOGGLEs through h0, one connection, one in flight;
once h1 has applied the last one, both hosts are stopped. That is done for N1 and then N2
TOGGLEs, each on a fleet of its own (a fresh prefix on the same members); the difference
between the two runs divided by N2 - N1 is the cost of a TOGGLE on each host, start-up,
joining and shutdown cancelling out. What a host does by the clock (a lease's keep-alive, the
state file's once-a-second fsync) stays in the figure for the longer run's extra time, as it
would in a host's day: the script prints how long each run took, and a loaded machine, slower
under callgrind, makes the figures larger (h1's most: it does little else).

The hosts run sectiond-fleet directly (what `sectiond --etcd` execs): valgrind would otherwise
have to follow the exec. valgrind 3.19 cannot read the DWARF of the toolchain's release build,
so the script runs copies made with `objcopy --strip-debug`, which keeps the symbols.

Usage: python3 bench/fleet_cost.py --sectiond-fleet PATH (a release build's, as docs/PERFORMANCE.md
           says) [--n1 100] [--n2 400] [--tools callgrind,strace] [--callgrind-out DIR]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (build_c, ROOT)
from ping_cost import syscall_counts, total_instructions  # noqa: E402

sys.path.insert(0, os.path.join(bench.ROOT, "Tests", "System", "lib"))
from etcd_lab import EtcdLab, LabUnavailable  # noqa: E402
from fleet_lab import FleetLab  # noqa: E402

SECTIONS = 50
HOSTS = ("h0", "h1")
# Each host's tool output is named by this variable, which the fleet lab sets per host.
OUTPUT_VARIABLE = "FLEET_COST_OUT"


def host_wrapper(directory, binary, tool):
    """An executable `sectiond` in `directory` that runs `binary` under `tool`, its output in the
    file that the host's $FLEET_COST_OUT names: what the fleet lab starts as each host."""
    if tool == "callgrind":
        command = f'valgrind --tool=callgrind --callgrind-out-file="${OUTPUT_VARIABLE}"'
    else:
        command = f'strace -c -f -o "${OUTPUT_VARIABLE}"'
    path = os.path.join(directory, "sectiond")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nexec {command} {binary} "$@"\n')
    os.chmod(path, 0o755)
    return path


def stop_host(host, tool):
    """SIGTERM to the daemon itself, so that it exits as it would: under strace that is the
    tracer's child (strace passes no SIGTERM on, and would leave it running, detached)."""
    pid = host.pid
    children = f"/proc/{pid}/task/{pid}/children"
    if tool == "strace" and os.path.exists(children):
        pid = int((open(children).read().split() or [pid])[0])
    os.kill(pid, signal.SIGTERM)
    host.daemon.proc.wait(timeout=120)


def run_once(etcd, tool, count, args, tmp):
    """A fresh fleet of two hosts under `tool` for `count` TOGGLEs through h0: each host's total
    (instructions, or syscalls and their counts by name)."""
    outputs = {name: os.path.join(tmp, f"{tool}.{name}.n{count}") for name in HOSTS}
    config = json.dumps({"mode": "multi", "sections": [{"title": f"S{i}", "items": ["a"]} for i in range(SECTIONS)]})
    fleet = FleetLab(etcd, hosts=len(HOSTS), configs=[config] * len(HOSTS),
                     environment={i: {OUTPUT_VARIABLE: outputs[name]} for i, name in enumerate(HOSTS)})
    fleet.start(timeout=300)
    try:
        h0 = fleet.hosts[0]
        began = time.monotonic()
        subprocess.run([args.loadgen, "--proto", "sectiond", "--socket", h0.socket, "rps", "-c", "1", "-d", "1",
                        "-n", str(count), "-w", "0", "--timeout", "300", "--cmd", "TOGGLE %d\\n"],
                       check=True, stdout=subprocess.DEVNULL)
        fleet.converged(timeout=300)  # h1 has applied the last TOGGLE
        seconds = time.monotonic() - began
        for host in fleet.hosts:
            stop_host(host, tool)
    finally:
        fleet.stop()
    figures = {}
    for name, path in outputs.items():
        text = open(path).read()
        if tool == "callgrind":
            figures[name] = (total_instructions(text), {})
            if args.callgrind_out:
                os.makedirs(args.callgrind_out, exist_ok=True)
                shutil.copy(path, os.path.join(args.callgrind_out, f"callgrind.{name}.n{count}"))
        else:
            figures[name] = syscall_counts(text)
    return figures, seconds


def started_lab():
    """The etcd lab's three members, started; None, with a SKIP line, when etcd is missing."""
    try:
        return EtcdLab().start()
    except LabUnavailable as reason:
        print(f"SKIP fleet_cost: {reason}", flush=True)
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sectiond-fleet", required=True, help="a release sectiond-fleet")
    parser.add_argument("--tools", default="callgrind,strace")
    parser.add_argument("--n1", type=int, default=100)
    parser.add_argument("--n2", type=int, default=400)
    parser.add_argument("--callgrind-out", help="keep the callgrind files here (for callgrind_annotate)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fc") as tmp:
        args.loadgen = bench.build_c("loadgen", tmp)
        binary = os.path.join(tmp, "sectiond-fleet")
        subprocess.run(["objcopy", "--strip-debug", args.sectiond_fleet, binary], check=True)
        etcd = started_lab()
        if etcd is None:
            return 77
        try:
            for tool in args.tools.split(","):
                directory = os.path.join(tmp, tool)
                os.mkdir(directory)
                host_wrapper(directory, binary, tool)
                os.environ["BUILD_DIR"] = directory  # the fleet lab's hosts are this wrapper
                first, seconds1 = run_once(etcd, tool, args.n1, args, tmp)
                second, seconds2 = run_once(etcd, tool, args.n2, args, tmp)
                # What a host does by the clock (its poll of the head every 2 s, the state
                # file's fsync every second) counts for this much more time in the longer run:
                # a machine that other work slows makes the figures larger.
                print(f"{tool}: the {args.n2} TOGGLEs took {seconds2:.1f} s, the {args.n1} {seconds1:.1f} s "
                      f"({(seconds2 - seconds1) * 1e3 / (args.n2 - args.n1):.1f} ms a TOGGLE)", flush=True)
                for name in HOSTS:
                    per = (second[name][0] - first[name][0]) / (args.n2 - args.n1)
                    if tool == "callgrind":
                        print(f"{name}: {per:,.1f} instructions a TOGGLE", flush=True)
                        continue
                    calls1, calls2 = first[name][1], second[name][1]
                    diffs = {n: (calls2.get(n, 0) - calls1.get(n, 0)) / (args.n2 - args.n1) for n in calls2}
                    detail = ", ".join(f"{n} {v:.2f}" for n, v in sorted(diffs.items(), key=lambda kv: -kv[1])
                                       if v >= 0.005)
                    print(f"{name}: {per:.2f} syscalls a TOGGLE ({detail})", flush=True)
        finally:
            etcd.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
