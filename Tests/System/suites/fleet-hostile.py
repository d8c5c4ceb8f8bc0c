#!/usr/bin/env python3
"""What a fleet host reads from etcd is input (docs/FLEET.md "A damaged key", SECURITY.md "The
fleet"): three sectiond on three etcd members, the keys under the fleet's prefix written as a
hostile party would, through etcd's own gateway.

Each part plants a bad key and checks that no host dies, every host's revision only goes
forward, a change on every host is refused within the commit bound with ERR UNAVAILABLE naming
the key, STATUS's fleet-error names it, each host logs it once, the fleet's requests to etcd
stay within about one a second per host, no subscriber gets a line the protocol does not define
(nor a !state flood); then fixes the key and checks that every host takes changes again.

- bad-entries: at the next log key, in turn: junk, a wrong checksum, a change that does not
  apply, an ESC in a title, an author with ESC, CR and invalid UTF-8, a header naming the
  revision before, a reload whose events say `!bye` and `OK 31337` and whose history breaks
  lines; a gap (the entry after the next); a state entry at revision 9223372036854775806.
- bad-head: a head at 2^64-1, a head older than the hosts' revision (a restored backup).
- bad-snapshot: a host that joins meets a snapshot pointer claiming 2^62 bytes, one claiming a
  billion pieces, and a value that is neither pointer nor state: it stays up, refuses changes,
  and joins once the snapshot is restored; the running hosts serve on.
- no-head: the head deleted, a host with another list starts: it does not seed, the snapshot is
  left as it was, the running hosts refuse changes; the head put back, all take changes and the
  new host serves the fleet's list.
- restore-backup: the prefix put back as it was three changes before: every host refuses changes
  (its revision is past the head's); the operator's steps of docs/FLEET.md (stop, delete each
  state file's fleet mark, start) make every host serve the backup's revision and take changes.
- provenance: host 2 runs with --history 0; its change is named in host 0's history as made
  through h2.

Needs etcd (else one SKIP line). Run one part: fleet-hostile.py bad-head.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import base64
import contextlib
import http.client
import os
import re
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fleet_lab import FleetError, Host, run_fleet_suite  # noqa: E402
from sdlib import config_json  # noqa: E402
from web_socket import wait_for  # noqa: E402

LAB = {}
# A change waits at most 8 s for etcd (Fleet.commitTimeout); the margin is for a loaded machine.
CHANGE_LIMIT = 9.0
# A fixed key is read again within 4 s (Fleet.damageRetryMost); the rest is a loaded machine.
RESUME_LIMIT = 15.0
# How long a bad key stays before the checks of the rate and the log.
BAD_FOR = 4.0
# About a request a second per host for one bad key, with the poll's every 2 s beside it.
REQUESTS_PER_HOST_SECOND = 2.0
EVENT = re.compile(r"!(opened|closed|mode|reload|inserted|deleted|moved|renamed|items|state) \d+( [\x20-\x7e]*)?")


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def group(body, revision):
    """A journal group: `body`'s lines and its checksummed commit line, as a host writes it."""
    covered = body + f"commit {revision} ".encode()
    return covered + f"{crc32c(covered):08x}\n".encode()


def entry(revision, body, header_revision=None):
    header = f"sectiond-fleet 1 {revision if header_revision is None else header_revision} h9 evil.1\n"
    return header.encode() + group(body, revision)


def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


