#!/usr/bin/env python3
"""A group that lost its compare is run again (docs/FLEET-DESIGN.md, "One transaction per
group commit"): two sectiond on three etcd members, host 1 reaching etcd through a gate
(lib/etcd_gate.py) that holds its commit's txn until host 0 has committed, so that host 1's
compare fails for certain; its requests then run again on the newer state.

- bus-toggle: in exclusive mode, a D-Bus Toggle (busctl) on host 1 whose group lost to host 0's
  change: of the same section (host 0 opened it, the call closes it) and of another (the call
  opens its section and closes host 0's). The call is answered once, with what it did on the
  newer state and its revision; every host applied each change once, in the same order.
- batch-behind: a connection on host 1 sends a TOGGLE and a BATCH behind it in one read (the
  batch ended there, or its END sent while the group is sealed, or after); the group loses its
  compare: the TOGGLE and the batch run again in order, each answered once, nothing applied twice. Then the same BATCH with its END coming only after the
  group before it was committed, the batch's own group losing its compare: only the batch runs
  again (not the TOGGLE before it).

- watch-acknowledges: host 1's gate holds etcd's answers to its committed txns: its TOGGLEs are
  answered from its watch, which sends its entry back (the next one committed while the previous
  answer is still held); once the answers come they change nothing.

Host 1 runs with http_proxy and all_proxy set to a port where nothing listens: a fleet host
reaches its members directly (docs/FLEET-DESIGN.md, "The etcd client").

Needs etcd, dbus-daemon and busctl (else one SKIP line). Run one part: fleet-retry.py bus-toggle.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from etcd_gate import EtcdGate  # noqa: E402
from etcd_lab import EtcdLab, LabUnavailable  # noqa: E402
from fleet_lab import FleetError, FleetLab, event_revision  # noqa: E402
from sdlib import config_json, known_parts, require_binary, run_parts  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUS_CONFIG = os.path.join(ROOT, "bench", "dbus-private.conf.in")
POLICY = os.path.join(ROOT, "packaging", "dbus", "org.sectiond.Sectiond1.conf")
NAME = "org.sectiond.Sectiond1"
OBJECT = "/org/sectiond/Sectiond1"
SECTIONS = ["alpha", "beta", "gamma", "delta"]
LAB = {}
# Host 1 runs with proxies in its environment that lead nowhere: it reaches its member directly.
PROXIES = {name: "http://127.0.0.1:9" for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")}


class Bus:
    """A dbus-daemon of our own (bench/dbus-private.conf.in: a session bus's open policy)."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "bus")
        self.address = f"unix:path={self.path}"
        config = os.path.join(directory, "bus.conf")
        with open(config, "w") as f:
            f.write(open(BUS_CONFIG).read().replace("@SOCKET@", self.path).replace("@POLICY@", POLICY))
        self.process = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 10
        while not os.path.exists(self.path):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError("dbus-daemon did not start")
            time.sleep(0.02)

    def busctl(self, *arguments, timeout=20):
        return subprocess.run(["busctl", f"--address={self.address}", *arguments], capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip

    def call(self, method, *arguments):
        """busctl call on the daemon, started: a Popen whose output is the call's answer."""
        return subprocess.Popen(["busctl", f"--address={self.address}", "--timeout=20", "call", NAME, OBJECT, NAME,
                                 method, *arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Monitor:
    """busctl monitor on the bus, as JSON: every message the bus daemon passes, to count the
    answers to one call (a second return to the same call would show here)."""

    def __init__(self, bus):
        self.output = open(os.path.join(os.path.dirname(bus.path), "monitor.json"), "w+")
        self.process = subprocess.Popen(["busctl", f"--address={bus.address}", "--json=short", "monitor"],
                                        stdout=self.output, stderr=subprocess.DEVNULL)  # fmt: skip
        # It watches once it sees a call made after it started.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            bus.busctl("call", NAME, OBJECT, "org.freedesktop.DBus.Peer", "Ping")
            if any(m.get("member") == "Ping" for m in self.messages()):
                break
            time.sleep(0.1)

    def messages(self):
        self.output.seek(0)
        found = []
        for line in self.output.read().splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
        return found

    def answers_to(self, member):
        """The returns and errors of every call of `member` to the daemon, by the call's sender and
        cookie (a cookie is the sender's own count)."""
        messages = self.messages()
        calls = {(m.get("sender"), m.get("cookie")) for m in messages
                 if m.get("type") == "method_call" and m.get("member") == member and m.get("destination") == NAME}  # fmt: skip
        answers = {call: [] for call in calls}
        for m in messages:
            call = (m.get("destination"), m.get("reply_cookie"))
            if m.get("type") in ("method_return", "error") and call in answers:
                answers[call].append(m)
        return answers

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()
        self.output.close()


def lost_compare(gate, host1_change, host0_change, results, what):
    """Shuts host 1's gate, starts `host1_change` (which makes host 1 commit), waits until its txn
    is held, lets `host0_change` commit on host 0, opens the gate. Returns host0_change's reply."""
    gate.shut()
    try:
        started = host1_change()
        held = gate.wait_for(b"request_put")
        results.check(held, f"{what}: host 1's commit is held at its gate", "" if held else "no txn with a put within 5 s")
        reply = host0_change()
        results.check(reply[-1].startswith("OK "), f"{what}: meanwhile host 0 commits its change", str(reply))
    finally:
        gate.open()
    return started, reply


@contextlib.contextmanager
def subscribed(fleet):
    """A subscriber on every host (SUBSCRIBE), closed on leaving."""
    watches = [host.subscribe() for host in fleet.hosts]
    try:
        yield watches
    finally:
        for watch in watches:
            watch.close()


def same_everywhere(results, fleet, watches, first, what):
    """Every host applied the same revision, each subscriber got the same events from `first` on,
    without gaps; returns those events (host 0's)."""
    try:
        last = fleet.converged(timeout=20)
        streams = [watch.events_until(last) for watch in watches]
    except FleetError as error:
        results.check(False, f"{what}: every host applies the same revision", str(error))
        return []
    revisions = [event_revision(e) for e in streams[0]]
    results.check(revisions == list(range(first + 1, last + 1)), f"{what}: revisions {first + 1}-{last}, each once",
                  str(streams[0]))  # fmt: skip
    results.check(all(s == streams[0] for s in streams[1:]), f"{what}: every host's subscriber got the same events",
                  str(streams))  # fmt: skip
    return streams[0]


def open_sections(host):
    """The ids of the sections open on `host` (LIST)."""
    return [line.split()[2] for line in host.request("LIST")[:-1] if line.split()[3] == "open"]


def bus_toggle(results):
    fleet, gate, bus = LAB["fleet"], LAB["gate"], LAB["bus"]
    h0, h1 = fleet.hosts
    reply = h0.request("MODE exclusive")
    results.check(reply[-1].startswith("OK"), "the fleet's list goes exclusive", str(reply))
    owned = bus.busctl("status", NAME)
    results.check(owned.returncode == 0, "host 1 owns its bus name", owned.stderr if owned.returncode else "")
    monitor = Monitor(bus)
    try:
        for own, theirs, expect_open in (("alpha", "alpha", False), ("gamma", "beta", True)):
            what = f"Toggle {own} on host 1 behind host 0's OPEN {theirs}"
            fleet.converged()
            h0.request("CLOSE all")
            first = fleet.converged()
            with subscribed(fleet) as watches:
                call, reply = lost_compare(gate, lambda: bus.call("Toggle", "s", own),
                                           lambda: h0.request(f"OPEN {theirs}"), results, what)  # fmt: skip
                try:
                    answer = call.communicate(timeout=20)[0].split()
                except subprocess.TimeoutExpired:
                    call.kill()
                    answer = call.communicate()[0].split() + ["(no answer within 20 s)"]
                events = same_everywhere(results, fleet, watches, first, what)
            theirs_revision = int(reply[-1].split()[1])
            last = event_revision(events[-1]) if events else None
            results.check(answer == ["bt", "true" if expect_open else "false", str(last)],
                          f"{what}: the call answers what it did on the newer state, at the last revision",
                          f"{answer}, the events {events}")  # fmt: skip
            mine = [e for e in events if e.split()[-1] == own and event_revision(e) > theirs_revision]
            results.check(len(mine) == 1 and mine[0].startswith("!opened" if expect_open else "!closed"),
                          f"{what}: its change is applied once, after host 0's", str(events))  # fmt: skip
            expected = [own] if expect_open else []
            results.check(all(open_sections(h) == expected for h in fleet.hosts),
                          f"{what}: exclusive across the fleet, {expected} open on every host",
                          str([open_sections(h) for h in fleet.hosts]))  # fmt: skip
        time.sleep(0.3)  # the monitor's last lines
        answers = monitor.answers_to("Toggle")
        results.check(len(answers) == 2 and all(len(a) == 1 and a[0]["type"] == "method_return" for a in answers.values()),
                      "each Toggle call got one return on the bus", str({c: [m["type"] for m in a] for c, a in answers.items()}))  # fmt: skip
    finally:
        monitor.stop()


def read_replies(client, count, quiet=0.5):
    """`count` replies ("(no reply)" for one that did not come), then whatever more comes within
    `quiet` seconds (nothing, if each request is answered once)."""
    replies = []
    try:
        for _ in range(count):
            replies.append(client.read_reply())
    except TimeoutError:
        replies += [["(no reply)"]] * (count - len(replies))
        return replies, []
    extra = []
    client.sock.settimeout(quiet)
    try:
        while quiet:
            line = client.readline()
            if line is None:
                break
            extra.append(line)
    except TimeoutError:
        pass
    client.sock.settimeout(20)
    return replies, extra


def batch_behind(results):
    fleet, gate = LAB["fleet"], LAB["gate"]
    h0, h1 = fleet.hosts
    h0.request("MODE multi")
    h0.request("CLOSE all")
    # The TOGGLE and the BATCH come in one read, so that the batch is begun behind the group the
    # TOGGLE holds (a connection whose group is held is not read until its outcome): ended in
    # that read (the batch joins the group), or left open, its END sent while the group is
    # sealed (it waits in the socket) or only once the TOGGLE is answered.
    batch = "TOGGLE alpha\nBATCH\nTOGGLE beta\nTOGGLE gamma\n"
    for first_send, meanwhile, later in ((batch + "END\n", "", ""), (batch, "END\n", ""), (batch, "", "END\n")):
        what = ("TOGGLE alpha and a BATCH " + ("ended in the same read" if not (meanwhile or later) else
                "with its END sent while the group is sealed" if meanwhile else "with its END sent after"))  # fmt: skip
        first = fleet.converged()
        with subscribed(fleet) as watches, h1.connect(timeout=20) as client:

            def host0_change():
                if meanwhile:
                    client.send(meanwhile)
                    time.sleep(0.1)
                return h0.request("TOGGLE alpha")

            lost_compare(gate, lambda: client.send(first_send), host0_change, results, what)
            if later:
                first_reply = read_replies(client, 1, quiet=0)[0][0]
                client.send(later)
                replies, extra = read_replies(client, 1)
                replies.insert(0, first_reply)
            else:
                replies, extra = read_replies(client, 2)
            events = same_everywhere(results, fleet, watches, first, what)
        # host 0 opened alpha first: host 1's TOGGLE, run again, closes it; the batch opens
        # beta and gamma, once.
        toggled, batch = replies
        results.check(toggled[0].startswith("section 0 alpha closed") and toggled[-1].startswith("OK "),
                      f"{what}: the TOGGLE, run again, toggles what host 0 left", str(toggled))  # fmt: skip
        results.check(batch[-1].startswith("OK ") and int(batch[-1].split()[1]) > int(toggled[-1].split()[1]),
                      f"{what}: the batch runs after it, and is answered", str(batch))  # fmt: skip
        results.check(extra == [], f"{what}: each request is answered once", str(extra))
        opened = [e.split()[-1] for e in events if e.startswith("!opened")]
        results.check(sorted(opened) == ["alpha", "beta", "gamma"] and [e.split()[-1] for e in events].count("alpha") == 2,
                      f"{what}: every change applied once (alpha opened by host 0 and closed, beta and gamma opened)",
                      str(events))  # fmt: skip
        results.check(all(open_sections(h) == ["beta", "gamma"] for h in fleet.hosts),
                      f"{what}: beta and gamma open on every host", str([open_sections(h) for h in fleet.hosts]))  # fmt: skip
        h0.request("CLOSE all")

    # The batch begun behind a group that commits (the gate open), its END sent once the group
    # is through, and then its own group loses: only the batch's lines run again.
    what = "a BATCH begun behind a committed group, its own group losing"
    first = fleet.converged()
    with subscribed(fleet) as watches, h1.connect(timeout=20) as client:
        client.send("TOGGLE delta\nBATCH\nTOGGLE beta\n")
        toggled = client.read_reply()
        fleet.converged()

        def host0_change():
            return h0.request("TOGGLE beta")

        lost_compare(gate, lambda: client.send("TOGGLE gamma\nEND\n"), host0_change, results, what)
        replies, extra = read_replies(client, 1)
        events = same_everywhere(results, fleet, watches, first, what)
    results.check(toggled[-1].startswith("OK ") and replies[0][-1].startswith("OK ") and extra == [],
                  f"{what}: the TOGGLE and the batch are answered once each", f"{toggled} {replies} {extra}")  # fmt: skip
    ids = [e.split()[-1] for e in events]
    results.check(ids.count("delta") == 1 and ids.count("beta") == 2 and ids.count("gamma") == 1,
                  f"{what}: delta toggled once, beta by host 0 then the batch, gamma once", str(events))  # fmt: skip
    results.check(all(open_sections(h) == ["gamma", "delta"] for h in fleet.hosts),
                  f"{what}: gamma and delta open on every host (beta opened and closed)",
                  str([open_sections(h) for h in fleet.hosts]))  # fmt: skip


# A change is answered within 10 s, done or ERR UNAVAILABLE, whatever etcd does (docs/FLEET.md, "Failures").
CHANGE_LIMIT = 10.0
# How long the catch-up is kept from etcd: past that bound, so that a change waiting for it shows.
STALL = 12.0


def catch_up_fails(results):
    fleet, gate = LAB["fleet"], LAB["gate"]
    h0, h1 = fleet.hosts
    what = "a TOGGLE on host 1 whose group lost, the catch-up after it kept from etcd"
    h0.request("MODE multi")
    h0.request("CLOSE all")
    first = fleet.converged()
    with subscribed(fleet) as watches:
        with h1.connect(timeout=STALL + 10) as client:
            try:
                gate.shut()
                started = time.monotonic()
                client.send("TOGGLE delta\n")
                results.check(gate.wait_for(b"request_put"), f"{what}: host 1's commit is held at its gate")
                reply = h0.request("TOGGLE gamma")
                results.check(reply[-1].startswith("OK "), f"{what}: meanwhile host 0 commits its change", str(reply))
                # The commit goes on and loses its compare; the catch-up's txn that follows is held
                # (the poll's plain range passes: etcd answers, the host cannot catch up).
                gate.hold_only(b"request_range")
                client.sock.settimeout(STALL)
                try:
                    answer = client.read_reply()
                except TimeoutError:
                    answer = [f"(no answer within {STALL:.0f} s)"]
                took = time.monotonic() - started
                read_started = time.monotonic()
                listed = h1.request("LIST")
                read_took = time.monotonic() - read_started
            finally:
                gate.open()
        # The catch-up only reads: its timeout is no "may have been applied" (the change was not).
        refused = answer[-1].startswith("ERR UNAVAILABLE ") and "may have been applied" not in answer[-1]
        results.check((answer[-1].startswith("OK ") or refused) and took <= CHANGE_LIMIT,
                      f"{what}: answered within {CHANGE_LIMIT:.0f} s, done or ERR UNAVAILABLE", f"{answer} after {took:.1f} s")  # fmt: skip
        results.check(listed[-1].startswith("OK ") and read_took < 2.0, f"{what}: host 1 answers reads meanwhile",
                      f"{listed[-1]} after {read_took:.2f} s")  # fmt: skip
        events = same_everywhere(results, fleet, watches, first, what)
    ids = [e.split()[-1] for e in events]
    results.check(ids.count("gamma") == 1 and ids.count("delta") == (0 if refused else 1),
                  f"{what}: host 0's change applied once, host 1's {'not at all (refused)' if refused else 'once'}",
                  str(events))  # fmt: skip
    reply = h1.request("TOGGLE delta")
    results.check(reply[-1].startswith("OK "), f"{what}: once etcd is reachable, host 1 changes the list again",
                  str(reply))  # fmt: skip


def memory_kib(pid, field):
    """VmRSS (now) or VmHWM (the peak since reset_peak) of process `pid`, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def reset_peak(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")  # the peak RSS starts again from the RSS now


# What one batch may make a host hold for a retry: its limit (Batch.byteLimit, 1 MiB), its
# lines' newlines, one read past it; the rest is a debug build's and the heap's slack.
HELD_MARGIN_KIB = 6 * 1024
# Sent inside each unended batch: far past the margin.
FLOOD_BYTES = 24 << 20


def batch_bound(results):
    fleet = LAB["fleet"]
    h1 = fleet.hosts[1]
    revision = fleet.converged()
    for kind, line in (("lines past the batch's limit", "TOGGLE alpha " + "x" * 100), ("blank lines", " " * 100)):
        what = f"a BATCH of {FLOOD_BYTES >> 20} MB of {kind} on host 1"
        chunk = (line + "\n").encode() * ((1 << 20) // (len(line) + 1))
        with h1.connect(timeout=60) as client:
            client.request("PING")
            reset_peak(h1.pid)
            before = memory_kib(h1.pid, "VmRSS")
            client.send("BATCH\n")
            for _ in range(FLOOD_BYTES // len(chunk)):
                client.send(chunk)
            reply = client.request("END")
            grown = memory_kib(h1.pid, "VmHWM") - before
        results.check(reply[-1].startswith("ERR LIMIT ") and "batch size" in reply[-1],
                      f"{what}: refused at its END with ERR LIMIT", str(reply))  # fmt: skip
        results.check(grown < HELD_MARGIN_KIB, f"{what}: the host holds no more of it than the batch's limit allows",
                      f"RSS grew by {grown} KiB, at most {HELD_MARGIN_KIB} KiB")  # fmt: skip
    results.check(fleet.converged() == revision, "nothing was applied", f"revision {revision}")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# A host that waits for etcd does nothing: its CPU over a second of waiting stays far from a spin
# (faults.py's bound for a daemon that cannot accept).
WAIT_CPU = 0.10


def host1_closed():
    """The lab's fleet, gate and host 1, every section closed; and the revision all then have."""
    fleet, gate = LAB["fleet"], LAB["gate"]
    fleet.hosts[1].request("CLOSE all")
    return fleet, gate, fleet.hosts[1], fleet.converged()


def hangup_held(results):
    what = "a client gone while its TOGGLE is held for host 1's commit"
    fleet, gate, h1, first = host1_closed()
    with subscribed(fleet) as watches:
        gate.shut()
        try:
            with h1.connect() as client:
                client.send("TOGGLE beta\n")
                results.check(gate.wait_for(b"request_put"), f"{what}: host 1's commit is held at its gate")
            time.sleep(0.2)
            started, spent = time.monotonic(), cpu_seconds(h1.pid)
            time.sleep(1.0)  # well within the commit's 2 s attempt
            cpu = (cpu_seconds(h1.pid) - spent) / (time.monotonic() - started)
        finally:
            gate.open()
        results.check(cpu < WAIT_CPU, f"{what}: the host does not spin while it waits", f"CPU {cpu * 100:.0f}% over 1 s")
        events = same_everywhere(results, fleet, watches, first, what)
    results.check([e.split()[-1] for e in events] == ["beta"], f"{what}: the change is applied once", str(events))
    deadline = time.monotonic() + 5
    while (clients := int(h1.status().get("clients", "0").split()[0])) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    results.check(clients == 1, f"{what}: its connection is closed after (STATUS's own is the one left)",
                  f"{clients} clients")  # fmt: skip


# Well under the 2 s a host gives one attempt (Fleet.attemptTimeout), after which a txn without
# an answer is one of unknown outcome: answered later, by the fence.
ACK_BOUND = 1.5


def watch_acknowledges(results):
    what = "host 1's TOGGLEs while etcd's answers to its txns are held"
    fleet, gate, h1, first = host1_closed()
    with subscribed(fleet) as watches:
        gate.hold_answers(b'"succeeded":true')
        try:
            with h1.connect() as client:
                # The second commits while the first's answer is still held on its connection.
                for section in ("beta", "gamma"):
                    started = time.monotonic()
                    reply = client.request(f"TOGGLE {section}")
                    took = time.monotonic() - started
                    with gate.lock:
                        held = gate.held_answers
                    # No answer with "succeeded":true passes the gate now: the OK came from the
                    # watch (this TOGGLE's answer may not have reached the gate yet).
                    results.check(reply[-1].startswith("OK ") and took < ACK_BOUND,
                                  f"{what}: TOGGLE {section} is answered from the watch, its txn's answer held",
                                  f"{reply} after {took:.2f} s, {held} answers held at the gate")  # fmt: skip
        finally:
            gate.open()
        reply = h1.request("TOGGLE delta")
        results.check(reply[-1].startswith("OK "), f"{what}: once the answers come, the next TOGGLE is answered",
                      str(reply))  # fmt: skip
        events = same_everywhere(results, fleet, watches, first, what)
    results.check([e.split()[-1] for e in events] == ["beta", "gamma", "delta"],
                  f"{what}: each change applied once, in order", str(events))  # fmt: skip
    status = h1.status()
    results.check("fleet-error" not in status and status.get("fleet-state") == "serving",
                  f"{what}: the stale answers changed nothing (STATUS)", str(status))  # fmt: skip


PARTS = {"bus-toggle": bus_toggle, "batch-behind": batch_behind, "catch-up-fails": catch_up_fails,
         "batch-bound": batch_bound, "hangup-held": hangup_held, "watch-acknowledges": watch_acknowledges}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    require_binary()
    known_parts(PARTS, argv)
    missing = [tool for tool in ("dbus-daemon", "busctl") if shutil.which(tool) is None]
    if missing:
        print(f"SKIP fleet-retry: {' and '.join(missing)} missing (scripts/deps.sh --test)", flush=True)
        return 77
    try:
        etcd = EtcdLab().start()
    except LabUnavailable as reason:
        print(f"SKIP fleet-retry: {reason}", flush=True)
        return 77
    try:
        with EtcdGate(etcd.urls[1]) as gate:
            bus = Bus(etcd.directory)
            try:
                LAB.update(gate=gate, bus=bus)
                fleet = FleetLab(etcd, hosts=2, configs=[config_json(SECTIONS)] * 2, urls={1: [gate.url]},
                                 host_args={1: ["--bus", "session"]},
                                 environment={1: {"DBUS_SESSION_BUS_ADDRESS": bus.address, **PROXIES}})  # fmt: skip
                try:
                    LAB["fleet"] = fleet.start()
                except (FleetError, RuntimeError, OSError) as error:
                    print(f"FAIL the fleet of two sectiond starts: {error}", flush=True)
                    print("0 passed, 1 failed", flush=True)
                    return 1
                try:
                    return run_parts(PARTS, argv)
                finally:
                    fleet.stop()
            finally:
                bus.stop()
    finally:
        etcd.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
