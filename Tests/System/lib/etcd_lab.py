#!/usr/bin/env python3
"""Three etcd members on loopback, on free ports, in a temporary directory: the lab the etcd
client's tests (Tests/EtcdTests) and the fleet's suites run against.

    with EtcdLab() as lab:          # three members, healthy; stopped and removed on leaving
        lab.urls                    # ["http://127.0.0.1:C1", ...], the members' client URLs
        lab.kill(0)                 # SIGKILL member 0 (signal.SIGSTOP freezes it)

As a program, for a test in another language (and for a person at a terminal):

    etcd_lab.py serve               # prints "ready URL1,URL2,URL3" (or "SKIP reason", exit 77),
                                    # then reads commands on stdin: "kill N [SIGNAL]", "urls";
                                    # stops everything at end of input, SIGTERM or Ctrl-C
    etcd_lab.py serve --tls         # the same over https, with a CA made for the lab and client
                                    # certificates required: a second line "tls CA CERT KEY"

Each member runs with --pre-vote=true (without it a healed member forces a second election).
Stopping is SIGTERM, a wait, then SIGKILL (a member whose peers are gone may take seconds to
exit on SIGTERM); the members also get SIGKILL if this process dies first (PR_SET_PDEATHSIG),
and the directory (about 123 MB a member: the WAL preallocates 64 MB segments) is removed.
Standard library only.
"""

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
PR_SET_PDEATHSIG = 1
MEMBERS = 3


class LabUnavailable(Exception):
    """etcd is not installed, or the members would not start: the reason, in one line."""