class Keys:
    """The fleet's keys, read and written through member 0's gateway."""

    def __init__(self, fleet):
        self.etcd = fleet.etcd
        self.prefix = fleet.prefix

    def call(self, path, body):
        status, answer = self.etcd.call(0, path, body)
        if status != 200:
            raise FleetError(f"etcd {path}: {status} {answer}")
        return answer

    def put(self, key, value):
        self.call("/v3/kv/put", {"key": b64(self.prefix + key), "value": b64(value)})

    def delete(self, key):
        self.call("/v3/kv/deleterange", {"key": b64(self.prefix + key)})

    def get(self, key):
        kvs = self.call("/v3/kv/range", {"key": b64(self.prefix + key)}).get("kvs", [])
        return base64.b64decode(kvs[0].get("value", "")) if kvs else None

    def head(self):
        revision, snapshot, fleet_id = self.get("head").decode().split(" ")
        return int(revision), int(snapshot), fleet_id

    def everything(self):
        """Every key under the prefix and its value: a backup of the fleet."""
        answer = self.call("/v3/kv/range", {"key": b64(self.prefix), "range_end": b64(self.prefix[:-1] + "0")})
        return {base64.b64decode(kv["key"]).decode()[len(self.prefix):]: base64.b64decode(kv.get("value", ""))
                for kv in answer.get("kvs", [])}  # fmt: skip

    def restore(self, backup):
        """The prefix as `backup` has it, as etcd restored from a backup holds it."""
        self.call("/v3/kv/deleterange", {"key": b64(self.prefix), "range_end": b64(self.prefix[:-1] + "0")})
        for key, value in backup.items():
            self.put(key, value)

    @staticmethod
    def log(revision):
        return f"log/{revision:020d}"

    def requests(self):
        """The gRPC calls every member handled so far (the gateway's included), from /metrics."""
        total = 0
        for url in self.etcd.urls:
            host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
            connection = http.client.HTTPConnection(host, int(port), timeout=5)
            try:
                connection.request("GET", "/metrics")
                text = connection.getresponse().read().decode()
            finally:
                connection.close()
            for line in text.splitlines():
                if line.startswith("grpc_server_started_total{") and 'grpc_type="unary"' in line:
                    total += float(line.rsplit(" ", 1)[1])
        return total


class Listener:
    """A subscriber on one host that keeps every byte it is sent, to check each line."""

    def __init__(self, host):
        self.host = host
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(host.socket)
        self.sock.sendall(b"SUBSCRIBE\n")
        self.data = b""
        while not re.search(rb"(^|\n)OK \d+\n", self.data):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise FleetError(f"{host.name} closed the subscription")
            self.data += chunk
        self.data = b""
        self.sock.setblocking(False)

    def lines(self):
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                self.data += chunk
        except BlockingIOError:
            pass
        return self.data.split(b"\n")[:-1]

    def close(self):
        self.sock.close()


class Watch:
    """The hosts' revisions, logs and subscribers while a bad key stays: what must hold of them."""

    def __init__(self, results, fleet, what):
        self.results = results
        self.fleet = fleet
        self.what = what
        self.revisions = {host.name: host.revision() for host in fleet.hosts}
        self.log_start = {host.name: len(host.log()) for host in fleet.hosts}
        self.listeners = [Listener(host) for host in fleet.hosts]

    def forward(self, when):
        """Every host is up and its revision did not go back."""
        problems = []
        for host in self.fleet.hosts:
            if not host.alive():
                problems.append(f"{host.name} died")
                continue
            revision = host.revision()
            if revision < self.revisions[host.name]:
                problems.append(f"{host.name} went from {self.revisions[host.name]} back to {revision}")
            self.revisions[host.name] = max(revision, self.revisions[host.name])
        self.results.check(not problems, f"{self.what}: {when}, every host is up and its revision only went forward",
                           "; ".join(problems))  # fmt: skip

    def refused(self, key):
        """A TOGGLE on every host is answered within CHANGE_LIMIT with ERR UNAVAILABLE naming `key`,
        and STATUS's fleet-error names it."""
        for host in self.fleet.hosts:
            started = time.monotonic()
            try:
                reply = host.request("TOGGLE 0", timeout=CHANGE_LIMIT + 5)
            except OSError as error:
                reply = [repr(error)]
            took = time.monotonic() - started
            self.results.check(reply[-1].startswith("ERR UNAVAILABLE ") and key in reply[-1] and took < CHANGE_LIMIT,
                               f"{self.what}: {host.name} refuses a change naming {key}",
                               f"{reply[-1]!r} after {took:.2f} s")  # fmt: skip
            error = host.status().get("fleet-error", "")
            self.results.check(key in error, f"{self.what}: {host.name}'s STATUS shows it in fleet-error", repr(error))

    def stays(self, key):
        """While the key stays BAD_FOR seconds: each host logs it once, and the fleet's requests to
        etcd stay within REQUESTS_PER_HOST_SECOND a host."""
        keys = Keys(self.fleet)
        before = keys.requests()
        time.sleep(BAD_FOR)
        rate = (keys.requests() - before) / BAD_FOR / len(self.fleet.hosts)
        self.results.check(rate <= REQUESTS_PER_HOST_SECOND,
                           f"{self.what}: at most {REQUESTS_PER_HOST_SECOND:g} requests a second per host to etcd",
                           f"{rate:.1f} a second per host")  # fmt: skip
        for host in self.fleet.hosts:
            logged = [line for line in host.log()[self.log_start[host.name]:].splitlines() if key in line]
            errors = [line for line in logged if "refuses changes until" in line]
            self.results.check(len(errors) == 1, f"{self.what}: {host.name} logs it once", f"{len(errors)} times")

    def resumes(self):
        """Every host takes a change within RESUME_LIMIT; the hosts converge."""
        for host in self.fleet.hosts:
            deadline = time.monotonic() + RESUME_LIMIT
            reply = ["-"]
            while time.monotonic() < deadline:
                try:
                    reply = host.request("TOGGLE 1", timeout=CHANGE_LIMIT + 5)
                except OSError as error:
                    reply = [repr(error)]
                if reply[-1].startswith("OK "):
                    break
                time.sleep(0.3)
            self.results.check(reply[-1].startswith("OK "), f"{self.what}: fixed, {host.name} takes changes again",
                               repr(reply[-1]))  # fmt: skip
        converges(self.results, self.fleet, f"{self.what}: fixed")

    def finish(self):
        """What the subscribers got: only the protocol's event lines, printable, no !state flood."""
        for listener in self.listeners:
            lines = listener.lines()
            listener.close()
            bad = [line for line in lines if not EVENT.fullmatch(line.decode("utf-8", "replace"))]
            states = sum(1 for line in lines if line.startswith(b"!state "))
            self.results.check(not bad and states <= 1,
                               f"{self.what}: {listener.host.name}'s subscriber got only the protocol's events",
                               f"{bad[:3]!r}, {states} !state")  # fmt: skip


