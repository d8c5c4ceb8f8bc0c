#!/usr/bin/env python3
"""sectionctl against a server it must not trust, and sockets in directories others could
write, and floods of events or of a reply.

A fake server (a thread here, on a Unix socket) plays a hostile or hung daemon: control
sequences in every field, lines of tens of megabytes, no reply at all. The directory checks
plant directories as another user would (uid 4343, or the next uid no
account has), and run the victim as the next free uid after it through setpriv. The ui checks run in tmux (Tests/System/lib/tmux_pane.py). Needs root
for the users; standard library only.
"""

import os
import pty
import pwd
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sdlib  # noqa: E402
import tmux_pane  # noqa: E402



def free_uids(count, start=4343):
    """uids that no account on the machine has and whose /tmp/sectiond-UID (the socket
    directory of a user without XDG_RUNTIME_DIR, which a check below plants) does not exist."""
    uids, uid = [], start
    while len(uids) < count:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            if not os.path.lexists(f"/tmp/sectiond-{uid}"):
                uids.append(uid)
        uid += 1
    return uids


ATTACKER, VICTIM = free_uids(2)
# OSC 52 (clipboard), OSC 0 (window title), CSI erase, the 8-bit CSI (U+009B), DEL, a bidi
# override (U+202E), a zero-width space and a byte that is not UTF-8: no space, so it fits an id.
HOSTILE = (b"\x1b]52;c;cHduZWQ=\x07\x1b]0;PWNED-TITLE\x07\x1b[2J\xc2\x9b31m\x7f"
           b"\xe2\x80\xaegnp.exe\xe2\x80\x8b\xff")
# What must never reach the terminal: ESC, BEL, DEL, C1 controls, bidi controls, U+200B.
FORBIDDEN = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae\x8b]|\xe2\x81[\xa6-\xa9]")


class FakeServer:
    """A Unix socket that answers each request line with `answer(line)`: bytes, or None for no
    reply at all. One thread per connection; the server lives until `close()`."""

    def __init__(self, path, answer):
        self.path = path
        self.answer = answer
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(16)
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection):
        reader = connection.makefile("rb")
        try:
            for line in reader:
                reply = self.answer(line.rstrip(b"\r\n"))
                if reply is not None:
                    connection.sendall(reply)
        except OSError:
            pass
        finally:
            connection.close()

    def close(self):
        self.listener.close()


def hostile_answer(line):
    """Protocol 1 replies that carry HOSTILE wherever the daemon's text goes."""
    verb = line.split(b" ")[0].upper()
    section = b"section 0 id" + HOSTILE + b" open 1 Title " + HOSTILE + b"\n"
    item = b"item 0 0 Item " + HOSTILE + b"\n"
    replies = {
        b"LIST": section + b"OK 1\n",
        b"VIEW": section + item + b"OK 1\n",
        b"ITEMS": item + b"OK 1\n",
        b"VERSION": b"version 1.0" + HOSTILE + b" 1\nOK\n",
        b"MODE": b"mode multi\nOK 1\n",
        b"SUBSCRIBE": b"state 1 multi id" + HOSTILE + b"\nOK 1\n!opened 2 0 id" + HOSTILE + b"\n",
        b"TOGGLE": b"ERR NOSECTION no section " + HOSTILE + b"\n",
        b"PING": b"PONG " + HOSTILE + b"\n",
    }
    return replies.get(verb, b"ERR SYNTAX " + HOSTILE + b"\n")