def free_ports(count):
    """`count` ports the kernel had free a moment ago (bound together, so all different)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def healthy(url, timeout=1.0, context=None):
    try:
        with urllib.request.urlopen(url + "/health", timeout=timeout, context=context) as answer:
            return json.loads(answer.read()).get("health") == "true"
    except (OSError, ValueError):
        return False


class EtcdLab:
    def __init__(self, members=MEMBERS, start_timeout=30, tls=False):
        self.members = members
        self.start_timeout = start_timeout
        self.tls = tls
        self.directory = None
        self.processes = []
        self.urls = []

    def tls_files(self):
        """The CA, the client's certificate and key (PEM), with tls=True."""
        return [os.path.join(self.directory, name) for name in ("ca.pem", "client.pem", "client-key.pem")]

    def _make_certificates(self):
        """A CA made here, a server certificate for 127.0.0.1 and a client certificate it signed."""
        if not shutil.which("openssl"):
            raise LabUnavailable("no openssl to make the TLS lab's CA: install openssl")
        d = self.directory

        def openssl(*arguments):
            subprocess.run(["openssl", *arguments], cwd=d, check=True, capture_output=True)

        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        openssl("req", "-x509", *ec, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=etcd-lab CA")
        # The server's certificate is also a client's: etcd 3.4's JSON gateway dials the member's
        # own gRPC port with it, and --client-cert-auth refuses it without clientAuth.
        for name, usage in (("server", "serverAuth,clientAuth"), ("client", "clientAuth")):
            with open(os.path.join(d, name + ".ext"), "w") as ext:
                ext.write(f"subjectAltName=IP:127.0.0.1\nextendedKeyUsage={usage}\n")
            openssl("req", *ec, "-keyout", f"{name}-key.pem", "-out", f"{name}.csr", "-subj", f"/CN=etcd-lab {name}")
            openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                    "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")  # fmt: skip

    def _ssl_context(self):
        import ssl

        context = ssl.create_default_context(cafile=self.tls_files()[0])
        context.load_cert_chain(self.tls_files()[1], self.tls_files()[2])
        return context

    def start(self):
        if not os.access(ETCD, os.X_OK):
            raise LabUnavailable("no etcd binary: install etcd-server (scripts/deps.sh --test)")
        self.directory = tempfile.mkdtemp(prefix="etcd-lab.")
        if self.tls:
            try:
                self._make_certificates()
            except (LabUnavailable, subprocess.CalledProcessError) as error:
                self.stop()
                raise LabUnavailable(f"cannot make the TLS lab's certificates: {error}") from None
        # A port taken between free_ports and etcd's bind fails one attempt, not the run.
        for attempt in range(3):
            reason = self._start_members(f"lab{os.getpid()}-{attempt}")
            if reason is None:
                return self
            self._stop_members()
        self.stop()
        raise LabUnavailable(reason)

    def _start_members(self, token):
        ports = free_ports(2 * self.members)
        clients, peers = ports[: self.members], ports[self.members :]
        names = [f"m{i}" for i in range(self.members)]
        cluster = ",".join(f"{n}=http://127.0.0.1:{p}" for n, p in zip(names, peers))
        scheme = "https" if self.tls else "http"
        self.urls = [f"{scheme}://127.0.0.1:{c}" for c in clients]
        d = self.directory
        tls = (
            ["--cert-file", f"{d}/server.pem", "--key-file", f"{d}/server-key.pem",
             "--trusted-ca-file", f"{d}/ca.pem", "--client-cert-auth"]
            if self.tls else []
        )  # fmt: skip
        for name, client, peer in zip(names, clients, peers):
            data = os.path.join(self.directory, name)
            shutil.rmtree(data, ignore_errors=True)
            command = [
                ETCD, "--name", name, "--data-dir", data,
                "--listen-client-urls", f"{scheme}://127.0.0.1:{client}",
                "--advertise-client-urls", f"{scheme}://127.0.0.1:{client}", *tls,
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", cluster, "--initial-cluster-token", token,
                "--initial-cluster-state", "new", "--pre-vote=true",
                "--logger", "zap", "--log-outputs", os.path.join(self.directory, name + ".log"),
            ]  # fmt: skip
            self.processes.append(
                subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent,
                )
            )
        deadline = time.monotonic() + self.start_timeout
        waiting = set(range(self.members))
        while waiting and time.monotonic() < deadline:
            for index in sorted(waiting):
                if self.processes[index].poll() is not None:
                    return f"etcd member m{index} exited with {self.processes[index].returncode}: {self.log_tail(index)}"
                if healthy(self.urls[index], context=self._ssl_context() if self.tls else None):
                    waiting.discard(index)
            time.sleep(0.1)
        if waiting:
            return f"etcd members {sorted(waiting)} not healthy after {self.start_timeout} s"
        return None

    def log_tail(self, index, lines=3):
        try:
            with open(os.path.join(self.directory, f"m{index}.log"), errors="replace") as log:
                return " | ".join(log.read().splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def kill(self, index, sig=signal.SIGKILL):
        self.processes[index].send_signal(sig)
        if sig == signal.SIGKILL:
            self.processes[index].wait()

    def _stop_members(self):
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.terminate()
        deadline = time.monotonic() + 5
        for process in self.processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes = []

    def stop(self):
        self._stop_members()
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *_):
        self.stop()


def serve(tls=False):
    lab = EtcdLab(tls=tls)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        lab.start()
    except LabUnavailable as reason:
        print(f"SKIP {reason}", flush=True)
        return 77
    try:
        print("ready " + ",".join(lab.urls), flush=True)
        if tls:
            print("tls " + " ".join(lab.tls_files()), flush=True)
        if sys.stdin.isatty():
            print(f"try: etcdctl --endpoints={','.join(lab.urls)} endpoint status; Ctrl-C stops the members and removes their data", file=sys.stderr)
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ["kill"] and len(words) in (2, 3) and words[1].isdigit() and int(words[1]) < lab.members and (len(words) == 2 or words[2] in ("SIGKILL", "SIGSTOP", "SIGCONT", "SIGTERM")):
                lab.kill(int(words[1]), signal.Signals[words[2]] if len(words) == 3 else signal.SIGKILL)
                print("ok", flush=True)
            elif words == ["urls"]:
                print(",".join(lab.urls), flush=True)
            else:
                print(f"error: unknown command {line.strip()!r} (kill N [SIGNAL], urls)", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        lab.stop()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] not in (["serve"], ["serve", "--tls"]):
        sys.exit("usage: etcd_lab.py serve [--tls]")
    sys.exit(serve(tls=sys.argv[2:] == ["--tls"]))