def converges(results, fleet, what):
    try:
        fleet.converged(timeout=RESUME_LIMIT)
        problem = ""
    except FleetError as error:
        problem = str(error)
    results.check(not problem, f"{what}, every host applies the same revision", problem)


def stops_then_resumes(results, what, key, plant, fix):
    """Plants a bad key (`plant`), checks the hosts stop at it, fixes it (`fix`), checks they go on."""
    fleet = LAB["fleet"]
    watch = Watch(results, fleet, what)
    try:
        plant()
        watch.refused(key)
        watch.forward("the key planted")
        watch.stays(key)
        fix()
        watch.resumes()
        watch.forward("the key fixed")
    finally:
        watch.finish()


def state(revision, history=""):
    """A state as the state file holds it: one section, `history` its history's JSON strings."""
    return (f'{{"format":2,"revision":{revision},"mode":"multi","sections":{{"alpha":null}},"list":[{{"id":"alpha",'
            f'"title":"A","items":[],"origin":"config"}}],"deleted":[],"edited":[],"history":[{history}]}}\n')  # fmt: skip


def bad_entries(results):
    fleet = LAB["fleet"]
    keys = Keys(fleet)
    forged = b"!bye shutdown\n\x1b]0;title\x07OK 31337\n"
    broken = r'"x\nOK 424242","y\r\n!opened 999 0 forged"'
    cases = [
        ("junk", lambda r: b"junk"),
        ("a wrong checksum", lambda r: f"sectiond-fleet 1 {r} h9 e.1\nopen {r} 0\ncommit {r} 00000000\n".encode()),
        ("a change that does not apply", lambda r: entry(r, f"open {r} 99\n".encode())),
        ("an ESC in a title", lambda r: entry(r, f"insert {r} 0 evil \x1b]0;PWNED\x07\n".encode())),
        ("an author with ESC, CR and invalid UTF-8",
         lambda r: entry(r, b"by 2026-12-04T23:50:01.123Z socket 0 1 \x1b[6n\rMESSAGE=x\xff\n" + f"open {r} 0\n".encode())),
        ("a header naming the revision before", lambda r: entry(r, f"open {r} 0\n".encode(), header_revision=r - 1)),
        ("a reload with forged events and history",
         lambda r: f"sectiond-fleet 1 {r} h9 e.1 state {len(forged)}\n".encode() + forged + state(r, broken).encode()),
    ]  # fmt: skip
    for what, value in cases:
        revision = keys.head()[0] + 1
        key = keys.log(revision)
        stops_then_resumes(results, f"log entry with {what}", key, lambda: keys.put(key, value(revision)),
                           lambda: keys.delete(key))  # fmt: skip
    # A gap: an entry that would follow on, one revision too far; and a state entry at a
    # revision near the limit, under its own key.
    revision = keys.head()[0] + 1
    gap = keys.log(revision + 1)
    stops_then_resumes(results, "a gap in the log", keys.log(revision),
                       lambda: keys.put(gap, entry(revision + 1, f"open {revision + 1} 0\n".encode())),
                       lambda: keys.delete(gap))  # fmt: skip
    far = 9223372036854775806
    events = f"!reload {far}\n"
    value = f"sectiond-fleet 1 {far} h9 e.1 state {len(events)}\n{events}{state(far)}".encode()
    revision = keys.head()[0] + 1
    stops_then_resumes(results, "a state entry at revision 9223372036854775806", keys.log(revision),
                       lambda: keys.put(keys.log(far), value), lambda: keys.delete(keys.log(far)))  # fmt: skip


