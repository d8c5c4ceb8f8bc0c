#!/usr/bin/env python3
"""Every crash state loads: each scenario runs the real sectiond under strace, the
trace becomes the operations on its state directory and the revisions it acknowledged
(lib/crashmodel.py), and every state a power cut after each operation may leave, under
ALICE's weakest model, is built in a directory of its own and started with the real binary.
Each must start and serve; its list must be one the scenario acknowledged (a BATCH whole or
not at all), with every section and the mode as they were at that revision, and not older
than the last change that was durable there (with --sync the last OK; by default the last
OK an fsync followed); a sample then takes a change, is killed, and must load it.

Prints, per scenario, the operations, crash points, states built, distinct states checked
(sampled past CRASH_STATES_MAX, default 400 a scenario) and the revisions they recovered;
a failure names the scenario, the operation, the state, and keeps the state's files in
CRASH_STATES_KEEP (default /tmp/crash-states-failures) to replay. scripts/test.sh runs it under the time limit of Tests/System/suites.tsv.
"""

import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")
sys.path.insert(0, LIB)
import crashmodel  # noqa: E402
import sdlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.path.abspath(os.path.join(ROOT, os.environ.get("BUILD_DIR", ".build/debug")))
SECTIOND = os.path.join(BUILD, "sectiond")
MAX_STATES = int(os.environ.get("CRASH_STATES_MAX", 400))
KEEP = os.environ.get("CRASH_STATES_KEEP", "/tmp/crash-states-failures")
TRACED = ("openat,open,write,pwrite64,writev,pwritev,sendto,sendmsg,fsync,fdatasync,rename,renameat,"
          "renameat2,unlink,unlinkat,ftruncate,close")

results = sdlib.Results()
check = results.check


def connect(path):
    """A client with room for a traced daemon's slow replies, once its socket listens."""
    return sdlib.Client(path, timeout=10, wait=5)


