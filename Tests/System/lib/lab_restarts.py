"""Clients across restarts of the installed service, parts of Tests/System/suites/systemd-lab.py:

  restart   `systemctl restart` with 200 subscribers, a read-only client and a client
            pipelining TOGGLEs: nobody sees end-of-file, every request is answered once and
            in order, every subscriber's stream leads exactly to the state LIST shows, and
            the read-only client is still read-only
  config    a restart with a changed config: subscribers carried across get `!reload`
  crash     SIGKILL: subscribers on the read-only socket get `!restart` and a `!state` that
            matches LIST; a client that was not subscribed and a subscriber on the control
            socket (which may have been inside a BATCH) see end-of-file; nobody waits forever
  bounded   with a drop-in giving --fd-store 4 and FileDescriptorStoreMax=4, five subscribers:
            the three the store holds are kept across a restart, the other two are told
            `!bye restart` and closed
  handover  1,000 subscribers and a client pipelining PINGs: the longest pause that client
            sees across `systemctl restart`. The goal is 100 ms; most of the pause is
            systemd setting up the unit's sandbox for the new process (docs/PERFORMANCE.md), so
            the check fails at 250 ms, what a loaded CI machine still meets, and prints the figure
"""

import resource
import threading
import time

from sdlib import Client, config_json

CONFIG = "/etc/sectiond/sections.json"
IDS = ["alpha", "beta", "gamma"]  # the config systemd-lab.py's set_up() installs


def fresh_start(lab):
    """The service restarted on the lab's config, with no client of an earlier part."""
    lab.write_file(CONFIG, config_json(IDS))
    restart_and_wait(lab, "restart", "sectiond.service")


def restart_and_wait(lab, *how):
    """Restarts the service (`systemctl restart`, or `kill -s KILL`) and waits for the new process.
    The start counter is reset first: these tests restart more often than StartLimitBurst= allows."""
    lab.systemctl("reset-failed", "sectiond.service", check=False)
    old = lab.main_pid()
    lab.systemctl(*how, check=False)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = lab.show("sectiond.service", "ActiveState", "SubState", "MainPID")
        if (state["ActiveState"], state["SubState"]) == ("active", "running") and state["MainPID"] not in (
                "0", str(old)):
            return int(state["MainPID"])
        time.sleep(0.05)
    return None


def listed(lab):
    """(revision, open ids) as LIST shows them now."""
    with Client(lab.socket_path(), timeout=10) as client:
        lines = client.request("LIST")
    return int(lines[-1].split()[1]), {l.split()[2] for l in lines[:-1] if l.split()[3] == "open"}


class Stream:
    """Follows one subscriber's events and checks that each follows the one before."""

    def __init__(self, snapshot):
        words = snapshot.split(" ")
        self.revision = int(words[1])
        self.open = set() if words[3] == "-" else set(words[3].split(","))
        self.problems = []
        self.lines = []

    def follow(self, line):
        self.lines.append(line)
        words = line.split(" ")
        if words[0] in ("!state", "!restart", "!reload", "!bye"):
            if words[0] == "!state":
                self.revision = int(words[1])
                self.open = set() if words[3] == "-" else set(words[3].split(","))
            elif words[0] == "!reload":
                self.revision = int(words[1])
            elif words[0] == "!bye":
                self.problems.append(line)
            return
        revision = int(words[1])
        if revision != self.revision + 1:
            self.problems.append(f"{line} after rev {self.revision}")
        self.revision = revision
        if words[0] == "!opened":
            self.open.add(words[3])
        elif words[0] == "!closed":
            self.open.discard(words[3])


def subscribers(lab, count, readonly=True):
    clients = []
    for _ in range(count):
        client = Client(lab.socket_path("readonly.sock" if readonly else "control.sock"), timeout=10)
        client.stream = Stream(client.request("SUBSCRIBE")[0])
        clients.append(client)
    return clients


def catch_up(client, revision, timeout=10, until=lambda stream: True):
    """Reads a subscriber's events until it has seen `revision` and `until` holds; False on
    end-of-file or timeout."""
    client.sock.settimeout(timeout)
    try:
        while client.stream.revision < revision or not until(client.stream):
            for event in client.events:
                client.stream.follow(event)
            client.events.clear()
            line = client.readline()
            if line is None:
                return False
            client.stream.follow(line)
        return True
    except OSError:
        return False


