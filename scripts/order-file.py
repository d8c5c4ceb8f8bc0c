#!/usr/bin/env python3
"""Regenerate Sources/sectiond/sectiond.order, the link order of the release daemon.

Why: Linux maps a program's code 64 KiB at a time around each page it touches
(fault-around), so the idle daemon's resident set depends less on how much code
runs than on how widely that code is spread over the 4 MB of text (most of it
the statically linked Swift runtime). The release link (Package.swift) hands
this file to lld as --symbol-ordering-file, which puts every function listed
here next to the others: the code of start-up and of the request path then
shares a few dozen pages instead of touching windows all over the binary.

How: build the daemon as `make install` does, run it under callgrind (which
records every function that executes, not a sample) through start-up, a mix of
requests on two connections, a reload and a clean stop, and list the functions
of the sectiond binary that ran. Re-run it after changes that add or rename
much code: names missing from the file are only left where the linker puts
them, so a stale file costs memory, never correctness.

Usage: python3 scripts/order-file.py [--output PATH]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUTPUT = os.path.join(ROOT, "Sources", "sectiond", "sectiond.order")

# What the daemon is asked while callgrind watches: every verb, an error, a subscriber.
REQUESTS = [
    b"PING", b"VERSION", b"HELP", b"LIST", b"VIEW", b"ITEMS 0", b"OPEN 0", b"OPEN 1",
    b"TOGGLE 0", b"CLOSE ALL", b"OPEN ALL", b"MODE", b"MODE exclusive", b"OPEN 2",
    b"MODE multi", b"TOGGLE first", b"NOSUCHVERB", b"OPEN 99", b"RELOAD", b"LIST",
    # Runtime edits; a batch is one request line here (its lines get no reply of their own).
    b"INSERT 0 news News", b"ITEM INSERT news end hello", b"ITEM SET news 0 hi", b"ITEM MOVE 0 0 0",
    b"RENAME news Latest", b"MOVE news 2", b"ITEMS news", b"ITEM DELETE news 0", b"DELETE news",
    b"BATCH\nINSERT end b B\nITEM INSERT b end x\nDELETE b\nEND", b"LIST",
]


def ensure_valgrind():
    if shutil.which("valgrind"):
        return
    subprocess.run(["apt-get", "install", "-y", "-qq", "valgrind"], check=True,
                   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def build():
    subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib",
                    "--product", "sectiond"], cwd=ROOT, check=True)
    out = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(out, "sectiond")


def connect(path, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.settimeout(30)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def read_until_status(sock, buffer):
    """Reads lines until a status line (OK/ERR); returns what is left after it."""
    while True:
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.startswith((b"OK", b"ERR")):
                return buffer
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("sectiond closed the connection")
        buffer += chunk


def exercise(path):
    subscriber = connect(path)
    subscriber.sendall(b"SUBSCRIBE\n")
    read_until_status(subscriber, b"")
    client = connect(path)
    rest = b""
    for request in REQUESTS:
        client.sendall(request + b"\n")
        rest = read_until_status(client, rest)
    client.sendall(b"QUIT\n")
    client.close()
    subscriber.close()


def executed_functions(profile, binary_name):
    """Names of the functions callgrind saw run in the binary (its name compression undone)."""
    objects, names, functions = {}, {}, set()
    current_object = None
    line_pattern = re.compile(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$")
    with open(profile, errors="replace") as f:
        for line in f:
            m = line_pattern.match(line)
            if not m:
                continue
            kind, ident, name = m.groups()
            table = objects if kind.endswith("ob") else names
            if name:
                table[ident] = name
            if kind == "ob":
                current_object = objects[ident]
            elif kind == "fn" and os.path.basename(current_object or "") == binary_name:
                functions.add(names[ident])
    # Unnamed code shows as an address and "(below main)" is valgrind's own label.
    return sorted(n for n in functions if not n.startswith(("0x", "(")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", default=DEFAULT_OUTPUT)
    args = ap.parse_args()
    ensure_valgrind()
    built = build()
    with tempfile.TemporaryDirectory(prefix="order-", dir="/tmp") as tmp:
        # valgrind 3.19 gives up on the toolchain's DWARF ("possibly corrupted debuginfo"): a
        # copy without it keeps the symbols, which are all the order file needs.
        stripped = os.path.join(tmp, "sectiond")
        subprocess.run(["objcopy", "--strip-debug", built, stripped], check=True)
        binary = stripped
        profile = os.path.join(tmp, "callgrind.out")
        sock = os.path.join(tmp, "s.sock")
        daemon = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={profile}",
             binary, "--socket", sock, "--state", os.path.join(tmp, "state.json")],
            stderr=subprocess.DEVNULL)
        try:
            exercise(sock)
            daemon.send_signal(signal.SIGHUP)
            time.sleep(1)
            exercise(sock)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        functions = executed_functions(profile, os.path.basename(binary))
    if len(functions) < 100:
        sys.exit(f"order-file: only {len(functions)} functions recorded; is callgrind working?")
    with open(args.output, "w") as f:
        f.write("".join(name + "\n" for name in functions))
    # SwiftPM does not know the link reads this file: remove the binary so the next build relinks.
    os.remove(built)
    print(f"order-file: {len(functions)} functions written to {os.path.relpath(args.output)}")


if __name__ == "__main__":
    main()