def wait_for(condition, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def snapshot(client):
    """(revision, state): the list and the mode as LIST and MODE show them."""
    listed, mode = client.pipeline("LIST", "MODE")
    return int(listed[-1].split()[1]), (tuple(listed[:-1]), tuple(mode[:-1]))


class Daemon:
    def __init__(self, directory, args, traced=None):
        self.directory = directory
        self.socket = os.path.join(directory, "c.sock")
        command = [SECTIOND, "--socket", self.socket, "--state", os.path.join(directory, "state.json")] + args
        if traced:
            command = ["strace", "-f", "-y", "-xx", "-s", "100000000", "-e", f"trace={TRACED}", "-o", traced] + command
        self.log = open(os.path.join(os.path.dirname(directory), os.path.basename(directory) + ".log"), "w+")
        # A group of its own: under strace the daemon is strace's child, and a signal to
        # strace alone would leave it running, detached.
        self.process = subprocess.Popen(command, stdout=self.log, stderr=self.log, start_new_session=True)

    def started(self, timeout=10):
        return wait_for(lambda: os.path.exists(self.socket) or self.process.poll() is not None, timeout) \
            and self.process.poll() is None

    def stop(self, sig=signal.SIGTERM):
        """`sig` to the daemon; a SIGKILL to strace and the daemon under it together."""
        if self.process.poll() is None:
            if sig == signal.SIGKILL:
                os.killpg(self.process.pid, sig)
            else:
                self.process.send_signal(sig)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def log_text(self):
        self.log.seek(0)
        return self.log.read()


# --- scenarios: each makes changes, recording the state after each acknowledged one ---------

def sequential(requests):
    """Each request alone, then LIST and MODE: the state it was acknowledged with."""
    def run(path, references):
        client = connect(path)
        for request in requests:
            if isinstance(request, float):
                time.sleep(request)   # lets the background fsync of --fsync everysec run
                continue
            lines = request.split("\n")
            if lines[0] == "BATCH":   # one reply for the whole batch
                replies = [client.request(*lines)]
            else:
                replies = client.pipeline(*lines)
            assert all(reply[-1].startswith("OK") for reply in replies), (request, replies)
            revision, state = snapshot(client)
            references[revision] = state
        client.close()
    return run


def pipelined(clients, toggles):
    """`clients` connections sending `toggles` TOGGLEs each at once; the state at every
    revision comes from a subscriber's events (open ids and mode)."""
    def run(path, references):
        subscriber = connect(path)
        subscriber.send("SUBSCRIBE\n")
        first = subscriber.readline().split()
        revision, mode, opened = int(first[1]), first[2], set(first[3].split(",")) - {"-"}
        senders = [connect(path) for _ in range(clients)]
        for number, sender in enumerate(senders):
            sender.send("".join(f"TOGGLE {(number + k) % 3}\n" for k in range(toggles)).encode())
        for sender in senders:
            for _ in range(toggles):
                assert sender.read_reply()[-1].startswith("OK")
            sender.close()
        expected = clients * toggles
        while revision < expected:
            event = subscriber.readline().split()
            revision = int(event[1])
            if event[0] == "!opened":
                opened.add(event[3])
            elif event[0] == "!closed":
                opened.discard(event[3])
            elif event[0] == "!mode":
                mode = event[2]
            references[revision] = (frozenset(opened), mode)
        subscriber.close()
    return run


def open_state(state):
    """A LIST-and-MODE state as open ids and mode, for references kept that way."""
    sections, mode = state
    return frozenset(line.split()[2] for line in sections if line.split()[3] == "open"), mode[0].split()[1]


CONFIG = {"sections": [{"id": "first", "title": "First", "items": ["a", "b"]},
                       {"id": "second", "title": "Second"}, {"id": "third", "title": "Third"}]}

SCENARIOS = [
    ("toggles, --sync", ["--sync"], None, sequential(["TOGGLE 0", "TOGGLE 1", "MODE exclusive", "OPEN 2"])),
    ("toggles, --fsync everysec", [], None,
     sequential(["TOGGLE 0", 1.3, "TOGGLE 1", "TOGGLE 2", 1.3, "MODE exclusive"])),
    ("pipelined TOGGLEs of three clients, --sync", ["--sync"], None, pipelined(3, 4)),
    ("a BATCH, --sync", ["--sync"], None,
     sequential(["TOGGLE 0", "BATCH\nOPEN 1\nOPEN 2\nCLOSE 0\nINSERT end news News\nEND", "TOGGLE 1"])),
    ("runtime edits, --sync", ["--sync"], None,
     sequential(["INSERT 0 todo To do", "ITEM INSERT todo end Milk", "RENAME todo Today", "MOVE todo 2",
                 "ITEM SET todo 0 Bread", "DELETE second"])),
    # Past 1 MiB of journal (and twice the state file) the state is written whole and the
    # journal started afresh: at once with --sync, through the syncer's thread by default.
    ("journal compaction, --sync", ["--sync"], "compaction", sequential(
        [f"RENAME first {'AB'[n % 2] * 4000}" for n in range(280)] + ["TOGGLE 1"])),
    ("journal compaction, --fsync everysec", [], "compaction", sequential(
        [f"RENAME first {'AB'[n % 2] * 4000}" for n in range(280)] + [1.5, "TOGGLE 1", 1.3])),
    ("RELOAD FRESH, --sync", ["--sync", "--config", "@CONFIG@"], None,
     sequential(["INSERT end added Added", "TOGGLE first", "DELETE second", "RELOAD FRESH", "TOGGLE second"])),
    ("the first save after a start, --sync", ["--sync"], "restart",
     sequential(["TOGGLE 2", "INSERT end later Later", "ITEM INSERT later end Soon"])),
]


def run_scenario(title, args, special, steps, work, rng):
    directory = os.path.join(work, "run")
    os.mkdir(directory, 0o700)
    config = os.path.join(work, "config.json")
    with open(config, "w") as f:
        json.dump(CONFIG, f)
    args = [config if a == "@CONFIG@" else a for a in args]
    initial = {}
    if special == "restart":
        # A state the daemon saved and left: the traced run starts from it.
        before = Daemon(directory, args)
        if not before.started():
            check(False, f"{title}: the first daemon started", before.log_text())
            return
        sequential(["TOGGLE 0", "INSERT 0 kept Kept", "MODE exclusive"])(before.socket, {})
        before.stop()
        for name in os.listdir(directory):
            with open(os.path.join(directory, name), "rb") as f:
                initial[name] = f.read()
    trace = os.path.join(work, "trace.txt")
    daemon = Daemon(directory, args, traced=trace)
    references = {}
    try:
        if not daemon.started():
            check(False, f"{title}: the traced daemon started", daemon.log_text())
            return
        client = connect(daemon.socket)
        revision, state = snapshot(client)
        client.close()
        references[revision] = state
        steps(daemon.socket, references)
    finally:
        daemon.stop(signal.SIGKILL)
    with open(trace) as f:
        ops = crashmodel.parse(f.read(), directory, initial)
    sync = "--sync" in args
    check_states(title, ops, initial, references, args, sync, work, rng, special)


def bound(ops, point, sync, initial):
    """The oldest revision a state after ops[point] may hold. With --sync, every OK sent: the
    daemon promises each follows its fsync. By default (OK before the fsync, a second at
    most), what is on disk for sure: the state file's revision and the journals' commits in
    the files that only durable operations made."""
    if sync:
        return max((op.revision for op in ops[: point + 1] if op.kind == "ack"), default=0)
    files = crashmodel.minimal_state(ops, point, initial)
    found = [int(n) for n in re.findall(rb'"revision":(\d+)', files.get("state.json", b"")[:200])]
    for name in ("state.json.journal", "state.json.journal.next"):
        found += [int(n) for n in re.findall(rb"^commit (\d+) ", files.get(name, b""), re.M)]
    return max(found, default=0)


def check_states(title, ops, initial, references, args, sync, work, rng, special=None):
    points = [op.index for op in ops if op.kind != "ack"]
    if special == "compaction":
        # The hundreds of appends before it are the toggles' case again: the points near each
        # change of names (the compaction's, and the start's) are the ones to try.
        names = [op.index for op in ops if op.kind in ("create", "rename", "exchange", "unlink")]
        points = [p for p in points if any(abs(p - n) <= 12 for n in names)]
    built, distinct = 0, {}
    for point in points:
        # A compaction's states hold a MiB of journal each: fewer of them, to stay in budget.
        limit = 40 if special == "compaction" else 300
        for description, files in crashmodel.crash_states(ops, point, initial, limit):
            built += 1
            digest = hashlib.sha256()
            for name, data in sorted(files.items()):
                digest.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
            key = digest.hexdigest()
            if key not in distinct:
                distinct[key] = (point, description, files)
    keys = sorted(distinct)
    most = MAX_STATES // 3 if special == "compaction" else MAX_STATES
    sample = keys if len(keys) <= most else sorted(rng.sample(keys, most))
    recovered, problems, second, bounds = {}, [], 0, {}
    for number, key in enumerate(sample):
        point, description, files = distinct[key]
        if point not in bounds:
            bounds[point] = bound(ops, point, sync, initial)
        problem, revision = load(files, args, references, bounds[point],
                                 open_only=isinstance(next(iter(references.values())), tuple)
                                 and isinstance(next(iter(references.values()))[0], frozenset),
                                 work=work, again=number % 10 == 0)
        second += number % 10 == 0
        if problem:
            where = keep(title, ops[point], description, files, problem)
            problems.append(f"after op {point} ({ops[point].describe()}; {ops[point].line[:120]}), "
                            f"{description}: {problem} (kept in {where})")
        else:
            recovered[revision] = recovered.get(revision, 0) + 1
    coverage = "all" if len(sample) == len(keys) else f"a random {len(sample)}"
    print(f"     {title}: {len(ops)} operations, {len(points)} crash points, {built} states built, "
          f"{len(keys)} distinct, {coverage} of them started; recovered revisions {dict(sorted(recovered.items()))}; "
          f"{second} also took a change, were killed and started again", flush=True)
    check(not problems, f"{title}: every crash state checked starts, serves an acknowledged state, "
          f"no older than the last durable change", "\n".join(problems[:10]))


def load(files, args, references, oldest, open_only, work, again):
    directory = tempfile.mkdtemp(prefix="cs.", dir=work)
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    daemon = Daemon(directory, [a for a in args])
    try:
        if not daemon.started():
            return f"sectiond did not start: {daemon.log_text().strip()[-400:]}", None
        client = connect(daemon.socket)
        revision, state = snapshot(client)
        if revision not in references:
            return f"revision {revision} was never acknowledged (a batch in part?); known {sorted(references)}", revision
        expected = references[revision]
        shown = open_state(state) if open_only else state
        if shown != expected:
            return f"revision {revision} holds {shown}, acknowledged as {expected}", revision
        if revision < oldest:
            return f"revision {revision} is older than {oldest}, which was durable", revision
        if again:
            after = int(client.request("TOGGLE 0")[-1].split()[1])
            client.close()
            daemon.stop(signal.SIGKILL)
            daemon = Daemon(directory, [a for a in args])
            if not daemon.started():
                return f"after recovery, a change and a kill, sectiond did not start: {daemon.log_text()[-400:]}", revision
            client = connect(daemon.socket)
            again_revision, _ = snapshot(client)
            if again_revision != after:
                return f"the change made after recovery (revision {after}) came back as {again_revision}", revision
        client.close()
        return None, revision
    finally:
        daemon.stop(signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)


def keep(title, op, description, files, problem):
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    where = tempfile.mkdtemp(prefix=slug + ".", dir=KEEP)
    for name, data in files.items():
        with open(os.path.join(where, name), "wb") as f:
            f.write(data)
    with open(os.path.join(where, "REPORT"), "w") as f:
        f.write(f"{title}\nafter: {op.describe()}\n{op.line}\nstate: {description}\nproblem: {problem}\n")
    return where


def model_selftest():
    """The model on a trace written by hand: a file created, written (1,100 bytes), fsynced,
    renamed over another (a call another thread interrupted, resumed with strace's padding),
    the directory fsynced, as sectiond saves a state."""
    def hexed(text):
        return "".join(f"\\x{b:02x}" for b in text.encode())
    d = "/s"
    trace = "\n".join([
        f'1 openat(AT_FDCWD, "{hexed(d + "/t")}", O_WRONLY|O_CREAT, 0600) = 3<{hexed(d + "/t")}>',
        f'1 write(3<{hexed(d + "/t")}>, "{hexed("x" * 1100)}", 1100) = 1100',
        f'1 fsync(3<{hexed(d + "/t")}>) = 0',
        f'1 rename("{hexed(d + "/t")}", "{hexed(d + "/f")}" <unfinished ...>',
        '2 fsync(9<x> <unfinished ...>',
        '1 <... rename resumed>)          = 0',
        f'1 openat(AT_FDCWD, "{hexed(d)}", O_RDONLY|O_DIRECTORY) = 4<{hexed(d)}>',
        f'1 fsync(4<{hexed(d)}>) = 0',
        f'1 sendto(5<{hexed("socket:[1]")}>, "{hexed("OK 7" + chr(10))}", 5, MSG_NOSIGNAL, NULL, 0) = 5'])
    initial = {"f": b"old"}
    ops = crashmodel.parse(trace, d, initial)
    kinds = [op.kind for op in ops]
    check(kinds == ["create", "write", "fsync", "rename", "fsync", "ack"] and ops[-1].revision == 7,
          "the model reads a create, a write, fsyncs, a resumed rename and an ack from strace's lines", kinds)
    torn = {b"", b"x" * 512, b"x" * 1024, b"x" * 1100}
    seen = {files.get("t") for _, files in crashmodel.crash_states(ops, 1, initial)}
    check(torn <= seen and None in seen,
          "before its fsync, a write may be missing, torn at 512 bytes or whole, the new name missing",
          f"lengths seen: {sorted(len(data) for data in seen if data is not None)}")
    after_rename = [files for _, files in crashmodel.crash_states(ops, 3, initial)]
    check(all(files.get("f") in (b"old", b"x" * 1100) for files in after_rename)
          and any(files.get("f") == b"old" for files in after_rename),
          "an fsynced file renamed over another: either whole, the old one until the directory's fsync")
    after_sync = [files for _, files in crashmodel.crash_states(ops, 4, initial)]
    check(all(files == {"f": b"x" * 1100} for files in after_sync),
          "after the directory's fsync only the new file remains",
          f"{len(after_sync)} states, names {sorted({name for files in after_sync for name in files})}")


REGRESSIONS = os.path.join(LIB, "crashstates")


def regressions(work, rng):
    """The crash states that showed a defect, kept in crashstates/<name>/ (state/, config.json,
    expect.json: the revision durable in it). Each must load that revision, and so must every
    state a power cut during its recovery may leave: the recovery is traced and its crash
    states checked as a scenario's, against the recovered list alone."""
    for name in sorted(os.listdir(REGRESSIONS)):
        title = f"regression {name}"
        print(f"== {title}", flush=True)
        kept = os.path.join(REGRESSIONS, name)
        with open(os.path.join(kept, "expect.json")) as f:
            expected = json.load(f)["revision"]
        directory = os.path.join(work, name)
        shutil.copytree(os.path.join(kept, "state"), directory)
        os.chmod(directory, 0o700)
        initial = {}
        for file in os.listdir(directory):
            with open(os.path.join(directory, file), "rb") as f:
                initial[file] = f.read()
        args = ["--sync", "--config", os.path.join(kept, "config.json")]
        trace = os.path.join(work, name + ".trace")
        daemon = Daemon(directory, args, traced=trace)
        try:
            if not check(daemon.started(), f"{title}: sectiond starts on the kept state", daemon.log_text()):
                continue
            client = connect(daemon.socket)
            revision, state = snapshot(client)
            client.close()
        finally:
            daemon.stop(signal.SIGKILL)
        if not check(revision == expected, f"{title}: loads revision {expected}", f"loaded {revision}"):
            continue
        with open(trace) as f:
            ops = crashmodel.parse(f.read(), directory, initial)
        check_states(title + ": its recovery", ops, initial, {revision: state}, args, True, work, rng)


def main():
    sdlib.require(["strace"])
    os.makedirs(KEEP, exist_ok=True)
    model_selftest()
    rng = random.Random(int(os.environ.get("CRASH_STATES_SEED", 36)))
    only = sys.argv[1:]
    for title, args, special, steps in SCENARIOS:
        if only and not any(word in title for word in only):
            continue
        print(f"== {title}", flush=True)
        with tempfile.TemporaryDirectory(prefix="crash.", dir="/tmp") as work:
            try:
                run_scenario(title, args, special, steps, work, rng)
            except Exception as e:  # a broken scenario fails, the others still run
                check(False, f"{title} ran to the end", repr(e))
    if not only or any(word in "regression" for word in only):
        with tempfile.TemporaryDirectory(prefix="crash.", dir="/tmp") as work:
            regressions(work, rng)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
