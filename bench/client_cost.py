#!/usr/bin/env python3
"""What the client library costs a program, in user-space instructions.

Wall-clock ratios at one request in flight swing with the machine by more than the library's
share; instruction counts do not. A sectiond is started (not under the tool), and
Sources/client-load runs under valgrind --tool=callgrind against it for a few seconds with
50 connections: the instructions of the library's I/O thread (the reactor, where the tasks
that prefer it run too) over the number of times it read a socket. At one request in flight a
read carries one reply, so that is the cost of a request; pipelined, a read carries several,
and the figure compares builds, not requests.

valgrind 3.19 cannot read the toolchain's DWARF, nor start a client-load linked against the
toolchain's shared runtime: build it with --static-swift-stdlib; a copy made with
`objcopy --strip-debug` (which keeps the symbols) is what runs.

Usage: python3 bench/client_cost.py --client-load PATH --sectiond PATH
           [--depth 1,16] [--pipeline] [--seconds 2]

  swift build -c release --product client-load --static-swift-stdlib --scratch-path /tmp/cs
  python3 bench/client_cost.py --client-load /tmp/cs/release/client-load \\
      --sectiond .build/release/sectiond
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from ping_cost import wait_for_socket

# The reactor thread's entry (Posix.Thread.start's closure) and Link.readAvailable(into:).
THREAD = r"\$s5Posix6ThreadV5start\w*_To"
READ = r"\$s13SectionClient4LinkC13readAvailable4into\w*F"


def measure(binary, sock, depth, pipeline, seconds, tmp):
    """Instructions on the reactor's thread per read, and the number of reads."""
    out = os.path.join(tmp, f"callgrind.{depth}{'p' if pipeline else ''}")
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "--socket", sock,
         "-c", "50", "-d", str(depth), "-t", str(seconds), "-w", "0.3"] + (["--pipeline"] if pipeline else []),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=seconds * 60 + 120)
    if run.returncode != 0:
        sys.exit(f"client_cost: client-load under callgrind failed: {run.stderr.strip()[-2000:]}")
    errors = json.loads(run.stdout.strip().splitlines()[-1])["errors"]
    if errors:
        sys.exit(f"client_cost: {errors} error replies")
    tree = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=calling", out],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    thread = re.search(r"^\s*([\d,]+) \([^)]*\)\s+\*\s+\?\?\?:" + THREAD + " ", tree, re.M)
    reads = re.findall(r">\s+\?\?\?:" + READ + r" \(([\d,]+)x\)", tree)
    if not thread or not reads:
        sys.exit("client_cost: the reactor's thread or Link.readAvailable is not in the profile "
                 "(renamed, or inlined?)")
    count = sum(int(r.replace(",", "")) for r in reads)
    return int(thread.group(1).replace(",", "")) / count, count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client-load", required=True)
    parser.add_argument("--sectiond", required=True)
    parser.add_argument("--depth", default="1,16")
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_annotate", "objcopy"):
        if not shutil.which(tool):
            sys.exit(f"client_cost: {tool} is not installed (apt-get install valgrind binutils)")
    with tempfile.TemporaryDirectory(prefix="cc") as tmp:
        binary = os.path.join(tmp, "client-load")
        subprocess.run(["objcopy", "--strip-debug", args.client_load, binary], check=True)
        config = os.path.join(tmp, "sections.json")
        with open(config, "w") as f:
            json.dump({"mode": "multi",
                       "sections": [{"title": f"S{i}", "items": ["a"]} for i in range(50)]}, f)
        sock = os.path.join(tmp, "s.sock")
        daemon = subprocess.Popen([args.sectiond, "--socket", sock, "--state", f"{tmp}/state.json",
                                   "--config", config, "--max-clients", "10000"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_socket(sock, daemon, who="client_cost")
            for depth in (int(d) for d in args.depth.split(",")):
                per_read, reads = measure(binary, sock, depth, args.pipeline, args.seconds, tmp)
                how = "perform(each:)" if args.pipeline else "a task per request"
                print(f"50 x {depth} ({how}): {per_read:,.0f} instructions a read, {reads:,} reads")
        finally:
            daemon.terminate()
            daemon.wait()


if __name__ == "__main__":
    main()
