"""Three sectiond sharing one list through an etcd lab (Tests/System/lib/etcd_lab.py): the
harness of the fleet's suites (docs/FLEET.md).

    with EtcdLab(partition=True) as etcd, FleetLab(etcd) as fleet:
        fleet.hosts[0].request("TOGGLE 1")          # ["section 1 beta open 3 Beta", "OK 5"]
        watch = fleet.hosts[1].subscribe()          # SUBSCRIBE; watch.revision is its OK's
        watch.events_until(5)                       # the events up to revision 5, in order
        fleet.hosts[2].status()["fleet-revision"]   # STATUS as a dict
        fleet.hosts[0].kill(); fleet.hosts[0].start()

Each host is the `$BUILD_DIR/sectiond` binary with its own directory (sockets, state file,
config) under the etcd lab's directory, started with `--etcd` its own member's URL first and the
others after it, `--host-name hN` and one `--etcd-prefix /tRANDOM/` for the fleet, so that fleets
never meet. In the partition mode the daemons run in the lab's network namespace (they reach the
members' URLs there; their Unix sockets are paths, reached from here as always). Each daemon gets
SIGKILL if the test's process dies (setpriv --pdeathsig), and the etcd lab's guard removes the
directory, so a killed test leaves nothing behind.

Host 0 starts first, so that it seeds the empty prefix from its config; the others start once it
answers, and adopt the shared list. start() returns when every host has applied the same
revision (converged()).
"""

import os
import secrets
import shutil
import signal
import sys
import tempfile
import time

from etcd_lab import EtcdLab, LabUnavailable, stop_processes
from sdlib import Client, Daemon, config_json, known_parts, require_binary, run_parts

SECTIONS = ["alpha", "beta", "gamma", "delta"]


class FleetError(Exception):
    """The fleet did not do what the harness waited for: says what, and each host's log's end."""


class Subscription:
    """A connection that sent SUBSCRIBE (or SUBSCRIBE FROM rev) and collects the events after it."""

    def __init__(self, path, since=None, timeout=10):
        self.client = Client(path, timeout=timeout)
        reply = self.client.request("SUBSCRIBE" if since is None else f"SUBSCRIBE FROM {since}")
        if not reply[-1].startswith("OK"):
            self.client.close()
            raise FleetError(f"{path}: SUBSCRIBE answered {reply}")
        self.state = next((line for line in reply if line.startswith("state ")), None)
        self.revision = int(reply[-1].split()[1])
        self.events = []  # SUBSCRIBE FROM's replay comes after its OK, then the live events

    def next_event(self, timeout):
        """The next event line, or None when none came within `timeout` seconds."""
        self.client.sock.settimeout(max(0.001, timeout))
        try:
            while True:
                line = self.client.readline()
                if line is None:
                    raise FleetError("the daemon closed the subscription")
                if line.startswith("!"):
                    self.events.append(line)
                    return line
        except TimeoutError:
            return None

    def events_until(self, revision, timeout=10):
        """Every event collected, once one of them has `revision` or later; FleetError when none has
        within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not any(event_revision(e) is not None and event_revision(e) >= revision for e in self.events):
            left = deadline - time.monotonic()
            if left <= 0 or self.next_event(left) is None:
                raise FleetError(f"no event of revision {revision} within {timeout} s; got {self.events}")
        return list(self.events)

    def close(self):
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()


def event_revision(event):
    """The revision an event line carries (`!opened 7 1 beta` → 7), or None (`!restart`, `!bye`)."""
    words = event.split()
    return int(words[1]) if len(words) > 1 and words[1].isdigit() else None


class Host:
    """One sectiond of the fleet; a sdlib.Daemon under the hood (its directory, log, process)."""

    def __init__(self, fleet, index, config):
        self.fleet = fleet
        self.index = index
        self.name = f"h{index}"
        directory = os.path.join(fleet.directory, self.name)
        os.mkdir(directory, 0o700)
        urls = fleet.urls.get(index) or fleet.etcd.urls[index:] + fleet.etcd.urls[:index]  # its own member first
        arguments = ["--etcd", ",".join(urls), "--host-name", self.name, "--etcd-prefix", fleet.prefix]
        arguments += list(fleet.extra_args) + list(fleet.host_args.get(index, ()))
        wrapper = fleet.etcd.netns_command() if fleet.etcd.partition else []
        wrapper += ["setpriv", "--pdeathsig=SIGKILL"]  # gone with the test's process
        self.daemon = Daemon(config=config, extra_args=arguments, wrapper=wrapper, directory=directory)
        self.daemon.environment.update(fleet.environment.get(index, {}))
        self.socket = self.daemon.socket
        self.readonly_socket = self.daemon.readonly_socket

    def start(self, timeout=30):
        """Starts the daemon (again, after kill(): same directory, state file and arguments) and
        returns once it answers PING."""
        self.daemon.start(timeout=timeout)
        return self

    def kill(self, sig=signal.SIGKILL):
        """Sends `sig` and waits for the daemon's end (SIGKILL by default)."""
        return self.daemon.kill(sig)

    def alive(self):
        return self.daemon.alive()

    @property
    def pid(self):
        return self.daemon.pid

    def connect(self, timeout=10, readonly=False):
        """A protocol client on the host's control socket (or its read-only one)."""
        return self.daemon.connect(timeout=timeout, readonly=readonly)

    def request(self, *lines, timeout=15):
        """One request on a connection of its own (a BATCH as its lines): its reply's lines."""
        with self.connect(timeout=timeout) as client:
            return client.request(*lines)

    def subscribe(self, since=None, timeout=10):
        return Subscription(self.socket, since=since, timeout=timeout)

    def status(self):
        """STATUS as a dict: key → the rest of its line (`fleet-revision`, `fleet-member`, ...)."""
        reply = self.request("STATUS")
        if not reply[-1].startswith("OK"):
            raise FleetError(f"{self.name}: STATUS answered {reply}")
        return dict(line.split(" ", 2)[1:] for line in reply[:-1] if line.startswith("status ") and line.count(" ") >= 2)

    def revision(self):
        """The revision the host has applied, as LIST's OK says."""
        return int(self.request("LIST")[-1].split()[1])

    def log(self):
        return self.daemon.log()


