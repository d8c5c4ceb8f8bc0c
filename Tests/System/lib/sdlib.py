"""Helpers shared by the Python suites in Tests/System/suites/ (faults.py, soak.py, ...): start a
real sectiond from $BUILD_DIR, talk protocol 1 to it (Client, the one protocol client of the
suites), and read its figures from /proc.

Standard library only (the suites that run under /usr/bin/python3 import it too). Not a test
itself: scripts/test.sh runs the suites that Tests/System/suites.tsv lists.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def build_dir():
    path = os.environ.get("BUILD_DIR", ".build/debug")
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def sectiond_path():
    return os.path.join(build_dir(), "sectiond")


class Results:
    """Counts checks and prints the `N passed, N failed` line the shell tests end with."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS {name}" + (f" ({detail})" if detail else ""), flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


def run_parts(parts, names):
    """Runs the named parts of a driver (all of `parts`, a dict of name -> function taking a
    Results, when `names` is empty), each between `-- name` lines with its time; a part that
    ends in an OSError or RuntimeError is one failure. Returns the exit status."""
    require_binary()
    results = Results()
    for name in names or list(parts):
        print(f"-- {name}", flush=True)
        started = time.monotonic()
        try:
            parts[name](results)
        except (OSError, RuntimeError) as error:
            results.check(False, f"{name} ran to its end", repr(error))
        print(f"-- {name}: {time.monotonic() - started:.1f} s", flush=True)
    return results.finish()


def config_json(section_ids, mode="multi"):
    return json.dumps({
        "mode": mode,
        "sections": [{"id": s, "title": s.capitalize(), "items": [f"{s}-{n}" for n in range(3)]}
                     for s in section_ids],
    })


def replay_journal(saved, journal):
    """Applies the journal's complete groups newer than the state file to `saved`: the order
    of ids and which are open (titles and items are left as the file has them)."""
    ids = [entry["id"] for entry in saved.get("list", [])]
    sections, revision, mode = dict(saved["sections"]), saved["revision"], saved["mode"]
    group = []
    for line in journal.split("\n")[:-1]:  # the part after the last LF is torn
        words = line.split(" ")
        if words[0] == "by":  # who made the changes after it: not state
            continue
        if words[0] != "commit":
            group.append(words)
            continue
        if int(words[1]) > saved["revision"]:
            for kind, rev, *rest in group:
                revision = int(rev)
                if kind == "mode":
                    mode = rest[0]
                    continue
                index = int(rest[0])
                if kind in ("open", "close"):
                    sections[ids[index]] = revision if kind == "open" else None
                elif kind == "insert":
                    ids.insert(index, rest[1])
                    sections[rest[1]] = None
                elif kind == "delete":
                    del sections[ids.pop(index)]
                elif kind == "move":
                    ids.insert(int(rest[1]), ids.pop(index))
        group = []
    return dict(saved, sections=sections, revision=revision, mode=mode, list=[{"id": i} for i in ids])


class Daemon:
    """A sectiond process on sockets in a private temporary directory."""

    def __init__(self, config=None, extra_args=(), wrapper=(), directory=None, state=True):
        self.dir = directory or tempfile.mkdtemp(prefix="sdt.", dir="/tmp")
        self.own_dir = directory is None
        self.socket = os.path.join(self.dir, "control.sock")
        self.readonly_socket = os.path.join(self.dir, "readonly.sock")
        self.state = os.path.join(self.dir, "state.json")
        self.args = ["--socket", self.socket, "--readonly-socket", self.readonly_socket]
        self.args += ["--state", self.state] if state else ["--no-state"]
        if config is not None:
            self.args += ["--config", self.write("sections.json", config)]
        self.args += list(extra_args)
        self.wrapper = list(wrapper)
        self.proc = None
        self.log_path = os.path.join(self.dir, "sectiond.log")
        self.environment = {}  # added to the daemon's environment (SECTIOND_ETCD_USER...)

    def write(self, name, text):
        """Writes `text` to the file `name` in the daemon's directory, readable by all (a root
        daemon refuses files others can write); returns its path."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def start(self, timeout=10):
        log = open(self.log_path, "ab")
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC")}
        env.update(self.environment)
        self.proc = subprocess.Popen(self.wrapper + [sectiond_path()] + self.args,
                                     stdout=subprocess.DEVNULL, stderr=log, env=env)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sectiond exited with {self.proc.returncode}: {self.log()}")
            try:
                with Client(self.socket, timeout=1) as c:
                    if c.request("PING") == ["OK"]:
                        return self
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError(f"sectiond did not answer within {timeout} s")

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig=signal.SIGKILL):
        if self.alive():
            self.proc.send_signal(sig)
        if self.proc is not None:
            return self.proc.wait(timeout=20)
        return None

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def connect(self, timeout=5, readonly=False):
        return Client(self.readonly_socket if readonly else self.socket, timeout=timeout)

    def rss_kib(self):
        return proc_status_kib(self.pid, "VmRSS")

    def cpu_ticks(self):
        """utime + stime of the daemon, in clock ticks."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def open_fds(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def saved_state(self):
        """The saved state as the daemon would load it: the state file with the complete
        groups of its journal (state.json.journal, then state.json.journal.next, which a
        compaction under way starts) replayed; a journal group cut short by a crash is
        ignored, as the daemon ignores it (checksums are not checked here). Keeps "sections"
        (id -> opened-at or None), "revision", "mode" and, in format 2, "list" (entries with
        "id") up to date."""
        with open(self.state) as f:
            saved = json.load(f)
        for name in (".journal", ".journal.next"):
            try:
                with open(self.state + name, "rb") as f:
                    saved = replay_journal(saved, f.read().decode(errors="replace"))
            except FileNotFoundError:
                pass
        return saved

    def close(self):
        self.kill()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def proc_status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def is_status(line):
    return line == "OK" or line.startswith("OK ") or line.startswith("ERR ")


