#!/usr/bin/env python3
"""What one request costs the server, in user-space instructions and in syscalls.

Wall-clock figures swing by several times on a shared machine; these do not. Each server
(the release sectiond, and the C floor of bench/floor.c) is started twice under
valgrind --tool=callgrind and twice under strace -c -f, driven by bench/loadgen with 50
connections at the given depth for N1 and then N2 PINGs; the difference between the two
runs divided by N2 - N1 is the cost of a PING, start-up and shutdown cancelling out.
`--cmd 'TOGGLE %d\\n'` measures another request instead (as bench/loadgen's --cmd: %d is
the connection's number); the floor answers every line alike.

valgrind 3.19 cannot read the DWARF of the toolchain's release build ("possibly corrupted
debuginfo file"): give it a copy made with `objcopy --strip-debug`, which keeps the symbols.

Usage: python3 bench/ping_cost.py --sectiond PATH --loadgen PATH --floor PATH
           [--depth 1,16] [--n1 20000] [--n2 60000] [--callgrind-out DIR] [--cmd LINE]
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time


def wait_for_socket(path, proc, timeout=60.0, who="ping_cost"):
    """Waits until `proc`, a server, accepts on `path` (client_cost.py uses it too)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{who}: server exited with {proc.returncode}")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(path)
                return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"{who}: {path} never accepted a connection")


def total_instructions(text):
    """The instructions a callgrind output file counts in all (bench/fleet_cost.py reads it too)."""
    return int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))


def syscall_counts(text):
    """An `strace -c` summary's system calls: (their total, {name: calls})."""
    calls = {}
    for line in text.splitlines():
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    return sum(calls.values()), calls


def server_argv(kind, args, tmp):
    if kind == "floor":
        return [args.floor, "--socket", f"{tmp}/s.sock"]
    config = os.path.join(tmp, "sections.json")
    with open(config, "w") as f:
        json.dump({"mode": "multi", "sections": [{"title": f"S{i}", "items": ["a"]} for i in range(50)]}, f)
    return [args.sectiond, "--socket", f"{tmp}/s.sock", "--state", f"{tmp}/state.json", "--config", config]


def run_once(kind, tool, depth, count, args):
    """Runs the server under `tool` for `count` PINGs; returns (instructions or syscalls)."""
    with tempfile.TemporaryDirectory(prefix="pc") as tmp:
        out = os.path.join(tmp, "tool.out")
        if tool == "callgrind":
            wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        else:
            wrapper = ["strace", "-c", "-f", "-o", out]
        proc = subprocess.Popen(wrapper + server_argv(kind, args, tmp),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_socket(f"{tmp}/s.sock", proc)
            subprocess.run([args.loadgen, "--proto", "sectiond", "--socket", f"{tmp}/s.sock", "rps",
                            "-c", "50", "-d", str(depth), "-n", str(count), "-w", "0",
                            "--timeout", "300"] + (["--cmd", args.cmd] if args.cmd else []),
                           check=True, stdout=subprocess.DEVNULL)
        finally:
            # The server itself, not strace: strace does not pass SIGTERM on.
            children = f"/proc/{proc.pid}/task/{proc.pid}/children"
            pids = open(children).read().split() if tool == "strace" and os.path.exists(children) else []
            os.kill(int(pids[0]) if pids else proc.pid, signal.SIGTERM)
            proc.wait(timeout=120)
        text = open(out).read()
        if tool == "callgrind":
            if args.callgrind_out:
                os.makedirs(args.callgrind_out, exist_ok=True)
                name = f"callgrind.{kind}.d{depth}.n{count}"
                with open(os.path.join(args.callgrind_out, name), "w") as f:
                    f.write(text)
            return total_instructions(text), {}
        return syscall_counts(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sectiond", required=True)
    parser.add_argument("--loadgen", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--depth", default="1,16")
    parser.add_argument("--servers", default="sectiond,floor")
    parser.add_argument("--tools", default="callgrind,strace")
    parser.add_argument("--n1", type=int, default=20000)
    parser.add_argument("--n2", type=int, default=60000)
    parser.add_argument("--callgrind-out", help="keep the callgrind files here (for callgrind_annotate)")
    parser.add_argument("--cmd", help="the request line to measure instead of PING (bench/loadgen's --cmd)")
    args = parser.parse_args()
    for depth in [int(d) for d in args.depth.split(",")]:
        for kind in args.servers.split(","):
            for tool in args.tools.split(","):
                first, calls1 = run_once(kind, tool, depth, args.n1, args)
                second, calls2 = run_once(kind, tool, depth, args.n2, args)
                per = (second - first) / (args.n2 - args.n1)
                unit = "instructions" if tool == "callgrind" else "syscalls"
                detail = ""
                if calls2:
                    diffs = {name: (calls2.get(name, 0) - calls1.get(name, 0)) / (args.n2 - args.n1)
                             for name in calls2}
                    detail = " (" + ", ".join(f"{n} {v:.3f}" for n, v in sorted(diffs.items(), key=lambda kv: -kv[1])
                                              if v >= 0.005) + ")"
                figure = f"{per:,.1f}" if tool == "callgrind" else f"{per:.3f}"
                request = args.cmd.split()[0] if args.cmd else "PING"
                print(f"{kind} depth {depth}: {figure} {unit} a {request}{detail}", flush=True)


if __name__ == "__main__":
    main()
