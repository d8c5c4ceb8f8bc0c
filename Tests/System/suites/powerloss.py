#!/usr/bin/env python3
"""Power cuts, simulated with LazyFS: the state on a FUSE file system that keeps every write
not yet fsynced in a cache of its own, and forgets it on command (`lazyfs::clear-cache`), or
tears a write and dies (`lazyfs::torn-op`), or dies at a chosen step (`lazyfs::crash`).

Each round: a fresh sectiond with its state on the LazyFS mount, four clients pipelining
changes (toggles, inserts, renames, moves, items, deletes, batches) and one subscriber that
records the list at every revision from the events; then a power cut; then a restart. The
recovered list (ids in order, which are open, item counts) must be the list at one revision
the subscriber saw, the state must load (never set aside), and:
  sync       --sync: no acknowledged change lost (>= 30 rounds)
  default    the default (--fsync everysec): nothing lost that was acknowledged more than the
             documented window before the cut; the largest window seen is printed
  torn       --sync: a torn write of the journal, and of a compaction's state file
  no         --fsync no: the state loads, never set aside (nothing else is promised)
  compaction a cut at each step of a compaction (a large list, many changes): after the new
             state file's fsync, after the swap, around the rename of the journal the
             compaction started (default mode)

usage: powerloss.py [part ...]   (BUILD_DIR names the build, as for the others)

LazyFS (https://github.com/dsrhaslab/lazyfs) is built by the build.sh of the shared third-party
folder beside the checkout (LAZYFS_SRC, default ../shared/third_party/lazyfs from the repository's
root; its build.sh builds LazyFS into the folder given and prints the binary's path), once per machine and user
(LAZYFS_BUILD, default /tmp/sectiond-lazyfs-UID). Skips, saying why, when that folder,
/dev/fuse or root is missing.
LazyFS is mounted and ended by its PID in every case.
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from sdlib import ROOT, Client, Results, config_json, require_binary, sectiond_path  # noqa: E402

# The default mode's promise (README, docs/PROTOCOL.md): a power cut loses at most what was
# acknowledged in the last second or so, plus one fsync. Checked with a margin for a loaded
# machine, and against the time each lost change was sent (before it was acknowledged), so
# that the window measured is never smaller than the real one.
WINDOW_LIMIT = 2.0
SEED = os.environ.get("POWERLOSS_SEED", str(int(time.time())))
rng = random.Random(SEED)


class LazyFS:
    """A LazyFS mount over a temporary directory; its data lives in `root` across mounts."""

    def __init__(self, binary):
        self.binary = binary
        self.base = tempfile.mkdtemp(prefix="sdpl.", dir="/tmp")
        self.root = os.path.join(self.base, "root")
        self.mount = os.path.join(self.base, "mnt")
        self.fifo = os.path.join(self.base, "faults.fifo")
        self.done_fifo = os.path.join(self.base, "done.fifo")
        self.config = os.path.join(self.base, "lazyfs.toml")
        self.log_path = os.path.join(self.base, "lazyfs.log")
        os.mkdir(self.root, 0o700)
        os.mkdir(self.mount, 0o700)
        with open(self.config, "w") as f:
            f.write(f'[faults]\nfifo_path="{self.fifo}"\nfifo_path_completed="{self.done_fifo}"\n'
                    '[cache]\napply_eviction=false\n[cache.simple]\ncustom_size="512mb"\nblocks_per_page=1\n'
                    '[filesystem]\nlog_all_operations=false\nlogfile=""\n')
        self.proc = None
        self.done = None
        self.start()

    def mounted(self):
        with open("/proc/self/mountinfo") as f:
            return any(line.split()[4] == self.mount for line in f)

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [self.binary, self.mount, "--config-path", self.config, "-o", "allow_other",
             "-o", "modules=subdir", "-o", f"subdir={self.root}", "-f"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + 20
        while not (self.mounted() and os.path.exists(self.done_fifo)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"LazyFS did not mount: {self.log()[-600:]}")
            time.sleep(0.02)
        # LazyFS opens the completion FIFO for writing before it reads any command: a reader
        # must be there. Kept open for the life of this mount.
        self.done = os.open(self.done_fifo, os.O_RDONLY | os.O_NONBLOCK)

    def log(self):
        return read_text(self.log_path)

    def command(self, text):
        fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, (text + "\n").encode())
        finally:
            os.close(fd)

    def clear_cache(self):
        """The power cut: every write not fsynced is gone. Waits until LazyFS says it is done."""
        self.command("lazyfs::clear-cache")
        deadline = time.monotonic() + 20
        seen = b""
        while b"finished::clear-cache" not in seen:
            if time.monotonic() > deadline:
                raise RuntimeError("LazyFS did not finish clearing its cache")
            try:
                seen += os.read(self.done, 4096)
            except BlockingIOError:
                time.sleep(0.01)

    def path(self, name):
        """`name` on the mount, and as LazyFS names it in faults (under its root)."""
        return os.path.join(self.mount, name), os.path.join(self.root, name)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """Unmounts, and ends LazyFS by its PID (it may have ended itself: a fault)."""
        if self.done is not None:
            os.close(self.done)
            self.done = None
        subprocess.run(["umount", "-l", self.mount], capture_output=True)
        if self.proc is not None:
            # Ended by its PID: SIGTERM, then SIGKILL if it lingers (it may have ended itself).
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self.proc = None

    def remount(self):
        self.stop()
        self.start()

    def close(self):
        self.stop()
        subprocess.run(["rm", "-rf", self.base], capture_output=True)


class Sectiond:
    """sectiond with its state on the mount and its sockets beside the test (not on FUSE)."""

    def __init__(self, fs, sockets, extra, config):
        self.fs, self.extra = fs, list(extra)
        self.socket = os.path.join(sockets, "c.sock")
        self.readonly = os.path.join(sockets, "r.sock")
        self.config = os.path.join(sockets, "sections.json")
        with open(self.config, "w") as f:
            f.write(config)
        self.log_path = os.path.join(sockets, "sectiond.log")
        if os.path.exists(self.log_path):
            os.remove(self.log_path)  # one round's log: the checks read it
        self.proc = None

    def start(self, timeout=15):
        """Starts it; the seconds until it answered."""
        began = time.monotonic()
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sectiond_path(), "--socket", self.socket, "--readonly-socket", self.readonly,
             "--config", self.config, "--state", self.fs.path("state.json")[0], *self.extra],
            stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        while time.monotonic() < began + timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sectiond exited with {self.proc.returncode}: {self.log()[-800:]}")
            try:
                with Client(self.socket, timeout=2) as c:
                    if c.request("PING") == ["OK"]:
                        return time.monotonic() - began
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError(f"sectiond did not answer within {timeout} s")

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(timeout=20)

    def log(self):
        return read_text(self.log_path)


def read_text(path):
    """The text of a log file, or "" when there is none yet."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def parse_list(reply):
    """(revision, picture) from a LIST reply: picture = (ids, open ids, item counts)."""
    ids, opened, counts = [], set(), []
    for line in reply[:-1]:
        words = line.split(" ")
        ids.append(words[2])
        if words[3] == "open":
            opened.add(words[2])
        counts.append(int(words[4]))
    return int(reply[-1].split()[1]), (tuple(ids), frozenset(opened), tuple(counts))


