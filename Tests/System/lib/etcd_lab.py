#!/usr/bin/env python3
"""Three etcd members on loopback, on free ports, in a temporary directory: the lab the etcd
client's tests (Tests/EtcdTests) and the fleet's suites run against.

    with EtcdLab() as lab:          # three members, healthy; stopped and removed on leaving
        lab.urls                    # ["http://127.0.0.1:C1", ...], the members' client URLs
        lab.kill(0)                 # SIGKILL member 0 (signal.SIGSTOP freezes it)

As a program, for a test in another language (and for a person at a terminal):

    etcd_lab.py serve               # prints "ready URL1,URL2,URL3" (or "SKIP reason", exit 77),
                                    # then reads commands on stdin: "kill N [SIGNAL]", "urls",
                                    # "alarm ACTIVATE|DEACTIVATE" (etcd's NOSPACE alarm);
                                    # stops everything at end of input, SIGTERM or Ctrl-C
    etcd_lab.py serve --tls         # the same over https, with a CA made for the lab and client
                                    # certificates required: a second line "tls CA CERT KEY"
    etcd_lab.py serve --partition   # the partition mode (below): a second line "netns PATH", and
                                    # the commands "isolate N", "heal N", "freeze N", "thaw N"

The partition mode (EtcdLab(partition=True); root, util-linux nsenter/setpriv, iproute2, nftables):

    lab.isolate(1)                  # member 1 cut from its peers, both ways; its clients still reach it
    lab.heal(1)                     # undone
    lab.freeze(2); lab.thaw(2)      # SIGSTOP / SIGCONT
    lab.netns_command()             # ["nsenter", "--net=..."]: a prefix that runs a client in the lab's
                                    # network, where the members' URLs are (sectiond, etcdctl)
    lab.call(0, "/v3/kv/put", {...}, has_leader=True)   # the JSON gateway of member 0, from here

The members run in a network namespace of their own, each under a uid of its own (UID_BASE + N,
unused by the machine: no user is made), and the namespace's nftables table marks each new
connection to a peer port: by the dialing uid (member N dials) and by the port (member N is
dialed). Isolating N adds a rule dropping connections with N's mark, in both directions, and the
established peer streams with them (they were marked when they began); clients dial client ports
and are never marked. The namespace is not named (`ip netns add` would leave its /run/netns
mount, and the table in it, behind a test killed with SIGKILL): the lab process holds it by a file
descriptor, so the kernel frees it, table and all, once the lab and its members are gone, and
the members get SIGKILL when the lab's process dies (setpriv --pdeathsig: changing the uid
clears the parent-death signal). Clients run inside it (netns_command()) rather than through
forwarders on the host: the sectiond's Unix sockets are paths on the shared file system, so they
stay where the tests look for them, and a forwarder would accept connections for a member that is
dead, hiding the refusal a client must see.

Each member runs with --pre-vote=true (without it a healed member forces a second election).
Stopping is SIGTERM, a wait, then SIGKILL (a member whose peers are gone may take seconds to
exit on SIGTERM); the members also get SIGKILL if this process dies first (PR_SET_PDEATHSIG),
and the directory (about 123 MB a member: the WAL preallocates 64 MB segments) is removed, by
the lab's guard process (guard()) when this one dies without stop().
Standard library only.
"""

import base64
import ctypes
import http.client
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
PR_SET_PDEATHSIG = 1
CLONE_NEWNET = 0x40000000
MEMBERS = 3
# The partition mode's member uids: above systemd's container range (524288-1879048191) and below
# 2^31 (ps shows larger ones as negative); checked unused by the machine's users at start.
UID_BASE = 1879100000
NFT_TABLE = "etcdlab"


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


