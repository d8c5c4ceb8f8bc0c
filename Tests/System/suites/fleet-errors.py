#!/usr/bin/env python3
"""What a fleet host shows of etcd's errors, how it holds etcd's password, and how it starts
(docs/FLEET.md, "Errors a client sees", "Credentials and etcd's access control", "Start-up").

- hostile-member: the only member is a small HTTP server answering every call 503 with an
  error text holding an OSC escape, a BEL and CR LF. A change is refused with one printable line
  (nothing more reaches the client), `sectionctl toggle` exits 6 with one line, `sectionctl
  status` exits 0, STATUS's `fleet-error` and the log show the text escaped on one line.
- no-quorum: two of three members killed: a change is refused with `no quorum: 1 of 3 etcd
  members answer`, without the members' texts; `sectionctl toggle` exits 6; STATUS's
  `fleet-error` names each member.
- secrets: a password in an --etcd URL is refused at start without echoing it; a credentials
  file other users can read is refused; credentials sent to http:// members are warned about;
  the process holding them is not dumpable (as root: the daemon run as another uid, whose
  /proc/PID/environ is then root's).
- early-change: a host whose first member is frozen (SIGSTOP) is sent a TOGGLE as soon as its
  socket answers: the change waits for the join and is acknowledged; READY=1 comes once the host
  has joined; STATUS shows the prefix and the fleet's id (the head's).

Needs etcd (else the parts that need it print SKIP). Run one part: fleet-errors.py no-quorum.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from etcd_lab import EtcdLab, LabUnavailable  # noqa: E402
from fleet_lab import FleetLab, Host  # noqa: E402
from sdlib import Daemon, build_dir, config_json, known_parts, run_parts  # noqa: E402

SECTIONS = ["alpha", "beta", "gamma", "delta"]
# A change is answered within 10 s, done or ERR UNAVAILABLE (docs/FLEET.md).
CHANGE_LIMIT = 10.0
HOSTILE = "no \x1b]0;PWNED\x07\r\nSECOND LINE"


def sectionctl(daemon, *words, timeout=30):
    return subprocess.run([os.path.join(build_dir(), "sectionctl"), "--socket", daemon.socket, "--timeout", "20",
                           *words], capture_output=True, text=True, timeout=timeout)  # fmt: skip


def one_line(text):
    return "\x1b" not in text and "\r" not in text and "\x07" not in text


class HostileMember:
    """An HTTP server on loopback that answers every request 503 with HOSTILE as the error."""

    def __init__(self):
        body = ('{"error":%s,"message":%s,"code":14}' % ((jsonstr(HOSTILE),) * 2)).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(503)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def jsonstr(text):
    return json.dumps(text)


def hostile_member(results):
    member = HostileMember()
    daemon = Daemon(config=config_json(SECTIONS), extra_args=["--etcd", member.url, "--host-name", "h0"])
    try:
        daemon.start()
        deadline = time.monotonic() + 5  # the member has answered: its text is the last error
        while "PWNED" not in daemon.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        with daemon.connect(timeout=CHANGE_LIMIT + 10) as client:
            started = time.monotonic()
            reply = client.request("TOGGLE 1")
            took = time.monotonic() - started
            client.sock.settimeout(0.5)
            try:
                extra = client.sock.recv(4096)
            except TimeoutError:
                extra = b""
        results.check(len(reply) == 1 and reply[0].startswith("ERR UNAVAILABLE ") and one_line(reply[0])
                      and not extra and took <= CHANGE_LIMIT,
                      f"a member's hostile error text: the change is refused with one printable line ({took:.1f} s), "
                      "nothing more reaches the client", f"{reply} then {extra!r}")  # fmt: skip
        done = sectionctl(daemon, "toggle", "1")
        results.check(done.returncode == 6 and len(done.stderr.splitlines()) == 1 and one_line(done.stderr),
                      "sectionctl toggle exits 6 (unavailable) with one printable line",
                      f"exit {done.returncode}: {done.stderr!r}")  # fmt: skip
        shown = sectionctl(daemon, "status")
        results.check(shown.returncode == 0 and one_line(shown.stdout), "sectionctl status exits 0, printable",
                      f"exit {shown.returncode}: {shown.stdout!r} {shown.stderr!r}")  # fmt: skip
        with daemon.connect() as client:
            status = client.request("STATUS")
        fleet_error = [line for line in status if line.startswith("status fleet-error ")]
        results.check(all(line.startswith("status ") for line in status[:-1]) and status[-1].startswith("OK")
                      and len(fleet_error) == 1 and "\\x1b]0;PWNED\\x07\\x0d\\x0aSECOND LINE" in fleet_error[0],
                      "STATUS: every line is a status line; fleet-error shows the member's text escaped",
                      str(status))  # fmt: skip
        log = daemon.log()
        results.check(one_line(log) and not any(line.startswith("SECOND LINE") for line in log.splitlines())
                      and "PWNED" in log, "the log shows the member's text escaped, no forged line",
                      log[-600:])  # fmt: skip
    finally:
        daemon.kill()
        daemon.close()
        member.close()


def with_etcd(part, body, **options):
    try:
        etcd = EtcdLab(**options).start()
    except LabUnavailable as reason:
        print(f"SKIP fleet-errors {part}: {reason}", flush=True)
        return
    try:
        body(etcd)
    finally:
        etcd.stop()


def no_leader(etcd, index, timeout=15):
    """Waits until member `index` says it has no leader; True when it did within `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status, answer = etcd.call(index, "/v3/kv/range", {"key": "eA=="}, has_leader=True)
            if status != 200 and "no leader" in str(answer):
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def no_quorum(results):
    def body(etcd):
        with FleetLab(etcd, hosts=1) as fleet:
            host = fleet.hosts[0]  # its members in order 0, 1, 2
            etcd.kill(0)
            etcd.kill(1)
            if not results.check(no_leader(etcd, 2), "two members killed: the third has no leader"):
                return
            started = time.monotonic()
            reply = host.request("TOGGLE 1", timeout=CHANGE_LIMIT + 10)
            took = time.monotonic() - started
            results.check(reply[-1].startswith("ERR UNAVAILABLE no quorum: 1 of 3 etcd members answer")
                          and "before:" not in reply[-1] and "etcdserver" not in reply[-1] and took <= CHANGE_LIMIT,
                          f"no quorum: the refusal says so in one line, without the members' texts ({took:.1f} s)",
                          str(reply))  # fmt: skip
            done = sectionctl(host.daemon, "toggle", "1")
            results.check(done.returncode == 6 and "no quorum" in done.stderr,
                          "sectionctl toggle exits 6, an unavailable fleet, not 1", f"exit {done.returncode}: {done.stderr}")
            error = host.status().get("fleet-error", "")
            results.check(all(url in error for url in etcd.urls), "STATUS's fleet-error names every member tried",
                          error)

    with_etcd("no-quorum", body)


def start_refused(arguments, environment=None, timeout=10):
    """sectiond with `arguments` that is expected to exit at start: (exit status, its stderr)."""
    directory = tempfile.mkdtemp(prefix="fe.", dir="/tmp")
    try:
        daemon = Daemon(config=config_json(SECTIONS), extra_args=arguments, directory=directory)
        daemon.environment.update(environment or {})
        try:
            daemon.start(timeout=timeout)
        except RuntimeError:
            return daemon.proc.returncode, daemon.log()
        daemon.kill()
        return 0, daemon.log()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def secrets(results):
    code, log = start_refused(["--etcd", "http://alpha:S3cretPW@127.0.0.1:9"])
    results.check(code not in (0, None) and "S3cretPW" not in log and "--etcd-credentials" in log,
                  "a password in an --etcd URL is refused at start, naming where credentials go, not echoed",
                  f"exit {code}: {log[-400:]}")  # fmt: skip
    directory = tempfile.mkdtemp(prefix="fe.", dir="/tmp")
    try:
        credentials = os.path.join(directory, "etcd")
        with open(credentials, "w") as file:
            file.write("fleet:fleetpw\n")
        os.chmod(credentials, 0o644)
        code, log = start_refused(["--etcd", "https://127.0.0.1:9", "--etcd-cacert", "/dev/null",
                                   "--etcd-credentials", credentials])  # fmt: skip
        results.check(code not in (0, None) and "chmod 600" in log and "fleetpw" not in log,
                      "a credentials file other users can read is refused, saying how to fix it",
                      f"exit {code}: {log[-400:]}")  # fmt: skip
        os.chmod(credentials, 0o600)
        daemon = Daemon(config=config_json(SECTIONS),
                        extra_args=["--etcd", "http://127.0.0.1:9", "--etcd-credentials", credentials])  # fmt: skip
        try:
            daemon.start()
            time.sleep(0.3)
            log = daemon.log()
            results.check("in clear" in log and "http://127.0.0.1:9" in log and "fleetpw" not in log,
                          "credentials for http:// members: a warning at start", log[-400:])
        finally:
            daemon.kill()
            daemon.close()
        if os.geteuid() != 0:
            print("SKIP fleet-errors secrets: not dumpable (needs root to run the daemon as another user)")
            return
        # As another user, whose own /proc/PID would be its own: a process that is not dumpable
        # has the files of /proc/PID owned by root.
        nobody = 65534
        home = tempfile.mkdtemp(prefix="fe.", dir="/tmp")
        os.chmod(home, 0o755)
        os.chown(home, nobody, nobody)
        os.chown(credentials, nobody, nobody)
        os.chmod(directory, 0o711)
        daemon = Daemon(config=config_json(SECTIONS), directory=home,
                        wrapper=["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups",
                                 "--pdeathsig=SIGKILL"],
                        extra_args=["--etcd", "http://127.0.0.1:9", "--etcd-credentials", credentials])  # fmt: skip
        try:
            daemon.start()
            owner = os.stat(f"/proc/{daemon.pid}/environ").st_uid
            results.check(owner == 0, f"with etcd's password in memory the daemon is not dumpable "
                          f"(/proc/PID/environ owned by uid {owner}, the daemon runs as {nobody})")  # fmt: skip
        finally:
            daemon.kill()
            shutil.rmtree(home, ignore_errors=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class NotifySocket:
    """A datagram socket for sd_notify: records each message with the time it came."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)

    def wait_for(self, word, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                message = self.sock.recv(4096).decode(errors="replace")
            except TimeoutError:
                return False
            if word in message.split("\n"):
                return True
        return False

    def close(self):
        self.sock.close()


def early_change(results):
    def body(etcd):
        with FleetLab(etcd, hosts=1) as fleet:
            etcd.freeze(1)
            try:
                host = Host(fleet, 1, fleet.configs[0])  # its first member is member 1
                fleet.hosts.append(host)
                notify = NotifySocket(fleet.directory)
                host.daemon.environment["NOTIFY_SOCKET"] = notify.path
                try:
                    host.start()
                    started = time.monotonic()
                    toggle = subprocess.Popen([os.path.join(build_dir(), "sectionctl"), "--socket", host.socket,
                                               "--timeout", "20", "toggle", "1"], stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True)  # fmt: skip
                    ready = notify.wait_for("READY=1", CHANGE_LIMIT)
                    status = host.status()
                    results.check(ready and status.get("fleet-state") != "joining",
                                  "READY=1 comes once the host has joined", str(status))
                    out, err = toggle.communicate(timeout=30)
                    took = time.monotonic() - started
                    results.check(toggle.returncode == 0 and took <= CHANGE_LIMIT,
                                  f"a TOGGLE right after start, the first member frozen, waits for the join and is "
                                  f"done ({took:.1f} s)", f"exit {toggle.returncode}: {out} {err}")  # fmt: skip
                finally:
                    notify.close()
                head = subprocess.run(["etcdctl", f"--endpoints={etcd.urls[0]}", "get", "--print-value-only",
                                       fleet.prefix + "head"], capture_output=True, text=True, timeout=20)  # fmt: skip
                words = head.stdout.split()
                results.check(status.get("fleet-prefix") == fleet.prefix and len(words) == 3
                              and status.get("fleet-id") == words[2],
                              "STATUS shows the fleet's prefix and id (the head's)", f"{status} head {head.stdout!r}")
            finally:
                etcd.thaw(1)

    with_etcd("early-change", body)


PARTS = {"hostile-member": hostile_member, "no-quorum": no_quorum, "secrets": secrets, "early-change": early_change}


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    known_parts(PARTS, sys.argv[1:])  # before any lab starts; run_parts checks the binary
    sys.exit(run_parts(PARTS, sys.argv[1:]))