class CtlSafety:
    def __init__(self):
        self.results = sdlib.Results()
        self.ctl = os.path.join(sdlib.build_dir(), "sectionctl")
        self.work = tempfile.mkdtemp(prefix="sdcs.", dir="/tmp")
        self.cleanup = []

    def check(self, ok, name, detail=""):
        return self.results.check(ok, name, "" if ok else detail)

    def run(self, *args, stdin=b"", timeout=60, env=None, user=None):
        """sectionctl's status, stdout, stderr and seconds taken."""
        command = [self.ctl if user is None else os.path.join(self.work, "bin", "sectionctl"), *args]
        if user is not None:
            command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + command
        started = time.monotonic()
        try:
            run = subprocess.run(command, input=stdin, capture_output=True, timeout=timeout,
                                 env=env if env is not None else dict(os.environ, NO_COLOR="1"))
        except subprocess.TimeoutExpired:
            return None, b"", f"still running after {timeout} s; killed".encode(), time.monotonic() - started
        return run.returncode, run.stdout, run.stderr, time.monotonic() - started

    # Item 7 (and 9's sectionctl part): what the socket says is data in every output.

    def hostile_text(self):
        path = os.path.join(self.work, "fake.sock")
        server = FakeServer(path, hostile_answer)
        self.cleanup.append(server.close)
        commands = [["list"], ["view"], ["items", "0"], ["status"], ["watch", "--count", "1"],
                    ["toggle", "0"], ["ping"], ["send", "LIST"], ["open", "0"],
                    ["--json", "list"], ["--json", "view"], ["--json", "items", "0"], ["--json", "status"],
                    ["--json", "watch", "--count", "1"]]
        for command in commands:
            status, out, err, _ = self.run("--socket", path, *command)
            bad = FORBIDDEN.search(out + err)
            # Exit 0 or 1 with something printed: the command ran and showed what it was sent.
            self.check(bad is None and status in (0, 1) and out + err,
                       f"{' '.join(command)}: no control, bidi or invisible character reaches the "
                       f"terminal (exit {status})", repr(out + err)[:600])
        status, out, _, _ = self.run("--socket", path, "view")
        self.check(rb"\x1b]0;PWNED-TITLE\x07" in out and rb"\x9b31m\x7f\u202egnp.exe\u200b\xff" in out,
                   "view shows the escapes visibly", repr(out)[:400])
        status, _, err, _ = self.run("--socket", path, "toggle", "0")
        self.check(status == 1 and rb"no section \x1b]52;c;cHduZWQ=" in err, "an ERR message is escaped",
                   repr(err))
        status, _, err, _ = self.run("--socket", path, "ping")
        self.check(status == 1 and b'cannot read: "PONG \\x1b]52' in err, "the 'cannot read' text is escaped",
                   repr(err))
        status, out, _, _ = self.run("--socket", path, "--json", "list")
        self.check(rb"\u001b]0;PWNED-TITLE\u0007" in out and rb"\u009b31m\u007f" in out,
                   "--json escapes C0, C1 and DEL", repr(out)[:400])

    def hostile_pipe(self):
        """`sectionctl pipe` relays bytes; on a terminal it shows them as every command does."""
        path = os.path.join(self.work, "fakepipe.sock")
        server = FakeServer(path, hostile_answer)
        self.cleanup.append(server.close)
        status, out, _, _ = self.run("--socket", path, "pipe", stdin=b"VIEW\n")
        self.check(status == 0 and out == hostile_answer(b"VIEW"), "pipe: into a pipe, the bytes as they came",
                   repr(out)[:400])
        primary, secondary = pty.openpty()
        try:
            run = subprocess.run([self.ctl, "--socket", path, "pipe"], input=b"VIEW\n", stdout=secondary,
                                 stderr=subprocess.PIPE, timeout=30)
            os.close(secondary)
            shown = b""
            while select.select([primary], [], [], 1)[0]:
                try:
                    chunk = os.read(primary, 65536)
                except OSError:  # EIO: the terminal's last writer has gone
                    break
                if not chunk:
                    break
                shown += chunk
        finally:
            os.close(primary)
        shown = shown.replace(b"\r\n", b"\n")  # the terminal's own line discipline
        self.check(run.returncode == 0 and FORBIDDEN.search(shown) is None
                   and rb"\x1b]0;PWNED-TITLE\x07" in shown and shown.endswith(b"OK 1\n"),
                   "pipe: on a terminal, the escapes are shown, not obeyed", repr(shown)[:600])

    def hostile_ui(self):
        """The issue's reproduction: an OSC 0 in a title renamed the tmux pane."""
        path = os.path.join(self.work, "fakeui.sock")
        server = FakeServer(path, hostile_answer)
        self.cleanup.append(server.close)
        pane = tmux_pane.Pane(f"sdcs-{os.getpid()}-osc", 100, 10)
        self.cleanup.append(pane.close)
        pane.type_line(f"{self.ctl} --socket {path} ui")
        ok, screen = pane.wait(lambda s: any("PWNED-TITLE" in line for line in s))
        title = pane.run("display-message", "-p", "-t", "t", "#{pane_title}").strip()
        self.check(ok and "PWNED" not in title, "ui: an OSC 0 in a title is drawn, not obeyed",
                   f"pane title {title!r}" + tmux_pane.show(screen))
        self.check(ok and any(r"\x1b]52;c;cHduZWQ=" in line for line in screen),
                   "ui: the escapes are visible on screen", tmux_pane.show(screen))
        pane.literal("q")

    # Item 8: widths as the terminal counts them; no row reaches into the next.

    def forged_rows(self):
        config = sdlib.config_json(["first", "second", "third"])
        daemon = sdlib.Daemon(config=config).start()
        self.cleanup.append(daemon.close)
        tangut = "\U00017000" * 60
        pane = tmux_pane.Pane(f"sdcs-{os.getpid()}-wide", 100, 10)
        self.cleanup.append(pane.close)
        pane.type_line(f"{self.ctl} --socket {daemon.socket} ui")
        pane.wait(lambda s: "connected" in tmux_pane.status_line(s))
        # Renamed while the ui runs, as in the issue: only that row is redrawn, so an overflow
        # into the next row would stay there.
        with daemon.connect() as client:
            client.request(f"RENAME first {tangut} FORGED-LINE-HERE")
        ok, screen = pane.wait(lambda s: "\U00017000" in s[0])
        self.check(ok and all(tmux_pane.cells(line) <= 100 for line in screen),
                   "ui at 100 columns: every row fits, Tangut counted 2 cells", tmux_pane.show(screen))
        self.check(ok and not any("FORGED" in line for line in screen[1:]) and screen[1].startswith("  ▸ Second")
                   and screen[2].startswith("  ▸ Third"),
                   "ui: a title's overflow never replaces the next row", tmux_pane.show(screen))
        with daemon.connect() as client:
            client.request("RENAME second" + " soft\u00adhyphen" * 12)
        ok, screen = pane.wait(lambda s: s[1].startswith("  ▸ soft"))
        self.check(ok and "…" in screen[1] and screen[2].startswith("  ▸ Third")
                   and all(tmux_pane.cells(line) <= 100 for line in screen),
                   "ui: soft hyphens counted 1 cell, the title cut to its row", tmux_pane.show(screen))
        pane.keys("Down")
        ok, screen = pane.wait(lambda s: s[1].startswith("› ▸ soft"))
        self.check(ok and "…" in screen[1] and screen[2].startswith("  ▸ Third")
                   and all(tmux_pane.cells(line) <= 100 for line in screen),
                   "ui: a title with soft hyphens is cut to its row", tmux_pane.show(screen))
        pane.literal("q")

    # Item 14: timeouts and long lines.

    def timeouts_and_long_lines(self):
        silent = os.path.join(self.work, "silent.sock")
        server = FakeServer(silent, lambda line: None)
        self.cleanup.append(server.close)
        for command in [["ping"], ["view"], ["toggle", "0"], ["send", "PING"]]:
            status, _, err, seconds = self.run("--socket", silent, "--timeout", "1", *command)
            self.check(status == 3 and b"did not answer within 1 s" in err and 0.9 <= seconds < 8,
                       f"{command[0]} against a server that never answers: exit 3 after --timeout 1 "
                       f"({seconds:.2f} s)", repr(err))
        # A listener that never accepts, its backlog full: a blocking connect would wait for ever.
        stuck = os.path.join(self.work, "stuck.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(stuck)
        listener.listen(0)
        queued = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        queued.connect(stuck)
        self.cleanup += [listener.close, queued.close]
        status, _, err, seconds = self.run("--socket", stuck, "--timeout", "1", "ping", timeout=20)
        self.check(status == 3 and b"did not answer within 1 s" in err and seconds < 8,
                   f"ping against a listener that never accepts: exit 3 after --timeout 1 ({seconds:.2f} s)",
                   repr(err))
        status, _, err, seconds = self.run("--socket", silent, "--timeout", "1", "batch", stdin=b"TOGGLE 0\n")
        self.check(status == 3 and seconds < 8, f"batch: exit 3 after --timeout 1 ({seconds:.2f} s)", repr(err))
        _, out, _, _ = self.run("help")
        self.check(b"--timeout SECONDS" in out and b"default 25" in out, "--help documents --timeout and its default",
                   repr(out)[-800:])

        long_item = b"item 0 0 " + b"x" * (20 << 20) + b"\n"
        longs = os.path.join(self.work, "long.sock")
        server = FakeServer(longs, lambda line: long_item + b"OK 1\n" if line.startswith(b"ITEMS") else
                            b"state 1 multi " + b"a" * (20 << 20) + b"\nOK 1\n!closed 2 0 a\n")
        self.cleanup.append(server.close)
        status, out, err, seconds = self.run("--socket", longs, "items", "0", timeout=30)
        self.check(status == 0 and len(out) == (20 << 20) + 1 and seconds < 10,
                   f"a 20 MB line is read in {seconds:.2f} s", repr(err))
        status, out, err, seconds = self.run("--socket", longs, "watch", "--count", "1", timeout=30)
        self.check(status == 0 and out.startswith(b"state 1 multi aaa") and seconds < 10,
                   f"watch with a 20 MB state line: {seconds:.2f} s", repr(err))

        endless = os.path.join(self.work, "endless.sock")
        chunk = b"y" * (1 << 20)

        def flood(connection_line):
            return chunk * 80

        server = FakeServer(endless, flood)
        self.cleanup.append(server.close)
        status, _, err, seconds = self.run("--socket", endless, "view", timeout=40)
        self.check(status == 1 and b"longer than 64 MiB" in err and seconds < 30,
                   f"a line past 64 MiB is refused ({seconds:.2f} s)", repr(err))

    # What the blocking client holds is bounded.

    def run_measured(self, *args, timeout=60, kill_above=1024):
        """sectionctl's status, stderr, seconds and peak RSS in MiB (VmHWM, read every 20 ms:
        wait4's ru_maxrss would count this Python process, which the child was forked from).
        Killed after `timeout` s or once its RSS passes `kill_above` MiB, to spare the machine."""
        started = time.monotonic()
        process = subprocess.Popen([self.ctl, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   env=dict(os.environ, NO_COLOR="1"))
        done = threading.Event()
        peak = [0]

        def watch():
            while not done.wait(0.02):
                try:
                    if os.readlink(f"/proc/{process.pid}/exe") != os.path.realpath(self.ctl):
                        continue  # not yet exec'd: the fork of this process
                    hwm = sdlib.proc_status_kib(process.pid, "VmHWM")
                except OSError:
                    return  # exited
                peak[0] = max(peak[0], hwm)
                if hwm > kill_above * 1024 or time.monotonic() - started > timeout:
                    process.kill()
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        err = process.stderr.read()
        process.wait()
        done.set()
        watcher.join()
        return process.returncode, err, time.monotonic() - started, peak[0] / 1024

    def floods(self):
        """A server that streams events and never answers (the issue: list to 3.22 GB before its
        timeout, watch to 2.14 GB, log -f to 6.35 GB), and one whose reply never ends (1 MiB
        lines: read whole, 1.06 GB). sectionctl must end with a clear error, its RSS bounded."""
        events = b"".join(b"!opened %d %d s%d\n" % (n, n % 10, n % 10) for n in range(4000))

        def stream(connection, first):
            if first.startswith(b"HISTORY"):
                connection.sendall(b"OK 1\n")  # log -f: the first listing; the flood comes on SUBSCRIBE
                return True
            try:
                while True:
                    connection.sendall(events)
            except OSError:
                return False

        class Flood(FakeServer):
            def serve(self, connection):
                try:
                    for line in connection.makefile("rb"):
                        if line.startswith(b"CLIENT NAME"):
                            connection.sendall(b"OK\n")
                        elif not stream(connection, line):
                            return
                except OSError:
                    pass
                finally:
                    connection.close()

        flood = os.path.join(self.work, "flood.sock")
        server = Flood(flood, None)
        self.cleanup.append(server.close)
        for command in (["--timeout", "20", "list"], ["watch"], ["log", "-f"]):
            status, err, seconds, rss = self.run_measured("--socket", flood, *command, timeout=40, kill_above=256)
            self.check(status == 1 and b"MiB of events before answering" in err and rss < 64 and seconds < 30,
                       f"{command[-1] if command[0] == '--timeout' else ' '.join(command)} against a server streaming events and never answering: exit 1 with "
                       f"a clear error after {seconds:.2f} s, RSS {rss:.0f} MiB (< 64)", repr(err[-400:]))

        line = b"item 0 0 " + b"z" * (1 << 20) + b"\n"

        def endless_reply(request):
            if request.startswith(b"CLIENT NAME"):
                return b"OK\n"
            return line * 320  # 320 MiB, no status line: the client waits for ever without a bound

        endless = os.path.join(self.work, "reply.sock")
        server = FakeServer(endless, endless_reply)
        self.cleanup.append(server.close)
        status, err, seconds, rss = self.run_measured("--socket", endless, "--timeout", "60", "view", timeout=90, kill_above=800)
        self.check(status == 1 and b"reply of more than 256 MiB" in err and rss < 640,
                   f"a reply of 1 MiB lines that never ends is refused after 256 MiB: exit 1 after "
                   f"{seconds:.2f} s, RSS {rss:.0f} MiB (< 640)", repr(err[-400:]))

    # Item 6: socket directories another user could write.

    def socket_directories(self):
        binaries = os.path.join(self.work, "bin")
        os.mkdir(binaries)
        for name in ["sectiond", "sectionctl"]:
            shutil.copy(os.path.join(sdlib.build_dir(), name), binaries)
        os.chmod(self.work, 0o755)
        os.chmod(binaries, 0o755)
        sectiond = os.path.join(binaries, "sectiond")

        def start_daemon(directory, user=None, env=None):
            state = tempfile.mkdtemp(prefix="st.", dir=self.work)
            command = [sectiond, "--state", os.path.join(state, "state.json")]
            if directory:
                command += ["--socket", os.path.join(directory, "control.sock")]
            if user is not None:
                os.chown(state, user, user)
                command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + command
            daemon = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            try:
                return daemon.returncode if daemon.wait(timeout=10) is not None else None, daemon.stderr.read()
            except subprocess.TimeoutExpired:
                # Still running: it did not refuse. Stopped here (SIGTERM removes its socket).
                daemon.terminate()
                daemon.wait()
                return None, daemon.stderr.read()

        cases = [("another user's directory", ATTACKER, 0o777, f"owner uid {ATTACKER}) can be written by other users"),
                 ("another user's directory, mode 0700", ATTACKER, 0o700, f"(mode 700, owner uid {ATTACKER})"),
                 ("a directory everyone can write", 0, 0o777, "(mode 777, owner uid 0) can be written by other users"),
                 ("a directory the group can write", 0, 0o775, "chmod go-w")]
        for name, owner, mode, expected in cases:
            directory = tempfile.mkdtemp(prefix="sock.", dir=self.work)
            os.chown(directory, owner, owner)
            os.chmod(directory, mode)
            status, err = start_daemon(directory)
            self.check(status not in (0, None) and expected.encode() in err and directory.encode() in err,
                       f"sectiond refuses {name}", repr(err))
            # A fake server in the directory, as the attacker would leave it.
            server = FakeServer(os.path.join(directory, "control.sock"), hostile_answer)
            status, out, err, _ = self.run("--socket", os.path.join(directory, "control.sock"), "view")
            server.close()
            self.check(status == 3 and not out and expected.encode() in err and directory.encode() in err,
                       f"sectionctl refuses {name}, naming it and the fix", repr(err))

        sticky = tempfile.mkdtemp(prefix="sticky.", dir=self.work)
        os.chmod(sticky, 0o1777)
        daemon = sdlib.Daemon(directory=sticky, state=False)
        daemon.start()
        status, _, err, _ = self.run("--socket", daemon.socket, "ping")
        self.check(status == 0, "a sticky directory like /tmp is fine for sectiond and sectionctl", repr(err))
        daemon.close()
        planted = os.path.join(sticky, "planted.sock")
        server = FakeServer(planted, hostile_answer)
        os.chown(planted, ATTACKER, ATTACKER)
        status, _, err, _ = self.run("--socket", planted, "view")
        server.close()
        self.check(status == 3 and f"belongs to uid {ATTACKER}".encode() in err,
                   "in a sticky directory, another user's socket is refused", repr(err))

        # The reproduction: no XDG_RUNTIME_DIR, the attacker made /tmp/sectiond-UID first.
        fallback = f"/tmp/sectiond-{VICTIM}"
        if os.path.lexists(fallback):
            self.check(False, f"{fallback} exists already; remove it to run this check")
            return
        os.mkdir(fallback)
        self.cleanup.append(lambda: shutil.rmtree(fallback, ignore_errors=True))
        os.chown(fallback, ATTACKER, ATTACKER)
        os.chmod(fallback, 0o777)
        env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent"}
        status, err = start_daemon(None, user=VICTIM, env=env)
        self.check(status not in (0, None) and fallback.encode() in err,
                   f"the victim's sectiond refuses the attacker's {fallback}", repr(err))
        server = FakeServer(os.path.join(fallback, "control.sock"), hostile_answer)
        status, out, err, _ = self.run("view", user=VICTIM, env=env)
        server.close()
        self.check(status == 3 and not out and fallback.encode() in err and b"written by other users" in err,
                   f"the victim's sectionctl view refuses it too", repr(out + err))

    # /tmp/sectiond-UID must be the user's own as it stands (lstat).

    def own_directory(self):
        """Root's daemon in a directory of root's; another user links the victim's
        /tmp/sectiond-UID to it, or makes that name a directory of their own or root's:
        sectionctl status and lists refuse to call that daemon "your own", naming the path
        and the fix. The victim's own 0700 directory still serves."""
        fallback = f"/tmp/sectiond-{VICTIM}"
        # free_uids() chose VICTIM with no such path: what is there now, socket_directories() made.
        shutil.rmtree(fallback, ignore_errors=True)
        self.cleanup.append(lambda: os.path.islink(fallback) and os.unlink(fallback))
        env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "NO_COLOR": "1"}
        roots = tempfile.mkdtemp(prefix="root.", dir=self.work)
        os.chmod(roots, 0o755)
        daemon = sdlib.Daemon(directory=roots, state=False).start()
        self.cleanup.append(daemon.close)

        def refused(name, *expected):
            for command in (["status"], ["lists"], ["ping"]):
                status, out, err, _ = self.run(*command, user=VICTIM, env=env)
                self.check(status == 3 and b"your own" not in out and fallback.encode() in err
                           and all(e.encode() in err for e in expected),
                           f"{name}: sectionctl {command[0]} refuses it, naming {fallback} and the fix",
                           repr(out + err))

        os.symlink(roots, fallback)
        os.lchown(fallback, ATTACKER, ATTACKER)
        refused("a link another user made to root's daemon's directory", "symbolic link", f"rm {fallback}")
        # The victim's sectiond, whose default socket is there, refuses the link too, even to
        # a directory of the victim's own (it would bind wherever the link leads).
        theirs = tempfile.mkdtemp(prefix="victim.", dir=self.work)
        os.chown(theirs, VICTIM, VICTIM)
        os.unlink(fallback)
        os.symlink(theirs, fallback)
        os.lchown(fallback, ATTACKER, ATTACKER)
        try:
            daemon_run = subprocess.run(
                ["setpriv", f"--reuid={VICTIM}", f"--regid={VICTIM}", "--clear-groups",
                 os.path.join(self.work, "bin", "sectiond"), "--no-state"],
                env=env, capture_output=True, timeout=10)
            status, err = daemon_run.returncode, daemon_run.stderr
        except subprocess.TimeoutExpired as e:
            status, err = None, e.stderr or b""
        self.check(status not in (0, None) and fallback.encode() in err and b"symbolic link" in err
                   and not os.listdir(theirs),
                   f"the victim's sectiond refuses a link at {fallback}, binding nothing", repr(err))
        os.unlink(fallback)
        os.symlink(roots, fallback)  # root's own link: still not the victim's directory
        refused("a link root made", "symbolic link")
        os.unlink(fallback)
        os.mkdir(fallback, 0o755)
        os.chown(fallback, ATTACKER, ATTACKER)
        refused("a directory of another uid's", str(ATTACKER))
        os.chown(fallback, 0, 0)
        daemon.close()
        daemon = sdlib.Daemon(directory=fallback, state=False).start()
        self.cleanup.append(daemon.close)
        refused("a directory of root's with root's daemon in it", "belongs to uid 0")
        daemon.close()
        shutil.rmtree(fallback)
        os.mkdir(fallback, 0o700)
        os.chown(fallback, VICTIM, VICTIM)
        own = sdlib.Daemon(directory=fallback, state=False,
                           wrapper=["setpriv", f"--reuid={VICTIM}", f"--regid={VICTIM}", "--clear-groups"])
        own.start()
        self.cleanup.append(own.close)
        status, out, err, _ = self.run("status", user=VICTIM, env=env)
        self.check(status == 0 and b"your own daemon" in out, "the victim's own 0700 directory: your own daemon",
                   repr(out + err))
        own.close()

    # Items 13 and 15 against a real daemon: nothing is applied.

    def batches_and_encoding(self):
        daemon = sdlib.Daemon(config=sdlib.config_json(["first", "second", "third"])).start()
        self.cleanup.append(daemon.close)

        def state():
            with daemon.connect() as client:
                return client.request("LIST")

        before = state()
        for name, text in [("a stray 'end'", b"TOGGLE 0\nend\nTOGGLE 1\nDELETE second\n"),
                           ("a BATCH inside", b"BATCH\nINSERT end x X\nEND\n"),
                           ("invalid UTF-8", b"RENAME 0 caf\xe9\n")]:
            status, _, err, _ = self.run("--socket", daemon.socket, "batch", stdin=text)
            self.check(status == 2 and b"nothing was sent" in err and state() == before,
                       f"batch with {name}: exit 2, nothing applied", repr(err))
        status, _, err, _ = self.run("--socket", daemon.socket, "rename", "1", b"na\xefve")
        self.check(status == 2 and rb"na\xefve" in err and state() == before,
                   "rename with invalid UTF-8: exit 2, title unchanged", repr(err))
        status, _, _, _ = self.run("--socket", daemon.socket, "batch", stdin=b"TOGGLE 0\n\nRENAME 1 End\n")
        self.check(status == 0 and state() != before, "a good batch still goes through")

    # The shell's history follows no link that someone else planted.

    def history_links(self):
        """Root with another user's XDG_STATE_HOME (`sudo -E`): a history link that user
        planted toward a root-owned 0600 file is not followed, the shell says why and goes
        on; in a directory of one's own the history is kept, but a link there is refused too."""
        daemon = sdlib.Daemon(config=sdlib.config_json(["first"])).start()
        self.cleanup.append(daemon.close)
        secret = os.path.join(self.work, "secret")
        with open(secret, "w") as f:
            f.write("root's own\n")
        os.chmod(secret, 0o600)
        planted = os.path.join(self.work, "theirs")
        own = os.path.join(self.work, "mine")
        linked = os.path.join(self.work, "linked")
        for base, owner in ((planted, ATTACKER), (own, 0), (linked, 0)):
            os.makedirs(os.path.join(base, "sectionctl"), mode=0o755)
            os.chmod(base, 0o755)
            for path in (base, os.path.join(base, "sectionctl")):
                os.chown(path, owner, owner)
        os.chmod(os.path.join(own, "sectionctl"), 0o700)
        os.chmod(os.path.join(linked, "sectionctl"), 0o700)
        os.symlink(secret, os.path.join(planted, "sectionctl", "history"))
        os.symlink(secret, os.path.join(linked, "sectionctl", "history"))

        def shell(state_home, name):
            pane = tmux_pane.Pane(f"sdcs-{os.getpid()}-{name}", 120, 12)
            self.cleanup.append(pane.close)
            pane.type_line(f"XDG_STATE_HOME={state_home} {self.ctl} --socket {daemon.socket} shell")
            started, _ = pane.wait(lambda s: any("sectionctl shell on" in line for line in s), timeout=10)
            pane.type_line("ping")
            answered, screen = pane.wait(lambda s: any("answered in" in line for line in s), timeout=10)
            pane.keys("C-d")
            return started and answered, screen

        with open(secret) as f:
            before = f.read()
        served, screen = shell(planted, "hist1")
        with open(secret) as f:
            after = f.read()
        refused = any("not keeping the shell's history" in line for line in screen)
        self.check(served and refused and after == before and os.path.islink(
            os.path.join(planted, "sectionctl", "history")),
                   "shell: another user's planted history link is not followed, and the shell goes on",
                   f"file now {after!r}" + tmux_pane.show(screen))
        served, screen = shell(linked, "hist2")
        with open(secret) as f:
            after = f.read()
        self.check(served and after == before and any("symbolic link" in line for line in screen),
                   "shell: a history that is a link, even in one's own directory, is refused by name",
                   f"file now {after!r}" + tmux_pane.show(screen))
        served, screen = shell(own, "hist3")
        history = os.path.join(own, "sectionctl", "history")
        kept = open(history).read() if os.path.isfile(history) else ""
        self.check(served and "ping" in kept and not any("not keeping" in line for line in screen),
                   "shell: in a directory of one's own the history is kept", repr(kept) + tmux_pane.show(screen))

    def main(self):
        try:
            self.hostile_text()
            self.hostile_pipe()
            self.hostile_ui()
            self.forged_rows()
            self.timeouts_and_long_lines()
            self.floods()
            self.batches_and_encoding()
            if os.geteuid() == 0:
                self.socket_directories()
                self.own_directory()
                self.history_links()
            else:
                print("SKIP socket directories: planting another user's directory needs root")
        finally:
            for action in reversed(self.cleanup):
                try:
                    action()
                except Exception:  # noqa: BLE001 - cleaning up what may be gone already
                    pass
            shutil.rmtree(self.work, ignore_errors=True)
        return self.results.finish()


if __name__ == "__main__":
    sdlib.require(["tmux"])
    sdlib.require_binary()
    sys.exit(CtlSafety().main())