class Follower(threading.Thread):
    """Subscribes and records the list at every revision, from events alone."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.client = Client(path, timeout=60)
        revision, picture = parse_list(self.client.request("LIST"))
        reply = self.client.request("SUBSCRIBE")
        if int(reply[-1].split()[1]) != revision:
            raise RuntimeError("the list changed between LIST and SUBSCRIBE")
        self.ids, self.opened, self.counts = list(picture[0]), set(picture[1]), list(picture[2])
        self.revision = revision
        self.history = {revision: picture}
        self.error = None
        self.gaps = 0

    def run(self):
        try:
            while True:
                line = self.client.readline()
                if line is None:
                    return
                self.apply(line)
        except (OSError, ConnectionError):
            pass
        except (ValueError, IndexError) as error:
            self.error = f"cannot follow: {error}"

    def apply(self, line):
        words = line.split(" ")
        kind = words[0]
        if kind in ("!bye", "!restart"):
            return
        revision = int(words[1])
        if kind == "!state":
            # Too slow to read every event: the list is unknown until the next LIST.
            self.gaps += 1
            self.revision = revision
            self.ids = None
            return
        if self.ids is None:
            return
        if revision != self.revision + 1:
            self.error = f"revision {revision} after {self.revision}: {line}"
            return
        if kind in ("!opened", "!closed"):
            (self.opened.add if kind == "!opened" else self.opened.discard)(words[3])
        elif kind == "!inserted":
            self.ids.insert(int(words[2]), words[3])
            self.counts.insert(int(words[2]), 0)
        elif kind == "!deleted":
            del self.ids[int(words[2])]
            del self.counts[int(words[2])]
            self.opened.discard(words[3])
        elif kind == "!moved":
            self.ids.insert(int(words[3]), self.ids.pop(int(words[2])))
            self.counts.insert(int(words[3]), self.counts.pop(int(words[2])))
        elif kind == "!items":
            self.counts[int(words[2])] = int(words[4])
        elif kind not in ("!renamed", "!mode"):
            self.error = f"unexpected event {line!r}"
            return
        self.revision = revision
        self.history[revision] = (tuple(self.ids), frozenset(self.opened), tuple(self.counts))


class Writer(threading.Thread):
    """Pipelines changes (up to `depth` in flight) until the daemon goes away; records the
    revision of every acknowledged change with the time its request was sent."""

    def __init__(self, path, name, shared, depth=16, item_size=8):
        super().__init__(daemon=True)
        self.path, self.name, self.shared, self.depth = path, name, shared, depth
        self.item = "x" * item_size
        self.rng = random.Random(f"{SEED}-{name}")
        self.own = []  # ids this writer inserted and has not deleted
        self.acked = []  # (revision, time sent)
        self.number = 0

    def request(self):
        self.number += 1
        n, roll = self.number, self.rng.random()
        new = f"{self.name}n{n}"
        if roll < 0.3 or len(self.own) < 2:
            self.own.append(new)
            return f"INSERT end {new} Title {n}\n"
        if roll < 0.45:
            return f"TOGGLE {self.rng.choice(self.shared)}\n"
        if roll < 0.65:
            return f"ITEM INSERT {self.rng.choice(self.own)} end {self.item} {n}\n"
        if roll < 0.72:
            return f"RENAME {self.rng.choice(self.own)} Renamed {n}\n"
        if roll < 0.8:
            return f"MOVE {self.rng.choice(self.own)} 0\n"
        if roll < 0.88:
            return f"DELETE {self.own.pop(self.rng.randrange(len(self.own)))}\n"
        self.own.append(new)
        return (f"BATCH\nINSERT 0 {new} Batch {n}\nITEM INSERT {new} end {self.item}\n"
                f"TOGGLE {new}\nTOGGLE {self.rng.choice(self.shared)}\nEND\n")

    def run(self):
        try:
            client = Client(self.path, timeout=30)
            sent = []
            for _ in range(self.depth):
                sent.append(time.monotonic())
                client.send(self.request())
            while True:
                reply = client.read_reply()
                status = reply[-1].split(" ")
                if status[0] == "OK" and len(status) == 2:
                    self.acked.append((int(status[1]), sent.pop(0)))
                else:
                    sent.pop(0)
                sent.append(time.monotonic())
                client.send(self.request())
        except (OSError, ConnectionError):
            pass


def base_config(large):
    """Eight sections to toggle; `large`: also 150 sections of 6 items of 600 bytes (a state
    file of about 560 KB), so that compactions are large and come often."""
    ids = [f"s{i}" for i in range(8)]
    if not large:
        return config_json(ids), ids
    items = ",".join(['"' + "y" * 600 + '"'] * 6)
    extra = ",".join(f'{{"id":"big{i}","title":"Big {i}","items":[{items}]}}' for i in range(150))
    return '{"mode":"multi","sections":[' + ",".join(f'{{"id":"{i}","title":"{i}"}}' for i in ids) \
        + "," + extra + "]}", ids


class Round:
    """One daemon run with load, ended by a fault, then the restart and the checks."""

    def __init__(self, fs, sockets, extra, large=False, item_size=8):
        config, self.shared = base_config(large)
        self.daemon = Sectiond(fs, sockets, extra, config)
        self.fs, self.item_size = fs, item_size
        self.problems = []

    def load(self):
        for name in ("state.json", "state.json.tmp", "state.json.journal", "state.json.journal.next"):
            path = self.fs.path(name)[0]
            if os.path.exists(path):
                os.remove(path)
        self.daemon.start()
        self.follower = Follower(self.daemon.readonly)
        self.follower.start()
        self.writers = [Writer(self.daemon.socket, f"w{k}", self.shared, item_size=self.item_size)
                        for k in range(4)]
        for writer in self.writers:
            writer.start()

    def cut(self, clear=True):
        """The power cut: sectiond dies, and (unless LazyFS died itself) its cache is cleared."""
        self.cut_at = time.monotonic()
        self.daemon.kill()
        for thread in self.writers + [self.follower]:
            thread.join(20)
        if clear and self.fs.alive():
            self.fs.clear_cache()
        if not self.fs.alive():
            self.fs.remount()

    def check(self):
        """Restarts and compares; returns (revision, lost window in seconds or None)."""
        seconds = self.daemon.start()
        with Client(self.daemon.socket) as c:
            revision, picture = parse_list(c.request("LIST"))
        self.daemon.kill()
        log = self.daemon.log()
        history = self.follower.history
        acked = sorted(a for w in self.writers for a in w.acked)
        if self.follower.error:
            self.problems.append(f"subscriber: {self.follower.error}")
        if seconds > 5:
            self.problems.append(f"the restart took {seconds:.1f} s")
        if "unreadable" in log or ".corrupt-" in log:
            self.problems.append("the state was set aside: " + log[-400:])
        if revision in history:
            if history[revision] != picture:
                self.problems.append(f"revision {revision} came back as another list than was acknowledged")
        elif self.follower.gaps == 0 and revision <= max(history):
            self.problems.append(f"revision {revision} came back, which no subscriber saw")
        self.unchecked = revision not in history
        lost = [sent for rev, sent in acked if rev > revision]
        self.acked, self.revision = len(acked), revision
        return revision, (self.cut_at - min(lost)) if lost else None, len(lost)


def run_rounds(results, fs, sockets, label, extra, count, default_mode, bounded=True):
    bad, worst, total, unchecked, lost_total = [], 0.0, 0, 0, 0
    for number in range(count):
        round_ = Round(fs, sockets, extra)
        round_.load()
        time.sleep(rng.uniform(0.3, 2.5) if default_mode else rng.uniform(0.2, 1.2))
        round_.cut()
        revision, window, lost = round_.check()
        total += round_.acked
        unchecked += round_.unchecked
        lost_total += lost
        if window is not None:
            worst = max(worst, window)
            if not default_mode:
                round_.problems.append(f"{lost} acknowledged changes lost (back at revision {revision})")
            elif bounded and window > WINDOW_LIMIT:
                round_.problems.append(f"lost changes acknowledged {window:.2f} s before the cut")
        if round_.problems:
            bad.append(f"round {number}: " + "; ".join(round_.problems))
    detail = (f"{count} rounds, {total} changes acknowledged, {lost_total} lost, "
              f"largest window {worst:.3f} s" + (f", {unchecked} recovered revisions past the subscriber" if unchecked else ""))
    return bad, detail, worst


def part_sync(results, fs, sockets):
    bad, detail, _ = run_rounds(results, fs, sockets, "sync", ["--sync"], 30, False)
    results.check(not bad, "--sync: power cuts during four pipelining clients lose no acknowledged "
                  "change, and the list is the one acknowledged", "; ".join(bad[:3]) or detail)


def part_default(results, fs, sockets):
    bad, detail, worst = run_rounds(results, fs, sockets, "default", [], 20, True)
    print(f"largest window lost by the default mode: {worst:.3f} s (limit {WINDOW_LIMIT} s)", flush=True)
    results.check(not bad, f"default (everysec): every power cut loses at most what was acknowledged "
                  f"in the last {WINDOW_LIMIT:.0f} s, and the list is one acknowledged",
                  "; ".join(bad[:3]) or detail)


def part_never(results, fs, sockets):
    """--fsync no promises nothing after a power cut, but the state still loads: with nothing
    ever fsynced, the config's (LazyFS keeps nothing unsynced), never set aside."""
    bad, _, _ = run_rounds(results, fs, sockets, "no", ["--fsync", "no"], 4, True, bounded=False)
    results.check(not bad, "--fsync no: after a power cut the state loads, at a revision acknowledged "
                  "or the config's, and nothing is set aside", "; ".join(bad[:3]) or "4 rounds")