class Client:
    """A blocking protocol-1 client with a timeout on every read: the one protocol client of the
    Python suites (a test that plays a raw or hostile peer keeps its own socket on purpose).
    Events read while waiting for a reply are kept in `events`."""

    def __init__(self, path, timeout=5, wait=0):
        """Connects to `path`; with `wait`, retries for that many seconds while the socket is
        missing or not yet listening (a daemon that has just started)."""
        end = time.monotonic() + wait
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            try:
                self.sock.connect(path)
                break
            except (ConnectionRefusedError, FileNotFoundError):
                self.sock.close()
                if time.monotonic() >= end:
                    raise
                time.sleep(0.01)
            except OSError:
                self.sock.close()
                raise
        self.buf = b""
        self.events = []

    def send(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def readline(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace")

    def read_reply(self):
        lines = []
        while True:
            line = self.readline()
            if line is None:
                raise ConnectionError(f"connection ended after {lines}")
            if line.startswith("!"):
                self.events.append(line)
                continue
            lines.append(line)
            if is_status(line):
                return lines

    def request(self, *lines):
        """Sends one request (a BATCH with its lines and END, too) and returns its reply: the
        data lines, then the status line."""
        self.send("".join(line + "\n" for line in lines))
        return self.read_reply()

    def pipeline(self, *requests):
        """Sends every request at once, then returns their replies in order."""
        self.send("".join(request + "\n" for request in requests))
        return [self.read_reply() for _ in requests]

    def next_events(self, count):
        """The next `count` events read from the connection (the lines of replies between them
        are skipped); events kept in `events` before the call are not among them."""
        got = []
        while len(got) < count:
            line = self.readline()
            if line is None:
                raise ConnectionError(f"connection ended after {got}")
            if line.startswith("!"):
                got.append(line)
        return got

    def events_until(self, revision, seconds=15):
        """The next events, up to the first of `revision` or later (its second word); the read
        times out (TimeoutError) when none comes within `seconds` in all."""
        events = []
        deadline = time.monotonic() + seconds
        while not events or int(events[-1].split()[1]) < revision:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            events += self.next_events(1)
        return events

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


def known_parts(parts, argv):
    """Exits naming the parts when `argv` names one the driver does not have; before any lab
    starts for them."""
    unknown = [name for name in argv if name not in parts]
    if unknown:
        sys.exit(f"unknown part {unknown}; the parts: {' '.join(parts)}")


def run_parts(parts, argv):
    """Runs the named parts of a driver (all of them without names), each given a `Results`,
    timing each; returns the exit status."""
    require_binary()
    results = Results()
    for name in argv or list(parts):
        print(f"-- {name}", flush=True)
        started = time.monotonic()
        parts[name](results)
        print(f"-- {name}: {time.monotonic() - started:.1f} s", flush=True)
    return results.finish()


def require(commands=(), modules=(), fix="scripts/deps.sh --test installs it"):
    """Ends the suite as one failure naming what is missing and what installs it, when one of
    `commands` is not on PATH or one of `modules` cannot be imported by this interpreter."""
    missing = [command for command in commands if shutil.which(command) is None]
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            missing.append(f"{module} (for {sys.executable})")
    if missing:
        print(f"FAIL {', '.join(missing)} missing: {fix}")
        print("0 passed, 1 failed")
        sys.exit(1)


def require_binary():
    if not os.access(sectiond_path(), os.X_OK):
        print(f"no sectiond at {sectiond_path()}; build first (swift build) or set BUILD_DIR", file=sys.stderr)
        print("0 passed, 1 failed")
        sys.exit(1)


def connect_as(path, uid, groups):
    """A Client on `path` connected by a process of `uid` (its gid the same) in `groups`: the
    kernel records the peer at connect(2) (SO_PEERCRED, SO_PEERGROUPS), so a child takes the
    user's ids, connects and passes the socket back. Raises PermissionError when the socket's
    mode keeps the user out. Needs root."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            parent.close()
            # The directory is opened first, as root: the way to it may pass where the user may
            # not (a lab's /proc/PID/root); the socket's own mode is checked at connect, as the user.
            directory = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
            os.setgroups(groups)
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(f"/proc/self/fd/{directory}/{os.path.basename(path)}")
                socket.send_fds(child, [b"ok"], [s.fileno()])
            except OSError as error:
                child.sendall(f"{error.errno}".encode())
        except BaseException:
            code = 1
        os._exit(code)
    child.close()
    try:
        message, fds, _, _ = socket.recv_fds(parent, 64, 1)
    finally:
        os.waitpid(pid, 0)
        parent.close()
    if not fds:
        raise PermissionError(int(message or b"0"), f"uid {uid} could not connect to {path}")
    client = Client.__new__(Client)
    client.sock = socket.socket(fileno=fds[0])
    client.sock.settimeout(5)
    client.buf = b""
    client.events = []
    return client
