#!/usr/bin/env python3
"""`make fleet`: one list on three hosts, on this machine, for a person to watch a change go
everywhere (docs/FLEET.md). Starts three etcd members on loopback (Tests/System/lib/etcd_lab.py,
free ports, a temporary directory) and three sectiond, alpha, beta and gamma, each with its own
sockets and state in a directory of its own under /tmp (short: a socket path must fit sun_path's
108 bytes) and its own member first in its --etcd list; prints how to watch and change each,
then waits. Ctrl-C (or SIGTERM, or the terminal closing) stops the daemons, then the members,
and removes both directories: nothing is left. Should this process be killed outright, its
children still go (PR_SET_PDEATHSIG: SIGTERM to the daemons, SIGKILL to the members), but the
directories stay.

    scripts/fleet.py [SECTIOND ARGUMENTS...]    # default: --config examples/sections.json

The binaries are $BUILD_DIR's (default .build/debug; `make fleet` builds them first). Alpha
starts first, so its config seeds the shared list; beta and gamma adopt it. Their logs are in
the directory (it prints where). The last line it prints before waiting starts with "ready:";
Tests/System/suites/fleet-demo.py reads it. Exits 1, naming the cause, when etcd is missing or a
daemon does not come up; 0 after a stop.
"""

import ctypes
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "System", "lib"))
from etcd_lab import EtcdLab, LabUnavailable, stop_processes  # noqa: E402
from sdlib import Client  # noqa: E402

HOSTS = ("alpha", "beta", "gamma")
PR_SET_PDEATHSIG = 1
# A debug daemon on a loaded 2-core machine: its first contact with etcd, and for alpha the seed.
READY_SECONDS = 60


class Stop(Exception):
    """A signal asked us to stop (SIGTERM, SIGHUP; SIGINT is KeyboardInterrupt)."""


def _stop_on_signal(*_):
    raise Stop()


def _daemon_dies_with_us():
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def build_dir():
    path = os.environ.get("BUILD_DIR", ".build/debug")
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def fleet_status(socket_path):
    """The fleet-* facts of the daemon's STATUS, or None while it does not answer."""
    try:
        with Client(socket_path, timeout=5) as client:
            lines = client.request("STATUS")
    except OSError:
        return None
    facts = dict(line.split(" ", 2)[1:] for line in lines if line.startswith("status ") and line.count(" ") >= 2)
    return {key: value for key, value in facts.items() if key.startswith("fleet-")}


