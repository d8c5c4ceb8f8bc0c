#!/usr/bin/env python3
"""Fault tests of a real sectiond:

  kill       SIGKILL at random moments during a burst of changes from several clients,
             50 rounds: after each restart the state file parses and holds every change
             that was acknowledged with OK.
  edits      runtime edits (INSERT, DELETE, MOVE, ITEM, BATCH) from one client while two
             others subscribe, SIGKILL at a random moment, 20 rounds: after each restart the
             list holds every acknowledged edit (the one in flight may or may not be there),
             and each subscriber's picture, built from its events alone, is the list as it
             was at the last revision it saw.
  fds        out of file descriptors (prlimit --nofile=64, 90 clients), with and without
             --sync: the daemon keeps serving the clients it has (changes included), does
             not spin while it cannot accept, and accepts again once descriptors are free.
  sync       with --sync, strace shows each save fsync the file, swap it into place and
             fsync the directory, all before the OK goes out.
  bad        an idle client, one sending a byte at a time, one sending 10 MiB without a
             newline, one pipelining 100,000 requests without reading: a normal client's
             latency and the daemon's RSS stay bounded.

usage: faults.py [kill|edits|sync|fds|bad ...] [--rounds N]   (all parts by default)
Prints PASS/FAIL lines with the figures, then `N passed, N failed`.
"""

import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from sdlib import Client, Daemon, Results, config_json, percentile, require_binary  # noqa: E402

HZ = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- SIGKILL during a burst

class UntilKilled(threading.Thread):
    """A client thread that works on its own connection until the daemon is killed under it
    (or `work` returns); what it had in flight then is its subclass's to record."""

    def run(self):
        try:
            client = Client(self.path, timeout=5)
        except OSError:
            return
        try:
            self.work(client)
        except (OSError, ConnectionError):
            pass  # the daemon was killed
        finally:
            client.close()


class Writer(UntilKilled):
    """Toggles its own section as fast as the daemon acknowledges; remembers the last
    acknowledged (state, rev) and whether a request was in flight when the daemon died."""

    def __init__(self, path, index, section, acked):
        super().__init__(daemon=True)
        self.path, self.index, self.section = path, index, section
        self.acked = acked  # (open: bool, rev: int) as last acknowledged
        self.in_flight = False
        self.count = 0
        self.error = None

    def work(self, client):
        while True:
            self.in_flight = True
            client.send(f"TOGGLE {self.section}\n")
            reply = client.read_reply()
            if len(reply) != 2 or not reply[1].startswith("OK "):
                self.error = f"unexpected reply {reply}"
                self.in_flight = False
                return
            fields = reply[0].split(" ")
            if fields[1] != str(self.index) or fields[2] != self.section:
                self.error = f"reply for the wrong section: {reply}"
                self.in_flight = False
                return
            self.acked = (fields[3] == "open", int(reply[1].split()[1]))
            self.in_flight = False
            self.count += 1


def check_saved_against_acks(saved, writers):
    """Every acknowledged change must be in the file; returns a list of problems."""
    problems = []
    top = max(w.acked[1] for w in writers)
    if saved.get("format") != 2:
        problems.append(f"format is {saved.get('format')!r}")
    revision = saved.get("revision", -1)
    if revision < top:
        problems.append(f"file revision {revision} < acknowledged revision {top}")
    for w in writers:
        acked_open, acked_rev = w.acked
        value = saved["sections"].get(w.section, "missing")
        if value == "missing":
            problems.append(f"{w.section} missing from the file")
            continue
        file_open = value is not None
        if file_open == acked_open and (not file_open or value == acked_rev):
            continue  # exactly what was acknowledged
        if w.in_flight and file_open != acked_open and (not file_open or value > acked_rev):
            continue  # the request in flight was applied and saved but not yet acknowledged: allowed
        problems.append(f"{w.section}: acknowledged {'open' if acked_open else 'closed'} at rev {acked_rev}, "
                        f"file has {value!r} (in flight: {w.in_flight})")
    return problems


