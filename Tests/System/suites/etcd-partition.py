#!/usr/bin/env python3
"""The etcd lab's partition mode (Tests/System/lib/etcd_lab.py) against etcd alone, before the
fleet's suites rely on it:
- isolating the leader: the other two elect a new leader and take writes within seconds, the
  isolated member refuses a request that asks for a leader ("no leader"), and after the heal it
  catches up (a serializable read there gives the majority's value);
- freezing a member (SIGSTOP): it stops answering, the others keep taking writes; thawed, it
  answers again;
- nothing is left, whether the lab ends normally, by Ctrl-C, or its process is killed: no
  member, no network namespace (the nftables table lives and dies in it), no directory.

Needs root, etcd, nftables, iproute2 and util-linux (else one SKIP line). About 15 s.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import base64
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from etcd_lab import EtcdLab, LabUnavailable, running  # noqa: E402
from sdlib import Results  # noqa: E402

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "etcd_lab.py")
# etcd's election timeout is 1 s; a new leader and a step-down take 1-2 s on a quiet machine
# (1.55 s measured for writes through the majority). The limits leave room for a loaded CI.
ELECTION_LIMIT = 10.0
# A lab stops in 5 s at most on a quiet machine (an isolated member ignores SIGTERM until the
# lab's SIGKILL); killed members with writes in flight wait for the disk under load.
STOP_LIMIT = 60.0


def b64(text):
    return base64.b64encode(text.encode()).decode()


def put(lab, index, key, value, timeout=1.0):
    """(HTTP status, answer) of a put through member `index` asking for a leader."""
    return lab.call(index, "/v3/kv/put", {"key": b64(key), "value": b64(value)}, has_leader=True, timeout=timeout)


def local_value(lab, index, key):
    """The value member `index` has applied for `key` (a serializable read: its own copy)."""
    _, answer = lab.call(index, "/v3/kv/range", {"key": b64(key), "serializable": True})
    kvs = answer.get("kvs", [])
    return base64.b64decode(kvs[0]["value"]).decode() if kvs else None


def until(deadline_seconds, attempt):
    """Calls attempt() until it returns a true value or the time is up; returns (value, seconds)."""
    started = time.monotonic()
    while True:
        try:
            value = attempt()
        except OSError:
            value = None
        elapsed = time.monotonic() - started
        if value or elapsed > deadline_seconds:
            return value, elapsed
        time.sleep(0.05)


def partition_checks(results, lab):
    ids = [lab.call(i, "/v3/maintenance/status", {})[1]["header"]["member_id"] for i in range(lab.members)]
    leader_id = lab.call(0, "/v3/maintenance/status", {})[1].get("leader")
    results.check(leader_id in ids, "the lab's three members agree on a leader", f"{leader_id} among {ids}")
    leader = ids.index(leader_id) if leader_id in ids else 0
    others = [i for i in range(lab.members) if i != leader]
    before = [put(lab, i, "k", f"before-{i}")[0] for i in range(lab.members)]
    results.check(before == [200] * lab.members, "before the cut, every member takes a write that asks for a leader",
                  str(before))

    lab.isolate(leader)
    written, took = until(ELECTION_LIMIT, lambda: any(put(lab, i, "k", "after")[0] == 200 for i in others))
    results.check(written, f"leader m{leader} isolated: the other two take a write within {ELECTION_LIMIT:.0f} s",
                  f"{took:.2f} s")
    new_leader = lab.call(others[0], "/v3/maintenance/status", {})[1].get("leader")
    results.check(new_leader in [ids[i] for i in others], "the other two elected a leader among themselves",
                  f"{new_leader}, was {leader_id}")

    def refused():
        status, answer = put(lab, leader, "k", "from-the-isolated")
        return status != 200 and "no leader" in answer.get("error", "") and answer["error"]

    refusal, took = until(ELECTION_LIMIT, refused)
    results.check(refusal, "the isolated member refuses a write that asks for a leader", f"{refusal!r} after {took:.2f} s")
    stale = local_value(lab, leader, "k")
    results.check(stale == f"before-{lab.members - 1}", "the isolated member's own copy is the value before the cut",
                  repr(stale))

    lab.heal(leader)
    caught, took = until(ELECTION_LIMIT, lambda: local_value(lab, leader, "k") == "after")
    results.check(caught, "healed, it catches up with the write it missed", f"{took:.2f} s")
    written, took = until(ELECTION_LIMIT, lambda: put(lab, leader, "k", "healed")[0] == 200)
    results.check(written, "healed, it takes a write that asks for a leader again", f"{took:.2f} s")

    frozen = others[0]
    lab.freeze(frozen)
    try:
        lab.call(frozen, "/v3/kv/range", {"key": b64("k"), "serializable": True}, timeout=1.0)
        silent = False
    except OSError:
        silent = True
    results.check(silent, f"frozen (SIGSTOP), m{frozen} does not answer within 1 s")
    written, took = until(ELECTION_LIMIT, lambda: put(lab, others[1], "k", "while-frozen")[0] == 200)
    results.check(written, "the other two keep taking writes", f"{took:.2f} s")
    lab.thaw(frozen)
    caught, took = until(ELECTION_LIMIT, lambda: local_value(lab, frozen, "k") == "while-frozen")
    results.check(caught, "thawed (SIGCONT), it answers and has the write", f"{took:.2f} s")


def holders(inode):
    """The processes with the network namespace `inode` as theirs or open in a descriptor."""
    link = f"net:[{inode}]"
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/net") == link or any(
                os.readlink(f"/proc/{pid}/fd/{fd}") == link for fd in os.listdir(f"/proc/{pid}/fd")
            ):
                found.append(int(pid))
        except OSError:  # gone meanwhile, or a descriptor closed meanwhile
            pass
    return found


def left_behind(pids, inode, directory, wait=10.0):
    """What is still there `wait` seconds on at most: members, holders of the namespace, the directory."""
    deadline = time.monotonic() + wait
    while True:
        left = [f"member pid {p}" for p in pids if running(p)] + [f"namespace held by pid {p}" for p in holders(inode)]
        left += [directory] if os.path.exists(directory) else []
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


# A lab in a process of its own, for the Ctrl-C and killed cases: it prints what it made.
# SIGINT gets Python's handler even when this suite was started with it ignored (a shell's `&`).
CHILD = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, sys.argv[1])
from etcd_lab import EtcdLab
try:
    with EtcdLab(partition=True) as lab:
        lab.isolate(1)
        print(os.stat(lab.netns_path()).st_ino, lab.directory, *[p.pid for p in lab.processes], flush=True)
        sys.stdin.read()
except KeyboardInterrupt:
    pass
"""