class Pipeliner(threading.Thread):
    """Keeps `depth` TOGGLEs in flight on one connection; records every reply."""

    def __init__(self, lab, depth=8):
        super().__init__(daemon=True)
        self.client = Client(lab.socket_path(), timeout=20)
        self.depth = depth
        self.stop = threading.Event()
        self.sent = 0
        self.replies = []
        self.error = None

    def run(self):
        try:
            for _ in range(self.depth):
                self.send()
            while not self.stop.is_set() or len(self.replies) < self.sent:
                self.replies.append(self.client.read_reply())
                if not self.stop.is_set():
                    self.send()
        except (OSError, ConnectionError) as error:
            self.error = f"{type(error).__name__}: {error}"

    def send(self):
        self.client.send(f"TOGGLE {IDS[self.sent % 2]}\n")
        self.sent += 1

    def in_order(self):
        """Every reply an OK whose revision is one more than the one before."""
        revisions = [int(reply[-1].split()[1]) for reply in self.replies if reply[-1].startswith("OK ")]
        steps = [b - a for a, b in zip(revisions, revisions[1:])]
        return len(revisions) == len(self.replies) and all(step == 1 for step in steps)


def test_restart(lab, r):
    fresh_start(lab)
    subs = subscribers(lab, 200)
    viewer = Client(lab.socket_path("readonly.sock"), timeout=10)
    viewer.request("PING")
    pipeliner = Pipeliner(lab)
    pipeliner.start()
    time.sleep(0.5)
    pid = restart_and_wait(lab, "restart", "sectiond.service")
    time.sleep(0.5)
    pipeliner.stop.set()
    pipeliner.join(timeout=30)
    r.check(pid is not None, "restart: the service is running again under a new pid", f"MainPID {pid}")
    r.check(pipeliner.error is None and len(pipeliner.replies) == pipeliner.sent and pipeliner.in_order(),
            "restart: every pipelined request answered once, in order",
            f"{pipeliner.sent} sent, {len(pipeliner.replies)} answered, error {pipeliner.error}")
    revision, opened = listed(lab)
    caught = [catch_up(s, revision) for s in subs]
    matching = [s.stream.open == opened and not s.stream.problems for s in subs]
    r.check(all(caught), "restart: no subscriber sees end-of-file",
            f"{caught.count(True)}/{len(subs)} reached LIST's revision {revision}")
    r.check(all(matching), "restart: every subscriber's stream leads exactly to LIST",
            next((f"{s.stream.problems[:2]} open {s.stream.open}" for s, ok in zip(subs, matching) if not ok),
                 f"200 streams at rev {revision}, open {sorted(opened)}"))
    refused = viewer.request("TOGGLE alpha")
    r.check(refused[-1].startswith("ERR READONLY"), "restart: a read-only client stays read-only", refused[-1])
    for client in subs + [viewer, pipeliner.client]:
        client.close()


def test_config(lab, r):
    fresh_start(lab)
    sub = subscribers(lab, 1)[0]
    lab.write_file(CONFIG, config_json(IDS + ["delta"]))
    restart_and_wait(lab, "restart", "sectiond.service")
    revision, _ = listed(lab)
    reached = catch_up(sub, revision)
    reloads = [line for line in sub.stream.lines if line.startswith("!reload ")]
    r.check(reached and reloads == [f"!reload {revision}"],
            "config: a restart with a changed config sends !reload to the subscribers it keeps",
            f"events {sub.stream.lines}, LIST at {revision}")
    sub.close()
    fresh_start(lab)


def test_crash(lab, r):
    fresh_start(lab)
    subs = subscribers(lab, 20)
    plain = Client(lab.socket_path(), timeout=10)
    plain.request("PING")
    control = subscribers(lab, 1, readonly=False)[0]
    with Client(lab.socket_path(), timeout=10) as client:
        client.request("OPEN beta")
    pid = restart_and_wait(lab, "kill", "-s", "KILL", "sectiond.service")
    r.check(pid is not None, "crash: Restart=on-failure starts a new process", f"MainPID {pid}")
    revision, opened = listed(lab)
    resynced = []
    for sub in subs:
        reached = catch_up(sub, revision, until=lambda stream: any(l.startswith("!state ") for l in stream.lines))
        resynced.append(reached and "!restart" in sub.stream.lines and sub.stream.open == opened)
    r.check(all(resynced), "crash: every subscriber gets !restart and a !state that matches LIST",
            f"{resynced.count(True)}/{len(subs)}; first: {subs[0].stream.lines[:3]}")
    ended = []
    for client in (plain, control):
        client.sock.settimeout(10)
        try:
            while client.readline() is not None:
                pass  # events sent before the crash
            ended.append(True)
        except OSError:
            ended.append(False)
    r.check(all(ended), "crash: a client not subscribed, and a subscriber on the control socket, see end-of-file",
            f"end-of-file {ended}")
    for client in subs + [plain, control]:
        client.close()