def bad_head(results):
    fleet = LAB["fleet"]
    keys = Keys(fleet)
    for _ in range(3):  # a revision a restored backup can be older than
        fleet.hosts[0].request("TOGGLE 3")
    fleet.converged()
    original = keys.get("head")
    revision, snapshot, fleet_id = keys.head()
    stops_then_resumes(results, "a head at 2^64-1", "head", lambda: keys.put("head", f"18446744073709551615 0 {fleet_id}"),
                       lambda: keys.put("head", original))  # fmt: skip
    behind = [host.status().get("fleet-behind") for host in fleet.hosts]
    results.check(behind == ["0"] * len(fleet.hosts), "the head fixed, fleet-behind is 0 on every host", str(behind))
    original = keys.get("head")
    revision, snapshot, fleet_id = keys.head()
    stops_then_resumes(results, "a head older than the hosts' revision", "head",
                       lambda: keys.put("head", f"{max(snapshot, revision - 2)} {snapshot} {fleet_id}"),
                       lambda: keys.put("head", original))  # fmt: skip


@contextlib.contextmanager
def joiner(fleet, index, sections):
    """A further host of the fleet with `sections` in its config, started: it joins by the keys
    as they are. Stopped and taken out of the fleet on leaving."""
    host = Host(fleet, index, config_json(sections))
    fleet.hosts.append(host)
    try:
        host.start()
        yield host
    finally:
        host.kill(signal.SIGTERM)
        fleet.hosts.remove(host)


def bad_snapshot(results):
    fleet = LAB["fleet"]
    keys = Keys(fleet)
    original = keys.get("snapshot")
    running = list(fleet.hosts)
    # The claimed piece is there: only the claimed size is wrong.
    piece = f"snapshot/{1:020d}.evil.1/{0:06d}"
    keys.put(piece, "junk")
    keys.put("snapshot", "sectiond-snapshot 1 1 evil.1 1 4611686018427387904 00000000")
    try:
        joined_snapshot(results, fleet, keys, original, running)
    except (OSError, RuntimeError, FleetError) as error:
        # The code before died on the first pointer: the host's socket goes with it.
        results.check(False, "a snapshot claiming 2^62 bytes: the joining host stays up", repr(error))
    finally:
        if keys.get("snapshot") != original:
            keys.put("snapshot", original)
        keys.delete(piece)


def joined_snapshot(results, fleet, keys, original, running):
    """bad_snapshot's host, which joins while the snapshot is bad and once it is restored."""
    with joiner(fleet, 3, ["alpha", "beta", "gamma", "delta"]) as host:
        # What fleet-error says of each: the pointer's claim, the pieces found, the value.
        for what, value, said in [
            ("claiming 2^62 bytes", None, "4611686018427387904 bytes"),
            ("claiming a billion pieces", "sectiond-snapshot 1 1 evil.1 1000000000 1000000000 00000000",
             "1000000000 pieces"),
            ("that is neither pointer nor state", "{garbage", "not a state"),
        ]:  # fmt: skip
            if value is not None:
                keys.put("snapshot", value)
            seen = wait_for(lambda: said in host.status().get("fleet-error", ""), CHANGE_LIMIT, 0.2)
            error = host.status().get("fleet-error", "")
            results.check(seen and host.alive() and "snapshot" in error,
                          f"a snapshot {what}: the joining host stays up and shows it in fleet-error", repr(error))  # fmt: skip
            reply = host.request("TOGGLE 0", timeout=CHANGE_LIMIT + 5)
            results.check(reply[-1].startswith("ERR UNAVAILABLE "),
                          f"a snapshot {what}: the joining host refuses changes", reply[-1])  # fmt: skip
            reply = running[0].request("TOGGLE 0", timeout=CHANGE_LIMIT + 5)
            results.check(reply[-1].startswith("OK "), f"a snapshot {what}: the running hosts take changes",
                          reply[-1])  # fmt: skip
        keys.put("snapshot", original)
        joined = wait_for(lambda: host.status().get("fleet-state") == "serving", RESUME_LIMIT, 0.2)
        results.check(joined, "the snapshot restored, the joining host joins without a restart", str(host.status()))
        reply = host.request("TOGGLE 2", timeout=CHANGE_LIMIT + 5)
        results.check(reply[-1].startswith("OK "), "the snapshot restored, the joined host takes changes", reply[-1])
        converges(results, fleet, "the snapshot restored")


