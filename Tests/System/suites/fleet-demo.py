#!/usr/bin/env python3
"""`make fleet` (scripts/fleet.py) as a newcomer meets it: three etcd members and three sectiond
come up and print how to watch and change each host; the printed `toggle` on alpha reaches beta's
and gamma's subscribers with alpha's revision, and gamma's history names alpha; then a stop leaves
nothing behind: no process of the fleet's (the pids it printed, or anything naming its
directories) and neither directory. Stopped twice: as Ctrl-C does it (SIGINT to the whole
process group, the daemons and members included) and as a closed terminal or `timeout` does
(SIGTERM to the script alone).

Without etcd (Debian's etcd-server; scripts/deps.sh --test installs it): one SKIP line, exit 77.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from etcd_lab import ETCD  # noqa: E402
from sdlib import ROOT, Client, Results, build_dir  # noqa: E402

FLEET = os.path.join(ROOT, "scripts", "fleet.py")
READY = re.compile(r"^ready: alpha beta gamma in (\S+), etcd in (\S+) ")
HOSTS = ("alpha", "beta", "gamma")


class Output:
    """The script's output, read line by line with a deadline."""

    def __init__(self, process):
        self.process = process
        self.selector = selectors.DefaultSelector()
        self.selector.register(process.stdout, selectors.EVENT_READ)
        self.buffer = b""
        self.lines = []

    def until(self, predicate, seconds):
        """Reads lines until one satisfies `predicate` (returned), the end of output or the deadline (None)."""
        deadline = time.monotonic() + seconds
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                self.lines.append(line.decode(errors="replace"))
                if predicate(self.lines[-1]):
                    return self.lines[-1]
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                return None
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buffer += chunk

    def printed_line(self, host_socket, ending):
        """The command the banner printed on the host's socket that ends with `ending`, as text
        for a shell (what a person pastes), or None."""
        for line in self.lines:
            command = line.split("#")[0].strip()
            if f" -s {host_socket} " in command and command.endswith(ending):
                return command
        return None


def shell(command):
    return subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=30)


def leftovers(directories, pids):
    """Processes still there that the fleet started: a printed pid, or a command line naming a directory."""
    found = [pid for pid in pids if os.path.exists(f"/proc/{pid}")]
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in found:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                words = cmdline.read().decode(errors="replace")
        except OSError:
            continue
        if any(directory in words for directory in directories):
            found.append(int(entry))
    return found


def change_goes_everywhere(results, output, directory):
    sockets = {host: os.path.join(directory, host, "control.sock") for host in HOSTS}
    toggle = output.printed_line(sockets["alpha"], " toggle 1")
    status = output.printed_line(sockets["beta"], " status")
    watch = [output.printed_line(sockets[host], " watch") for host in ("beta", "gamma")]
    results.check(toggle and status and all(watch), "the banner names watch, toggle and status on the hosts' sockets",
                  "\n".join(output.lines))
    if not toggle:
        return
    subscribers = {host: Client(sockets[host], timeout=15) for host in ("beta", "gamma")}
    try:
        for client in subscribers.values():
            client.request("SUBSCRIBE")
        done = shell(toggle)
        results.check(done.returncode == 0, "the printed toggle on alpha succeeds", done.stdout + done.stderr)
        with Client(sockets["alpha"]) as alpha:
            revision = int(alpha.request("STATUS")[-1].split()[-1])
        seen = {host: client.events_until(revision) for host, client in subscribers.items()}
        results.check(
            seen["beta"] == seen["gamma"] and int(seen["beta"][-1].split()[1]) == revision,
            "beta's and gamma's subscribers get the same events, up to alpha's revision", f"alpha at {revision}, {seen}"
        )
        with Client(sockets["gamma"]) as gamma:
            history = gamma.request("HISTORY 1")[0]
        results.check(history.split()[1] == str(revision) and "@alpha" in history,
                      "gamma's history names the host the change came through", history)
    finally:
        for client in subscribers.values():
            client.close()
    etcdctl = next((line.strip() for line in output.lines if line.strip().startswith("etcdctl ")), None)
    if shutil.which("etcdctl") and results.check(etcdctl, "the banner names an etcdctl line"):
        done = shell(etcdctl)
        results.check(done.returncode == 0 and "/sectiond/default/head" in done.stdout.split(),
                      "the printed etcdctl line lists the fleet's keys", done.stdout[-300:] + done.stderr[-300:])
    if status:
        done = shell(status)
        results.check(done.returncode == 0 and re.search(r"^fleet-host: +beta$", done.stdout, re.M)
                      and re.search(r"^fleet-member: +http://", done.stdout, re.M),
                      "the printed status on beta names its fleet host and member", done.stdout + done.stderr)


def run_and_stop(results, how):
    process = subprocess.Popen(
        [sys.executable, FLEET], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True, env=dict(os.environ, BUILD_DIR=build_dir()),
    )  # fmt: skip
    output = Output(process)
    directories = []
    try:
        started = time.monotonic()
        ready = output.until(READY.match, 150)
        if not results.check(ready is not None, f"make fleet comes up ({how} run)", "\n".join(output.lines)):
            return
        print(f"   up in {time.monotonic() - started:.1f} s", flush=True)
        directories = list(READY.match(ready).groups())
        pids = [int(pid) for line in output.lines for pid in re.findall(r"\bpids? ((?:\d+ ?)+)", line) for pid in pid.split()]
        results.check(len(pids) == 6, "the banner names six pids: three members, three daemons", str(pids))
        if how == "ctrl-c":
            try:
                change_goes_everywhere(results, output, directories[0])
            except (OSError, ConnectionError, subprocess.TimeoutExpired) as error:
                results.check(False, "a change through alpha goes everywhere", f"{type(error).__name__}: {error}")
            os.killpg(process.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        else:
            process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        try:
            status = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            status = None
        output.until(lambda _: False, 2)
        results.check(status == 0 and "make fleet: stopped; nothing left" in output.lines,
                      f"{how}: the script stops and exits 0", f"status {status}, {output.lines[-3:]}")
        print(f"   stopped in {time.monotonic() - started:.1f} s", flush=True)
        left = leftovers(directories, pids)
        results.check(not left, f"{how}: no process of the fleet is left", str(left))
        there = [directory for directory in directories if os.path.exists(directory)]
        results.check(not there, f"{how}: its directories are gone", str(there))
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for directory in directories:
            shutil.rmtree(directory, ignore_errors=True)


def main():
    if not os.access(ETCD, os.X_OK):
        print("SKIP fleet-demo: no etcd binary: install etcd-server (scripts/deps.sh --test)")
        return 77  # skipped, for scripts/test.sh
    results = Results()
    for how in ("ctrl-c", "sigterm"):
        print(f"-- {how}", flush=True)
        run_and_stop(results, how)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