def initial_acks(daemon, sections):
    """What a round starts from, as if acknowledged: the saved state (open sections with the
    revision they opened at; closed ones with the file's revision)."""
    try:
        saved = daemon.saved_state()
    except FileNotFoundError:
        return {s: (False, 0) for s in sections}
    return {s: (saved["sections"][s] is not None,
                saved["sections"][s] if saved["sections"][s] is not None else saved["revision"])
            for s in sections}


def list_state(client):
    reply = client.request("LIST")
    states = {}
    for line in reply[:-1]:
        fields = line.split(" ")
        states[fields[2]] = fields[3] == "open"
    return states, int(reply[-1].split()[1])


def test_kill(results, rounds):
    sections = [f"w{i}" for i in range(6)]
    daemon = Daemon(config=config_json(sections))
    rng = random.Random(os.environ.get("FAULTS_SEED", str(time.time())))
    acked_total = 0
    bad_rounds = []
    unparsable = []
    try:
        daemon.start()
        with daemon.connect() as c:
            states, rev = list_state(c)
        for round_number in range(rounds):
            start_acks = initial_acks(daemon, sections)
            writers = [Writer(daemon.socket, i, s, start_acks[s]) for i, s in enumerate(sections)]
            for w in writers:
                w.start()
            time.sleep(rng.uniform(0.005, 0.15))
            daemon.kill(signal.SIGKILL)
            for w in writers:
                w.join(10)
            errors = [w.error for w in writers if w.error]
            if errors:
                bad_rounds.append(f"round {round_number}: {errors}")
            acked_total += sum(w.count for w in writers)
            # Saves swap the new file into place whole (renameat2 RENAME_EXCHANGE): wherever
            # the kill landed, the state file is there and parses, before the restart.
            if acked_total:
                try:
                    daemon.saved_state()
                except (ValueError, OSError) as error:
                    unparsable.append(f"round {round_number}, before restart: {error}")
            daemon.start()
            try:
                saved = daemon.saved_state()
            except (ValueError, OSError) as error:
                unparsable.append(f"round {round_number}: {error}")
                with daemon.connect() as c:
                    states, rev = list_state(c)
                continue
            problems = check_saved_against_acks(saved, writers)
            with daemon.connect() as c:
                states, rev = list_state(c)
            # The restarted daemon serves exactly what the file holds.
            for s in sections:
                if states[s] != (saved["sections"][s] is not None):
                    problems.append(f"after restart LIST shows {s} {'open' if states[s] else 'closed'}, file differs")
            if rev != saved["revision"]:
                problems.append(f"after restart rev {rev} != file revision {saved['revision']}")
            if problems:
                bad_rounds.append(f"round {round_number}: " + "; ".join(problems))
        results.check(not unparsable, f"state file parses after each of {rounds} SIGKILLs and restarts", "; ".join(unparsable[:3]))
        results.check(not bad_rounds, f"every acknowledged change survives SIGKILL ({rounds} rounds, "
                      f"{acked_total} changes acknowledged, final rev {rev})", "; ".join(bad_rounds[:3]))
        leftovers = [n for n in os.listdir(daemon.dir) if n.startswith("state.json.corrupt")]
        results.check(not leftovers, "no state file was ever set aside as corrupt", " ".join(leftovers))
    finally:
        daemon.close()


# ---------------------------------------------------------------- SIGKILL during runtime edits