class PingTimer(threading.Thread):
    """Pipelines PINGs, `depth` in flight, and records when each reply arrives."""

    def __init__(self, lab, depth=16):
        super().__init__(daemon=True)
        self.client = Client(lab.socket_path(), timeout=20)
        self.depth = depth
        self.stop = threading.Event()
        self.times = []
        self.error = None

    def run(self):
        try:
            self.client.send("PING\n" * self.depth)
            while not self.stop.is_set():
                if self.client.read_reply() != ["OK"]:
                    self.error = "a reply other than OK"
                    return
                self.times.append(time.monotonic())
                self.client.send("PING\n")
        except (OSError, ConnectionError) as error:
            self.error = f"{type(error).__name__}: {error}"


def test_handover(lab, r):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    fresh_start(lab)
    subs = subscribers(lab, 1000)
    named = Client(lab.socket_path("control.sock"), timeout=10)
    named.request("CLIENT NAME carried")
    timer = PingTimer(lab)
    timer.start()
    time.sleep(0.5)
    started = time.monotonic()
    pid = restart_and_wait(lab, "restart", "sectiond.service")
    time.sleep(0.5)
    timer.stop.set()
    timer.join(timeout=30)
    during = [t for t in timer.times if t >= started - 0.1]
    gaps = [b - a for a, b in zip(during, during[1:])]
    worst = max(gaps) * 1000 if gaps else float("inf")
    r.check(pid is not None and timer.error is None and worst < 250,
            "handover: the longest pause a pipelining client sees across a restart (target 100 ms)",
            f"{worst:.1f} ms with 1,000 subscribers ({len(timer.times)} PINGs answered, error {timer.error})")
    revision, _ = listed(lab)
    alive = sum(catch_up(s, revision) for s in subs)
    r.check(alive == len(subs), "handover: all 1,000 subscribers kept", f"{alive}/{len(subs)}")
    named.request("TOGGLE alpha")
    history = " ".join(named.request("HISTORY 1"))
    r.check(" carried opened " in history or " carried closed " in history,
            "handover: a client's name (CLIENT NAME) goes across the restart with its connection", history)
    for client in subs + [timer.client, named]:
        client.close()


def test_bounded(lab, r):
    dropin = "/etc/systemd/system/sectiond.service.d/50-lab-store.conf"
    lab.write_file(dropin, "[Service]\nExecStart=\nExecStart=/usr/local/bin/sectiond --socket "
                   "/run/sectiond/control.sock --readonly-socket /run/sectiond/readonly.sock "
                   "--fd-store 4\nFileDescriptorStoreMax=4\n")
    lab.systemctl("daemon-reload")
    fresh_start(lab)
    subs = subscribers(lab, 5)
    restart_and_wait(lab, "restart", "sectiond.service")
    endings = []
    for sub in subs:
        sub.sock.settimeout(5)
        lines = []
        try:
            while (line := sub.readline()) is not None:
                lines.append(line)
            endings.append(("closed", lines))
        except OSError:
            endings.append(("kept", lines))
    kept = [lines for how, lines in endings if how == "kept"]
    closed = [lines for how, lines in endings if how == "closed"]
    r.check(len(kept) == 3 and all(lines == [] for lines in kept)
            and len(closed) == 2 and all(lines == ["!bye restart"] for lines in closed),
            "bounded: connections beyond FileDescriptorStoreMax get !bye restart, the rest are kept",
            f"{endings}")
    for sub in subs:
        sub.close()
    lab.run(["rm", dropin])
    lab.systemctl("daemon-reload")
    fresh_start(lab)


PARTS = {"restart": test_restart, "config": test_config, "crash": test_crash, "bounded": test_bounded,
         "handover": test_handover}