def faulted_round(fs, sockets, extra, fault, large=False, item_size=8, delay=0.0):
    """A round ended by LazyFS itself: `fault` armed `delay` seconds into the load (it applies
    to the next write or step it names); then load until LazyFS dies, and the checks."""
    round_ = Round(fs, sockets, extra, large=large, item_size=item_size)
    round_.load()
    time.sleep(delay)
    fs.command(fault)
    deadline = time.monotonic() + 20
    while fs.alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    fired = not fs.alive()
    round_.cut(clear=True)
    _, window, lost = round_.check()
    if not fired:
        round_.problems.append("the fault never fired")
    return round_, window, lost


def part_torn(results, fs, sockets):
    bad, rounds, dropped = [], 0, 0
    journal = fs.path("state.json.journal")[1]
    spare = fs.path("state.json.tmp")[1]
    cases = [(journal, "parts=3::persist=1,3", False), (journal, "parts=2::persist=1", False),
             (journal, "parts=4::persist=2,4", False), (spare, "parts=3::persist=1", True),
             (spare, "parts=2::persist=2", True)]
    for path, how, large in cases:
        fault = f"lazyfs::torn-op::file={path}::{how}"
        round_, _, lost = faulted_round(fs, sockets, ["--sync"], fault, large=large,
                                        item_size=3000 if large else 8, delay=rng.uniform(0.1, 1.0))
        rounds += 1
        torn = "dropped the torn last group" in round_.daemon.log()
        dropped += torn
        if path == journal and not torn:
            round_.problems.append("no torn group was left to drop")
        if lost:
            round_.problems.append(f"{lost} acknowledged changes lost")
        if round_.problems:
            bad.append(f"{os.path.basename(path)} {how}: " + "; ".join(round_.problems))
    results.check(not bad, "--sync: a torn write of the journal or of a compaction loses no acknowledged "
                  "change; the torn group is dropped whole, the state loads", "; ".join(bad[:3]) or f"{rounds} rounds, a torn journal group dropped at {dropped} restarts")