class Fleet:
    def __init__(self, arguments):
        self.arguments = arguments
        self.lab = EtcdLab()
        self.directory = None
        self.daemons = {}
        self.logs = {}

    def socket(self, host):
        return os.path.join(self.directory, host, "control.sock")

    def log_tail(self, host, lines=5):
        try:
            with open(self.logs[host], errors="replace") as log:
                return "\n    ".join(log.read().splitlines()[-lines:]) or "(empty log)"
        except OSError:
            return "(no log)"

    def start_daemon(self, index, host):
        os.makedirs(os.path.join(self.directory, host), mode=0o700)
        members = self.lab.urls[index:] + self.lab.urls[:index]  # its own member first
        command = [
            os.path.join(build_dir(), "sectiond"), "--etcd", ",".join(members), "--host-name", host,
            "--socket", self.socket(host), "--state", os.path.join(self.directory, host, "state.json"),
            *self.arguments,
        ]  # fmt: skip
        self.logs[host] = os.path.join(self.directory, host + ".log")
        with open(self.logs[host], "w") as log:
            self.daemons[host] = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=ROOT, preexec_fn=_daemon_dies_with_us
            )

    def wait_ready(self, hosts):
        """Waits until each host answers STATUS in fleet mode and is up to date with etcd."""
        deadline = time.monotonic() + READY_SECONDS
        waiting = list(hosts)
        while waiting:
            for host in list(waiting):
                process = self.daemons[host]
                if process.poll() is not None:
                    raise RuntimeError(f"sectiond {host} exited with {process.returncode}:\n    {self.log_tail(host)}")
                status = fleet_status(self.socket(host))
                if status and status.get("fleet-stale-since") == "-":
                    waiting.remove(host)
            if waiting and time.monotonic() > deadline:
                raise RuntimeError(
                    f"sectiond {', '.join(waiting)} not up to date with etcd after {READY_SECONDS} s:\n    "
                    + "\n    ".join(self.log_tail(host) for host in waiting)
                )
            time.sleep(0.1)

    def start(self):
        self.lab.start()
        self.directory = tempfile.mkdtemp(prefix="sectiond-fleet.", dir="/tmp")
        self.start_daemon(0, HOSTS[0])
        self.wait_ready(HOSTS[:1])  # alpha seeds the list from its config
        for index, host in enumerate(HOSTS[1:], start=1):
            self.start_daemon(index, host)
        self.wait_ready(HOSTS[1:])

    def banner(self):
        ctl = os.path.join(build_dir(), "sectionctl")
        if os.path.commonpath([ctl, os.getcwd()]) == os.getcwd():  # as make run prints it
            ctl = os.path.relpath(ctl)
        lines = [
            f"make fleet: one list on three hosts; etcd members (pids {' '.join(str(p.pid) for p in self.lab.processes)}):",
            f"  {','.join(self.lab.urls)}",
        ]
        for host in HOSTS:
            lines.append(f"  {host:<6} pid {self.daemons[host].pid:<7} socket {self.socket(host)}")
        alpha, beta, gamma = (shlex.quote(self.socket(host)) for host in HOSTS)
        lines += [
            "in other terminals:",
            f"  {ctl} -s {beta} watch          # beta's subscribers",
            f"  {ctl} -s {gamma} watch         # gamma's",
            f"  {ctl} -s {alpha} toggle 1      # a change through alpha: both see it, same revision",
            f"  {ctl} -s {gamma} log           # the history names the host (sectionctl@alpha)",
            f"  {ctl} -s {beta} status         # its fleet-* facts: state, member, revision, whose config",
            f"  kill -STOP {self.lab.processes[1].pid}       # freeze beta's member: a change on beta is answered within 10 s,"
            " taken through another member or refused (ERR UNAVAILABLE); reads go on (kill -CONT thaws it)",
            f"  etcdctl --endpoints={self.lab.urls[0]} get --prefix /sectiond/ --keys-only",
            f"logs: {self.directory}/{{{','.join(HOSTS)}}}.log",
            f"ready: {' '.join(HOSTS)} in {self.directory}, etcd in {self.lab.directory}"
            " (Ctrl-C stops everything and removes both)",
        ]
        print("\n".join(lines), flush=True)

    def watch(self):
        """Until a signal: reports a daemon that exits on its own (the others keep serving)."""
        reported = set()
        while True:
            for host, process in self.daemons.items():
                if host not in reported and process.poll() is not None:
                    reported.add(host)
                    print(f"sectiond {host} exited with {process.returncode}:\n    {self.log_tail(host)}", flush=True)
            time.sleep(0.5)

    def stop(self):
        """The daemons first (a change they are committing still reaches etcd), then the members."""
        stop_processes(list(self.daemons.values()), grace=10)
        # Nothing in the members is worth a graceful stop, which takes etcd seconds once its
        # peers are gone (5 s, the lab's grace, at every Ctrl-C).
        for index in range(len(self.lab.processes)):
            self.lab.kill(index)
        self.lab.stop()
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)


def main():
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop_on_signal)
    # sectiond --etcd execs sectiond-fleet beside it (docs/FLEET-DESIGN.md, "The fleet's binary").
    for name in ("sectiond", "sectiond-fleet"):
        binary = os.path.join(build_dir(), name)
        if not os.access(binary, os.X_OK):
            print(f"fleet: no {binary}: build first (make fleet does, or swift build)", file=sys.stderr)
            return 1
    fleet = Fleet(sys.argv[1:] or ["--config", os.path.join(ROOT, "examples", "sections.json")])
    try:
        print("make fleet: starting three etcd members and three sectiond...", flush=True)
        fleet.start()
        fleet.banner()
        fleet.watch()
    except (KeyboardInterrupt, Stop):
        print("\nmake fleet: stopping", flush=True)
    except LabUnavailable as reason:
        print(f"fleet: {reason}", file=sys.stderr)
        return 1
    except RuntimeError as error:
        print(f"fleet: {error}", file=sys.stderr)
        return 1
    finally:
        # A second Ctrl-C while stopping must not leave half of it behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        fleet.stop()
    print("make fleet: stopped; nothing left", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