class Editor(UntilKilled):
    """Edits the list as fast as the daemon acknowledges: inserts, items, moves, deletes and
    batches of them. `history` maps every acknowledged revision to the ids in order."""

    def __init__(self, path, ids, revision, rng, prefix):
        super().__init__(daemon=True)
        self.path, self.ids, self.rng, self.prefix = path, list(ids), rng, prefix
        self.history = {revision: list(ids)}
        self.in_flight = None  # the ids the edit in flight would lead to
        self.count = 0
        self.error = None

    def next_edit(self, number):
        """A request (or a batch) and the ids it leads to."""
        ids = list(self.ids)
        roll = self.rng.random()
        new = f"{self.prefix}{number}"
        if roll < 0.35 or len(ids) < 3:
            at = self.rng.randrange(len(ids) + 1)
            ids.insert(at, new)
            return [f"INSERT {at} {new} Edit {number}"], ids
        if roll < 0.55:
            return [f"ITEM INSERT {self.rng.randrange(len(ids))} end item {number}"], ids
        if roll < 0.7:
            source, target = self.rng.randrange(len(ids)), self.rng.randrange(len(ids))
            ids.insert(target, ids.pop(source))
            return [f"MOVE {source} {target}"], ids
        if roll < 0.85:
            gone = ids.pop(self.rng.randrange(len(ids)))
            return [f"DELETE {gone}"], ids
        ids.insert(0, new)
        ids.insert(len(ids), new + "b")
        lines = ["BATCH", f"INSERT 0 {new} First of {number}", f"ITEM INSERT {new} end x",
                 f"INSERT end {new}b Last of {number}", "END"]
        return lines, ids

    def work(self, client):
        number = 0
        while True:
            number += 1
            lines, ids = self.next_edit(number)
            self.in_flight = ids
            client.send("".join(line + "\n" for line in lines))
            reply = client.read_reply()
            if len(reply) != 1 or not reply[0].startswith("OK "):
                self.error = f"{lines} answered {reply}"
                return
            self.ids = ids
            self.history[int(reply[0].split()[1])] = ids
            self.in_flight = None
            self.count += 1