def part_compaction(results, fs, sockets):
    """LazyFS dies (its cache lost) at each step of a compaction: after the new state file's
    fsync, after the swap, around the rename of the journal it started (default mode)."""
    bad = []
    spare, started = r".*state\.json\.tmp", r".*state\.json\.journal\.next"
    cases = [([], f"timing=after::op=fsync::from_rgx={spare}"),
             ([], f"timing=after::op=rename::from_rgx={spare}"),
             ([], f"timing=before::op=rename::from_rgx={started}"),
             ([], f"timing=after::op=rename::from_rgx={started}"),
             (["--sync"], f"timing=after::op=fsync::from_rgx={spare}"),
             (["--sync"], f"timing=after::op=rename::from_rgx={spare}")]
    for extra, where in cases:
        round_, window, lost = faulted_round(fs, sockets, extra, f"lazyfs::crash::{where}", large=True,
                                             item_size=3000)
        if extra and lost:
            round_.problems.append(f"{lost} acknowledged changes lost")
        if not extra and window is not None and window > WINDOW_LIMIT:
            round_.problems.append(f"lost changes acknowledged {window:.2f} s before the cut")
        if round_.problems:
            bad.append(f"{' '.join(extra) or 'default'} {where}: " + "; ".join(round_.problems))
    results.check(not bad, "a power cut at each step of a compaction (a large list, many changes) "
                  "loads the state at an acknowledged revision, nothing set aside",
                  "; ".join(bad[:3]) or f"{len(cases)} rounds")