def teardown_checks(results):
    for how in ("Ctrl-C (SIGINT)", "SIGKILL"):
        child = subprocess.Popen([sys.executable, "-c", CHILD, os.path.dirname(LAB)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)  # fmt: skip
        try:
            words = child.stdout.readline().split()
            if len(words) < 3:
                results.check(False, f"a lab in a child process started ({how})", repr(words))
                continue
            inode, directory, pids = int(words[0]), words[1], [int(w) for w in words[2:]]
            started = time.monotonic()
            if how == "SIGKILL":
                child.kill()
            else:
                child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=STOP_LIMIT)
            except subprocess.TimeoutExpired:
                results.check(False, f"the lab's process ends within {STOP_LIMIT:.0f} s of {how}")
                continue
            left = left_behind(pids, inode, directory)
            results.check(not left, f"its process ended by {how}, the lab leaves nothing behind",
                          "; ".join(left) or f"{time.monotonic() - started:.1f} s")
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdin.close()
            child.stdout.close()


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    results = Results()
    try:
        lab = EtcdLab(partition=True).start()
    except LabUnavailable as reason:
        print(f"SKIP etcd-partition: {reason}", flush=True)
        return 77  # skipped, for scripts/test.sh
    inode = os.stat(lab.netns_path()).st_ino
    directory, pids = lab.directory, [p.pid for p in lab.processes]
    try:
        partition_checks(results, lab)
    finally:
        lab.stop()
    left = left_behind(pids, inode, directory)
    results.check(not left, "the lab stopped leaves no member, no namespace, no directory", "; ".join(left))
    teardown_checks(results)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