class Follower(threading.Thread):
    """Subscribes and keeps its own picture of the list (ids in order) from events alone."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.ids, self.revision, self.error = None, None, None

    def run(self):
        try:
            client = Client(self.path, timeout=30)
            ids = [line.split(" ")[2] for line in client.request("LIST")[:-1]]
            reply = client.request("SUBSCRIBE")
            self.revision = int(reply[-1].split()[1])
            self.ids = ids
            while True:
                line = client.readline()
                if line is None:
                    return
                words = line.split(" ")
                revision = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
                if words[0] in ("!inserted", "!deleted", "!moved", "!items", "!opened", "!closed"):
                    if revision != self.revision + 1:
                        self.error = f"revision {revision} after {self.revision}: {line}"
                        return
                    ids = list(self.ids)
                    if words[0] == "!inserted":
                        ids.insert(int(words[2]), words[3])
                    elif words[0] == "!deleted":
                        if ids[int(words[2])] != words[3]:
                            self.error = f"{line} but index {words[2]} is {ids[int(words[2])]}"
                            return
                        ids.pop(int(words[2]))
                    elif words[0] == "!moved":
                        ids.insert(int(words[3]), ids.pop(int(words[2])))
                        if ids[int(words[3])] != words[4]:
                            self.error = f"{line} moved {ids[int(words[3])]}"
                            return
                    self.ids, self.revision = ids, revision
                elif words[0] not in ("!bye",):
                    self.error = f"unexpected line {line!r}"
                    return
        except (OSError, ConnectionError, ValueError):
            pass


def test_edits(results, rounds):
    daemon = Daemon(config=config_json(["a", "b", "c"]))
    rng = random.Random(os.environ.get("FAULTS_SEED", str(time.time())))
    bad_rounds, acked_total, followed = [], 0, 0
    try:
        daemon.start()
        for round_number in range(rounds):
            with daemon.connect() as c:
                reply = c.request("LIST")
            ids = [line.split(" ")[2] for line in reply[:-1]]
            revision = int(reply[-1].split()[1])
            followers = [Follower(daemon.socket) for _ in range(2)]
            for f in followers:
                f.start()
            deadline = time.monotonic() + 5
            while any(f.revision is None for f in followers) and time.monotonic() < deadline:
                time.sleep(0.005)
            editor = Editor(daemon.socket, ids, revision, rng, f"r{round_number}n")
            editor.start()
            time.sleep(rng.uniform(0.01, 0.2))
            daemon.kill(signal.SIGKILL)
            editor.join(10)
            for f in followers:
                f.join(10)
            problems = [editor.error] if editor.error else []
            acked_total += editor.count
            daemon.start()
            with daemon.connect() as c:
                after = [line.split(" ")[2] for line in c.request("LIST")[:-1]]
            if after != editor.ids and after != editor.in_flight:
                problems.append(f"after restart the list is {after}, acknowledged {editor.ids}"
                                f" (in flight {editor.in_flight})")
            for f in followers:
                if f.error:
                    problems.append(f"subscriber: {f.error}")
                elif f.revision in editor.history:
                    followed += 1
                    if f.ids != editor.history[f.revision]:
                        problems.append(f"a subscriber at revision {f.revision} has {f.ids}, the list was "
                                        f"{editor.history[f.revision]}")
                elif f.revision is not None and f.revision < max(editor.history):
                    problems.append(f"a subscriber stopped at revision {f.revision}, never acknowledged")
            if problems:
                bad_rounds.append(f"round {round_number}: " + "; ".join(problems))
        results.check(not bad_rounds, f"every acknowledged edit survives SIGKILL and every subscriber's "
                      f"events lead to the list ({rounds} rounds, {acked_total} edits acknowledged, "
                      f"{followed} subscriber pictures compared)", "; ".join(bad_rounds[:3]))
    finally:
        daemon.close()


# ---------------------------------------------------------------- --sync: on disk before OK

def save_steps(trace):
    """The daemon's saves and replies in strace's order, one letter each: F fsync of the state
    file, J fsync of the journal, X exchange, R rename, D fsync of the directory, O a reply sent."""
    steps = []
    for line in trace.splitlines():
        if re.search(r"fsync\(\d+</[^>]*state\.json\.tmp>\)\s+= 0", line):
            steps.append("F")
        elif re.search(r"fsync\(\d+</[^>]*state\.json\.journal>\)\s+= 0", line):
            steps.append("J")
        elif re.search(r"fsync\(\d+</[^>]*>\)\s+= 0", line):
            steps.append("D")
        elif "renameat2(" in line and re.search(r"RENAME_EXCHANGE\)\s+= 0", line):
            steps.append("X")
        elif re.search(r"\brename\(.*state\.json\.tmp.*\)\s+= 0", line):
            steps.append("R")
        elif re.search(r'\bsendto\(.*("|\\n)OK', line):
            steps.append("O")
    return "".join(steps)


def test_sync(results):
    trace_path = os.path.join("/tmp", f"sync-trace.{os.getpid()}")
    daemon = Daemon(config=config_json(["a", "b"]), extra_args=["--sync"],
                    wrapper=["strace", "-f", "-qq", "-y", "-s", "256", "-o", trace_path,
                             "-e", "trace=fsync,rename,renameat2,sendto"])
    try:
        daemon.start(timeout=30)
        with daemon.connect() as c:
            replies = [c.request(r)[-1] for r in ("TOGGLE a", "TOGGLE b", "TOGGLE a")]
        # Stop the daemon, strace's child, and strace follows it out.
        with open(f"/proc/{daemon.pid}/task/{daemon.pid}/children") as f:
            os.kill(int(f.read().split()[0]), signal.SIGTERM)
        daemon.proc.wait(timeout=20)
        with open(trace_path) as f:
            steps = save_steps(f.read())
        # The daemon saves the state it starts with before it answers the start-up PING; that
        # first save writes the whole state and renames it into place (there is no state file
        # to swap with yet) and fsyncs the directory; then it makes the journal, whose new name
        # the directory is fsynced for again before any group in it is acknowledged (a start
        # that recovers may not take the old journal's name before its state is on disk); the
        # later ones append to the journal and fsync it (J).
        expected = "FRDD" + "O" + "JO" * 3
        results.check(replies == ["OK 1", "OK 2", "OK 3"] and steps.endswith(expected),
                      "--sync: whole state fsynced, swapped in, directory fsynced; later the journal "
                      "fsynced after each append; each before its OK (strace)",
                      f"replies {replies}, steps {steps!r}, expected to end with {expected!r}")
    finally:
        daemon.close()
        if os.path.exists(trace_path):
            os.remove(trace_path)


# ---------------------------------------------------------------- out of file descriptors

def ping_all(clients, timeout):
    """Sends PING on every socket and returns the indices answered within `timeout`."""
    for s in clients:
        s.sendall(b"PING\n")
    answered = set()
    buffers = {i: b"" for i in range(len(clients))}
    deadline = time.monotonic() + timeout
    while len(answered) < len(clients):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        waiting = [clients[i] for i in range(len(clients)) if i not in answered]
        ready, _, _ = select.select(waiting, [], [], remaining)
        for s in ready:
            i = clients.index(s)
            data = s.recv(4096)
            if not data:
                answered.add(i)  # closed: not an answer, but do not wait for it
                buffers[i] = b"EOF"
                continue
            buffers[i] += data
            if b"\n" in buffers[i]:
                answered.add(i)
    return {i for i in answered if buffers[i].startswith(b"OK\n")}, buffers


def test_fds(results):
    check_fds(results, [], "")
    # With --sync a save holds two descriptors at once (the file and its directory).
    check_fds(results, ["--sync"], " (--sync)")


# More clients than the daemon's 64 descriptors hold, but few enough that those left waiting
# fit in the 50 the test frees later: about 15 are the daemon's own (sockets, state, lock,
# event loop, reserve), so about 49 are served and 41 wait.
FDS_CLIENTS = 90


def check_fds(results, extra_args, label):
    daemon = Daemon(config=config_json(["a", "b", "c"]), extra_args=extra_args,
                    wrapper=["prlimit", "--nofile=64:64", "--"])
    clients = []
    try:
        daemon.start()
        base_fds = daemon.open_fds()
        for _ in range(FDS_CLIENTS):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(daemon.socket)  # the listen backlog takes them even when accept cannot
            clients.append(s)
        time.sleep(0.3)
        served, _ = ping_all(clients, timeout=2)
        fds = daemon.open_fds()
        results.check(0 < len(served) < FDS_CLIENTS and fds >= 60,
                      f"descriptors run out: some of {FDS_CLIENTS} clients are served, the rest wait in the backlog{label}",
                      f"{len(served)} served, daemon holds {fds} of 64 descriptors ({base_fds} before clients)")

        # Out of descriptors: CPU over one second must stay far from a spin.
        time.sleep(0.3)
        t0, c0 = time.monotonic(), daemon.cpu_ticks()
        time.sleep(1.0)
        cpu = (daemon.cpu_ticks() - c0) / HZ / (time.monotonic() - t0)
        results.check(cpu < 0.10, f"no busy loop while it cannot accept{label}", f"CPU {cpu * 100:.1f}% over 1 s")

        # The clients it has keep being served, reads and changes alike.
        served_list = sorted(served)
        again, _ = ping_all([clients[i] for i in served_list], timeout=2)
        results.check(len(again) == len(served_list), f"accepted clients keep getting answers{label}",
                      f"{len(again)}/{len(served_list)}")
        changer = clients[served_list[0]]
        changer.sendall(b"TOGGLE a\n")
        reply = b""
        deadline = time.monotonic() + 3
        while not (reply.startswith(b"ERR") and reply.endswith(b"\n") or reply.count(b"\n") >= 2) \
                and time.monotonic() < deadline:
            r, _, _ = select.select([changer], [], [], 0.2)
            if r:
                reply += changer.recv(4096)
        results.check(reply.startswith(b"section 0 a open") and b"\nOK " in reply,
                      f"a change is still saved and acknowledged with every descriptor in use{label}",
                      reply.decode(errors="replace").strip().replace("\n", " | "))

        # Free 50 descriptors: the daemon accepts the waiting clients and answers them.
        for i in served_list[:50]:
            clients[i].close()
        waiting = [s for i, s in enumerate(clients) if i not in served]
        t0 = time.monotonic()
        late, buffers = ping_all(waiting, timeout=5)
        elapsed = time.monotonic() - t0
        results.check(len(late) == len(waiting), f"accepts again once descriptors are free{label}",
                      f"{len(late)}/{len(waiting)} waiting clients answered within {elapsed:.2f} s")
        warnings = daemon.log().count("cannot accept more clients")
        results.check(warnings <= 20, f"running out of descriptors is logged, not flooded{label}",
                      f"{warnings} log lines")
        results.check(daemon.alive(), f"daemon alive after descriptor exhaustion{label}")
    finally:
        for s in clients:
            s.close()
        daemon.close()


# ---------------------------------------------------------------- bad clients

def bad_client(kind, path):
    """Runs one misbehaving client until killed (a separate process, so that it cannot
    steal the measuring process's GIL)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    if kind == "idle":
        while True:
            time.sleep(60)
    elif kind == "trickle":
        line = b"LIST\n"
        while True:
            for byte in line:
                s.send(bytes([byte]))
                time.sleep(0.001)
            try:
                while s.recv(65536, socket.MSG_DONTWAIT):
                    pass
            except BlockingIOError:
                pass
    elif kind == "flood":
        chunk = b"x" * (1 << 20)
        while True:  # 10 MiB without a newline, again and again
            for _ in range(10):
                s.sendall(chunk)
    elif kind == "pipeline":
        s.sendall(b"LIST\n" * 100_000)  # blocks once the daemon stops reading; never reads
        while True:
            time.sleep(60)


def measure_latency(path, count):
    samples = []
    with Client(path) as c:
        for i in range(count):
            request = "LIST" if i % 2 else "PING"
            t = time.perf_counter()
            reply = c.request(request)
            samples.append(time.perf_counter() - t)
            if not reply[-1].startswith("OK"):
                raise RuntimeError(f"{request} got {reply}")
    return samples


def test_bad_clients(results):
    daemon = Daemon(config=config_json(["a", "b", "c", "d"]))
    procs = []
    try:
        daemon.start()
        measure_latency(daemon.socket, 300)  # warm up
        rss_start = daemon.rss_kib()
        base = measure_latency(daemon.socket, 3000)
        for kind in ("idle", "trickle", "flood", "pipeline"):
            procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--bad-client", kind,
                                           daemon.socket]))
        time.sleep(1.0)  # let the flood and the pipeline reach the daemon's limits
        rss_peak = daemon.rss_kib()
        stop = threading.Event()

        def sample_rss():
            nonlocal rss_peak
            while not stop.is_set():
                rss_peak = max(rss_peak, daemon.rss_kib())
                time.sleep(0.05)

        sampler = threading.Thread(target=sample_rss, daemon=True)
        sampler.start()
        loaded = measure_latency(daemon.socket, 3000)
        stop.set()
        sampler.join()
        alive = [p.poll() is None for p in procs]
        ms = lambda v: f"{v * 1000:.2f}"  # noqa: E731
        figures = (f"normal client p50 {ms(percentile(base, 50))} -> {ms(percentile(loaded, 50))} ms, "
                   f"p99 {ms(percentile(base, 99))} -> {ms(percentile(loaded, 99))} ms, "
                   f"max {ms(max(base))} -> {ms(max(loaded))} ms")
        results.check(all(alive), "the four bad clients stayed connected while measured")
        p50_delta = percentile(loaded, 50) - percentile(base, 50)
        p99_delta = percentile(loaded, 99) - percentile(base, 99)
        results.check(p50_delta < 0.002 and p99_delta < 0.005,
                      "bad clients slow a normal client by at most a few ms", figures)
        results.check(rss_peak - rss_start < 16 * 1024, "RSS stays bounded under bad clients",
                      f"VmRSS {rss_start} KiB before, peak {rss_peak} KiB with them")
        with daemon.connect() as c:
            fresh_ok = c.request("TOGGLE a")[-1].startswith("OK")
        results.check(fresh_ok, "a change still goes through while they misbehave")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        daemon.close()


def main(argv):
    if argv[:1] == ["--bad-client"]:
        bad_client(argv[1], argv[2])
        return 0
    require_binary()
    rounds = 50
    if "--rounds" in argv:
        i = argv.index("--rounds")
        rounds = int(argv[i + 1])
        del argv[i:i + 2]
    parts = argv or ["kill", "edits", "sync", "fds", "bad"]
    results = Results()
    for part in parts:
        print(f"-- {part}", flush=True)
        start = time.monotonic()
        try:
            {"kill": lambda: test_kill(results, rounds), "edits": lambda: test_edits(results, max(rounds // 2, 1)),
             "sync": lambda: test_sync(results),
             "fds": lambda: test_fds(results),
             "bad": lambda: test_bad_clients(results)}[part]()
        except Exception as error:  # a crash of the driver is a failure, not a pass
            results.check(False, f"{part} ran to the end", repr(error))
        print(f"-- {part}: {time.monotonic() - start:.1f} s", flush=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