PARTS = {"sync": part_sync, "default": part_default, "torn": part_torn, "compaction": part_compaction,
         "no": part_never}


def skip(reason):
    print(f"SKIP powerloss: {reason}")
    sys.exit(77)  # skipped, for scripts/test.sh


def lazyfs_binary():
    """LazyFS built from its source folder (build.sh returns at once when the binary is there)."""
    src = os.environ.get("LAZYFS_SRC") or os.path.join(ROOT, "..", "shared", "third_party", "lazyfs")
    if not os.path.isfile(os.path.join(src, "build.sh")):
        skip(f"no LazyFS at {src}: LazyFS is https://github.com/dsrhaslab/lazyfs, a FUSE file system that "
             "simulates power cuts; the suite builds it with the build.sh of its source folder, which builds it "
             "into the folder it is given and prints the binary's path (../shared/third_party/lazyfs beside "
             "the checkout is such a folder, with its README); set LAZYFS_SRC to one")
    if not os.path.exists("/dev/fuse"):
        skip("/dev/fuse is missing")
    if os.getuid() != 0:
        skip("mounting LazyFS with allow_other needs root")
    if shutil.which("umount") is None:
        skip("umount is missing")
    require_binary()
    out = os.environ.get("LAZYFS_BUILD") or f"/tmp/sectiond-lazyfs-{os.getuid()}"
    built = subprocess.run(["sh", os.path.join(src, "build.sh"), out], stdout=subprocess.PIPE, text=True)
    lines = built.stdout.strip().splitlines()
    binary = lines[-1] if lines else ""
    if not os.access(binary, os.X_OK):
        print(f"FAIL LazyFS did not build from {src}")
        print("0 passed, 1 failed")
        sys.exit(1)
    return binary


def main():
    binary = lazyfs_binary()
    parts = sys.argv[1:] or list(PARTS)
    print(f"seed {SEED} (POWERLOSS_SEED repeats it)", flush=True)
    results = Results()
    fs = LazyFS(binary)
    sockets = tempfile.mkdtemp(prefix="sdpw.", dir="/tmp")
    try:
        for part in parts:
            began = time.monotonic()
            PARTS[part](results, fs, sockets)
            print(f"({part}: {time.monotonic() - began:.0f} s)", flush=True)
    finally:
        fs.close()
        subprocess.run(["rm", "-rf", sockets], capture_output=True)
    results.finish()


if __name__ == "__main__":
    main()