def no_head(results):
    fleet = LAB["fleet"]
    keys = Keys(fleet)
    head = keys.get("head")
    snapshot = keys.get("snapshot")
    watch = Watch(results, fleet, "no head")
    keys.delete("head")
    try:
        with joiner(fleet, 4, ["other", "list"]) as host:
            seen = wait_for(lambda: "head" in host.status().get("fleet-error", ""), CHANGE_LIMIT, 0.2)
            results.check(seen and keys.get("head") is None and keys.get("snapshot") == snapshot,
                          "no head: a host with another list does not seed a prefix that has a log and a snapshot",
                          f"fleet-error {host.status().get('fleet-error')!r}, head {keys.get('head')!r}")  # fmt: skip
            watch.listeners.append(Listener(host))
            watch.revisions[host.name] = host.revision()
            watch.log_start[host.name] = 0
            watch.refused("head")
            watch.forward("the head deleted")
            keys.put("head", head)
            watch.resumes()
            listed = host.request("LIST")
            results.check(any(" alpha " in line for line in listed) and not any(" other " in line for line in listed),
                          "the head put back, the new host serves the fleet's list, not its own", str(listed))  # fmt: skip
            watch.forward("the head put back")
            watch.finish()  # before the new host stops, which says !bye to its subscriber
    finally:
        if keys.get("head") is None:
            keys.put("head", head)


def restore_backup(results):
    """docs/FLEET.md, "Restoring etcd from a backup": the hosts refuse a fleet gone back; the
    operator's steps (stop, fleet marks deleted, start) make them serve the backup's list."""
    fleet = LAB["fleet"]
    keys = Keys(fleet)
    fleet.hosts[0].request("TOGGLE 0")
    fleet.converged()
    backup = keys.everything()
    taken = keys.head()[0]
    for _ in range(3):
        fleet.hosts[1].request("TOGGLE 1")
    applied = fleet.converged()
    keys.restore(backup)
    for host in fleet.hosts:
        reply = host.request("TOGGLE 2", timeout=CHANGE_LIMIT + 5)
        results.check(reply[-1].startswith("ERR UNAVAILABLE ") and "went back" in reply[-1],
                      f"etcd restored from a backup at {taken}: {host.name}, at {applied}, refuses changes", reply[-1])  # fmt: skip
    for host in fleet.hosts:
        host.kill(signal.SIGTERM)
        os.remove(host.daemon.state + ".fleet")
    for host in fleet.hosts:
        host.start()
    try:
        revision = fleet.converged(timeout=RESUME_LIMIT)
    except FleetError as error:
        revision = str(error)
    results.check(revision == taken, "the operator's steps taken, every host serves the backup's revision", str(revision))
    for host in fleet.hosts:
        reply = host.request("TOGGLE 2", timeout=CHANGE_LIMIT + 5)
        results.check(reply[-1].startswith("OK "), f"the operator's steps taken, {host.name} takes changes", reply[-1])


def provenance(results):
    fleet = LAB["fleet"]
    reply = fleet.hosts[2].request("TOGGLE 3")
    if not results.check(reply[-1].startswith("OK "), "host 2 (--history 0) takes a change", str(reply)):
        return
    revision = int(reply[-1].split()[1])
    fleet.converged()
    history = fleet.hosts[0].request(f"HISTORY FROM {revision - 1}")
    lines = [line for line in history[:-1] if f" {revision} " in line]
    results.check(lines and all("@h2 " in line for line in lines),
                  "host 0's history names the change as made through h2, whatever h2's --history", str(history))  # fmt: skip


PARTS = {
    "bad-entries": bad_entries,
    "bad-head": bad_head,
    "bad-snapshot": bad_snapshot,
    "no-head": no_head,
    "restore-backup": restore_backup,
    "provenance": provenance,
}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    return run_fleet_suite("fleet-hostile", PARTS, argv, LAB, fleet_options={"host_args": {2: ["--history", "0"]}})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