def running(pid):
    """True while `pid` runs (a zombie waiting for its reaper does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stop_processes(processes, grace=5.0):
    """Stops subprocess.Popen `processes`: SIGCONT (a frozen one could not act on the rest), SIGTERM,
    `grace` seconds for all of them, then SIGKILL (a member whose peers are gone may take seconds
    to exit on SIGTERM)."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def guard(directory):
    """The lab's guard (`etcd_lab.py guard DIR`, started by the lab in a session of its own, so that
    Ctrl-C does not reach it): reads the members' pids from the lab until end of input, which
    comes when the lab stops or its process dies however it dies; then waits for the members to
    be gone (they get SIGKILL with the lab's process) and removes the directory, which a lab
    killed with SIGKILL would leave behind (123 MB a member)."""
    pids = [int(line) for line in sys.stdin]
    deadline = time.monotonic() + 10
    while any(map(running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    shutil.rmtree(directory, ignore_errors=True)


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _in_thread(function):
    """function() run on a thread of its own, its result or exception returned or raised here: a
    setns() there changes that thread's network namespace only, and the thread ends with it."""
    outcome = {}

    def run():
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed to the caller
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class _NamespaceConnection(http.client.HTTPConnection):
    """HTTP over a TCP socket made inside a network namespace (a file descriptor to it): a socket
    stays in the namespace it was made in, whichever thread then uses it."""

    def __init__(self, netns_fd, host, port, timeout):
        super().__init__(host, port, timeout=timeout)
        self.netns_fd = netns_fd

    def connect(self):
        def make():
            if _libc().setns(self.netns_fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns into the lab's network namespace")
            return socket.socket(socket.AF_INET, socket.SOCK_STREAM)

        self.sock = _in_thread(make)
        self.sock.settimeout(self.timeout)
        try:
            self.sock.connect((self.host, self.port))
        except OSError:
            self.sock.close()
            raise


class EtcdLab:
    def __init__(self, members=MEMBERS, start_timeout=30, tls=False, partition=False, flags=()):
        """`flags`: further arguments of every member (`--quota-backend-bytes=N`)."""
        if tls and partition:
            raise ValueError("the partition mode runs without TLS")
        self.members = members
        self.start_timeout = start_timeout
        self.tls = tls
        self.partition = partition
        self.flags = list(flags)
        self.directory = None
        self.processes = []
        self.urls = []
        self.peer_ports = []
        self.netns_fd = None
        self.isolated = set()
        self._guard = None

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
        if self.partition:
            self._check_partition_tools()
        self.directory = tempfile.mkdtemp(prefix="etcd-lab.")
        self._guard = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "guard", self.directory], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True, text=True,
        )  # fmt: skip
        if self.partition:
            os.chmod(self.directory, 0o711)  # the members' uids reach their own directories in it
            try:
                self._make_namespace()
            except (OSError, subprocess.SubprocessError) as error:
                self.stop()
                raise LabUnavailable(f"cannot make the lab's network namespace: {error}") from None
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

    # The partition mode's machinery.

    def _check_partition_tools(self):
        if os.geteuid() != 0:
            raise LabUnavailable("the partition mode needs root (a network namespace, nftables, other uids)")
        missing = [tool for tool in ("nsenter", "unshare", "setpriv", "ip", "nft") if shutil.which(tool) is None]
        if missing:
            raise LabUnavailable(f"no {', '.join(missing)}: install util-linux, iproute2, nftables (scripts/deps.sh --test)")
        for index in range(self.members):
            try:
                taken = pwd.getpwuid(UID_BASE + index).pw_name
            except KeyError:
                continue
            raise LabUnavailable(f"uid {UID_BASE + index} is the machine's user {taken}; the lab's members need it unused")

    def _make_namespace(self):
        """A network namespace with its loopback up, held by a file descriptor of this process."""
        holder = subprocess.Popen(
            ["unshare", "--net", "sh", "-c", "ip link set lo up && echo up && exec cat >/dev/null"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_die_with_parent,
        )  # fmt: skip
        try:
            if holder.stdout.readline().strip() != b"up":
                raise OSError(f"unshare --net: {holder.stderr.read().decode(errors='replace').strip()}")
            self.netns_fd = os.open(f"/proc/{holder.pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            holder.stdin.close()
            holder.wait()
            holder.stdout.close()
            holder.stderr.close()

    def netns_path(self):
        """A path to the lab's network namespace, valid while this process holds it."""
        return f"/proc/{os.getpid()}/fd/{self.netns_fd}"

    def netns_command(self):
        """The prefix that runs a command in the lab's network (where the members' URLs are)."""
        return ["nsenter", f"--net={self.netns_path()}"]

    def _nft(self, script):
        subprocess.run(self.netns_command() + ["nft", "-f", "-"], input=script.encode(), check=True,
                       capture_output=True)  # fmt: skip

    def _mark(self, index):
        return 1 << index

    def _install_marks(self, uids):
        peers = ", ".join(str(port) for port in self.peer_ports)
        marks = "\n".join(
            f"    ct state new meta skuid {uid} tcp dport {{ {peers} }} ct mark set ct mark | {self._mark(i):#x}\n"
            f"    ct state new tcp dport {port} ct mark set ct mark | {self._mark(i):#x}"
            for i, (uid, port) in enumerate(zip(uids, self.peer_ports))
        )
        # "table" then "delete table": a table of an earlier attempt goes, and none is no error.
        self._nft(
            f"table inet {NFT_TABLE}\ndelete table inet {NFT_TABLE}\n"
            f"table inet {NFT_TABLE} {{\n  chain cut {{\n  }}\n  chain out {{\n"
            f"    type filter hook output priority 0; policy accept;\n{marks}\n    jump cut\n  }}\n}}\n"
        )

    def _write_cuts(self):
        rules = "".join(
            f"add rule inet {NFT_TABLE} cut ct mark & {self._mark(i):#x} != 0 drop\n" for i in sorted(self.isolated)
        )
        self._nft(f"flush chain inet {NFT_TABLE} cut\n{rules}")

    def isolate(self, index):
        """Cuts member `index` from its peers, both ways (its clients still reach it)."""
        self.isolated.add(index)
        self._write_cuts()

    def heal(self, index):
        """Undoes isolate(index)."""
        self.isolated.discard(index)
        self._write_cuts()

    def freeze(self, index, timeout=2.0):
        """SIGSTOP to member `index`, returning once all its threads have stopped (a signal is
        delivered to each thread when it next runs: a request could be answered in between)."""
        self.kill(index, signal.SIGSTOP)
        task = f"/proc/{self.processes[index].pid}/task"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = []
            for thread in os.listdir(task):
                try:
                    with open(f"{task}/{thread}/stat") as f:
                        states.append(f.read().rsplit(")", 1)[1].split()[0])
                except OSError:  # a thread that ended meanwhile
                    pass
            if all(state in "TtZX" for state in states):
                return
            time.sleep(0.01)
        raise OSError(f"member m{index} did not stop within {timeout} s of SIGSTOP")

    def thaw(self, index):
        self.kill(index, signal.SIGCONT)

    def call(self, index, path, body=None, has_leader=False, timeout=2.0):
        """POSTs `body` (JSON) to member `index`'s gateway at `path` from this process, in the lab's
        network in the partition mode; returns (HTTP status, the answer's JSON). OSError when the
        member does not answer in `timeout` seconds."""
        host, port = self.urls[index].rsplit("/", 1)[1].rsplit(":", 1)
        if self.partition:
            connection = _NamespaceConnection(self.netns_fd, host, int(port), timeout)
        elif self.tls:
            connection = http.client.HTTPSConnection(host, int(port), timeout=timeout, context=self._ssl_context())
        else:
            connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        headers = {"Content-Type": "application/json"}
        if has_leader:
            headers["Grpc-Metadata-hasleader"] = "true"
        try:
            if body is None:
                connection.request("GET", path, headers=headers)
            else:
                connection.request("POST", path, body=json.dumps(body), headers=headers)
            answer = connection.getresponse()
            data = answer.read()
        except http.client.HTTPException as error:
            raise OSError(f"member {index}: {error!r}") from None
        finally:
            connection.close()
        try:
            return answer.status, json.loads(data)
        except ValueError:
            raise OSError(f"member {index} answered {answer.status} with no JSON: {data[:200]!r}") from None

    def alarm(self, action):
        """Raises (ACTIVATE) or disarms (DEACTIVATE) etcd's NOSPACE alarm, as etcd does at its quota."""
        status, answer = self.call(0, "/v3/maintenance/status", {})
        if status != 200:
            raise OSError(f"status: {answer}")
        member = answer["header"]["member_id"]
        status, answer = self.call(0, "/v3/maintenance/alarm", {"action": action, "memberID": member, "alarm": "NOSPACE"})
        if status != 200:
            raise OSError(f"alarm {action}: {answer}")

    def value(self, key, index=0):
        """The value of `key` (text) as bytes, read on member `index`; None when there is none."""
        status, answer = self.call(index, "/v3/kv/range", {"key": base64.b64encode(key.encode()).decode()}, timeout=10)
        if status != 200:
            raise OSError(f"range of {key}: {answer}")
        return base64.b64decode(answer["kvs"][0].get("value", "")) if answer.get("kvs") else None

    def database(self):
        """Every member's database size (`dbSize`, which etcd checks its quota against) and the
        alarms any member reports (`memberID:N alarm:NOSPACE`)."""
        sizes, alarms = [], set()
        for index in range(len(self.urls)):
            status, answer = self.call(index, "/v3/maintenance/status", {}, timeout=10)
            if status != 200:
                raise OSError(f"status of member {index}: {answer}")
            sizes.append(int(answer.get("dbSize", 0)))
            alarms.update(answer.get("errors", []))
        return sizes, alarms

    def _healthy(self, index):
        try:
            status, answer = self.call(index, "/health", timeout=1.0)
            return status == 200 and answer.get("health") == "true"
        except OSError:
            return False

    def _start_members(self, token):
        ports = free_ports(2 * self.members)
        clients, peers = ports[: self.members], ports[self.members :]
        self.peer_ports = peers
        uids = [UID_BASE + i for i in range(self.members)]
        if self.partition:
            self._install_marks(uids)
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
        for name, client, peer, uid in zip(names, clients, peers, uids):
            data = os.path.join(self.directory, name)
            log = os.path.join(self.directory, name + ".log")
            shutil.rmtree(data, ignore_errors=True)
            prefix = []
            if self.partition:
                os.mkdir(data, 0o700)
                open(log, "w").close()
                for path in (data, log):
                    os.chown(path, uid, uid)
                prefix = self.netns_command() + [
                    "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--pdeathsig=SIGKILL"]
            command = prefix + [
                ETCD, "--name", name, "--data-dir", data,
                "--listen-client-urls", f"{scheme}://127.0.0.1:{client}",
                "--advertise-client-urls", f"{scheme}://127.0.0.1:{client}", *tls,
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", cluster, "--initial-cluster-token", token,
                "--initial-cluster-state", "new", "--pre-vote=true",
                "--logger", "zap", "--log-outputs", log, *self.flags,
            ]  # fmt: skip
            self.processes.append(
                subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent,
                )
            )
            self._guard.stdin.write(f"{self.processes[-1].pid}\n")
            self._guard.stdin.flush()
        deadline = time.monotonic() + self.start_timeout
        waiting = set(range(self.members))
        while waiting and time.monotonic() < deadline:
            for index in sorted(waiting):
                if self.processes[index].poll() is not None:
                    return f"etcd member m{index} exited with {self.processes[index].returncode}: {self.log_tail(index)}"
                if self._healthy(index):
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
        stop_processes(self.processes)
        self.processes = []

    def stop(self):
        self._stop_members()
        self.isolated = set()
        if self.netns_fd is not None:
            os.close(self.netns_fd)  # the namespace, and the table in it, go with the last holder
            self.netns_fd = None
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
        if self._guard is not None:
            self._guard.stdin.close()
            self._guard.wait()
            self._guard = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *_):
        self.stop()


def serve(tls=False, partition=False):
    lab = EtcdLab(tls=tls, partition=partition)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        lab.start()
    except LabUnavailable as reason:
        print(f"SKIP {reason}", flush=True)
        return 77
    commands = {"kill": None}
    if partition:
        commands.update(isolate=lab.isolate, heal=lab.heal, freeze=lab.freeze, thaw=lab.thaw)
    usage = "kill N [SIGNAL], " + "".join(f"{name} N, " for name in commands if name != "kill") + "alarm ACTIVATE|DEACTIVATE, urls"
    try:
        print("ready " + ",".join(lab.urls), flush=True)
        if tls:
            print("tls " + " ".join(lab.tls_files()), flush=True)
        if partition:
            print("netns " + lab.netns_path(), flush=True)
        if sys.stdin.isatty():
            enter = " ".join(lab.netns_command()) + " " if partition else ""
            print(f"try: {enter}etcdctl --endpoints={','.join(lab.urls)} endpoint status; Ctrl-C stops the members and removes their data", file=sys.stderr)
        for line in sys.stdin:
            words = line.split()
            member = len(words) >= 2 and words[1].isdigit() and int(words[1]) < lab.members
            if words[:1] == ["kill"] and member and len(words) in (2, 3) and (len(words) == 2 or words[2] in ("SIGKILL", "SIGSTOP", "SIGCONT", "SIGTERM")):
                lab.kill(int(words[1]), signal.Signals[words[2]] if len(words) == 3 else signal.SIGKILL)
                print("ok", flush=True)
            elif words[:1] != ["kill"] and words[:1] and words[0] in commands and member and len(words) == 2:
                commands[words[0]](int(words[1]))
                print("ok", flush=True)
            elif words[:1] == ["alarm"] and words[1:] in (["ACTIVATE"], ["DEACTIVATE"]):
                lab.alarm(words[1])
                print("ok", flush=True)
            elif words == ["urls"]:
                print(",".join(lab.urls), flush=True)
            else:
                print(f"error: unknown command {line.strip()!r} ({usage})", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        lab.stop()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["guard"] and len(sys.argv) == 3:
        sys.exit(guard(sys.argv[2]))
    options = sys.argv[2:]
    if sys.argv[1:2] != ["serve"] or len(options) > 1 or not set(options) <= {"--tls", "--partition"}:
        sys.exit("usage: etcd_lab.py serve [--tls | --partition]")
    sys.exit(serve(tls=options == ["--tls"], partition=options == ["--partition"]))