class FleetLab:
    def __init__(self, etcd, hosts=3, configs=None, extra_args=(), urls=None, host_args=None, environment=None):
        """`etcd`: a started EtcdLab. `configs`: each host's config (JSON text); by default all the
        same list of four sections, so that only the seeding tells whose was used. `extra_args`:
        every host's further arguments; `urls`, `host_args`, `environment`: dicts by host index of
        its --etcd URLs instead of the members' (a gate in front of one, lib/etcd_gate.py), its own
        further arguments (--bus session) and variables added to its environment."""
        self.etcd = etcd
        self.count = hosts
        self.configs = configs or [config_json(SECTIONS)] * hosts
        self.extra_args = extra_args
        self.urls = urls or {}
        self.host_args = host_args or {}
        self.environment = environment or {}
        self.prefix = f"/t{secrets.token_hex(6)}/"
        self.directory = None
        self.hosts = []

    def start(self, timeout=30):
        self.directory = tempfile.mkdtemp(prefix="f", dir=self.etcd.directory)
        try:
            self.hosts = [Host(self, i, self.configs[i]) for i in range(self.count)]
            self.hosts[0].start(timeout)  # seeds the empty prefix
            for host in self.hosts[1:]:
                host.start(timeout)
            self.converged(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def converged(self, timeout=15, hosts=None):
        """Waits until the hosts (all by default) have joined the fleet and applied the same
        revision, and returns it."""
        hosts = self.hosts if hosts is None else hosts
        deadline = time.monotonic() + timeout
        while True:
            try:
                statuses = [host.status() for host in hosts]
                joined = all(status.get("fleet-state") != "joining" for status in statuses)
                revisions = [int(status["fleet-revision"]) for status in statuses] if joined else None
            except (OSError, ValueError, IndexError, KeyError, FleetError):
                revisions = None
            if revisions and len(set(revisions)) == 1:
                return revisions[0]
            if time.monotonic() > deadline:
                raise FleetError(f"the hosts did not converge within {timeout} s: revisions {revisions}\n" + self.logs())
            time.sleep(0.05)

    def logs(self, lines=5):
        """The end of each host's log, for a failure's message."""
        return "\n".join(
            f"{host.name}: " + " | ".join(host.log().splitlines()[-lines:]) for host in self.hosts
        )

    def stop(self):
        """SIGTERM to every host, SIGKILL to one still there 5 s on; the directory removed."""
        stop_processes([host.daemon.proc for host in self.hosts if host.daemon.proc is not None])
        self.hosts = []
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *_):
        self.stop()



def run_fleet_suite(name, parts, argv, lab, etcd_options=None, fleet_options=None):
    """A fleet suite's main: the named parts of `parts` (all without names, as sdlib.run_parts)
    run on one etcd lab (EtcdLab(**etcd_options)) and one fleet on it (FleetLab(etcd,
    **fleet_options)), which the parts find in the dict `lab` ("etcd", "fleet"); both stopped
    after them. Without etcd: one SKIP line and 77 (skipped, for scripts/test.sh); a fleet that
    does not start is one failure. Returns the exit status."""
    require_binary()
    known_parts(parts, argv)
    try:
        lab["etcd"] = EtcdLab(**(etcd_options or {})).start()
    except LabUnavailable as reason:
        print(f"SKIP {name}: {reason}", flush=True)
        return 77
    try:
        try:
            lab["fleet"] = FleetLab(lab["etcd"], **(fleet_options or {})).start()
        except (FleetError, RuntimeError, OSError) as error:
            print(f"FAIL the fleet of three sectiond starts: {error}", flush=True)
            print("0 passed, 1 failed", flush=True)
            return 1
        return run_parts(parts, argv)
    finally:
        if "fleet" in lab:
            lab.pop("fleet").stop()
        lab.pop("etcd").stop()
