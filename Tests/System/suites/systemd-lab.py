#!/usr/bin/env python3
"""Tests of sectiond as installed, under a real systemd, in the lab of
Tests/System/lib/lab.py: scripts/install.sh puts the binaries ($BUILD_DIR) and the hardened units,
unchanged, into the lab's /usr/local; only the sockets are started.

  activation   the first connection to control.sock starts the service; it reaches
               READY (active/running) and its STATUS line shows in StatusText
  reload       `systemctl reload` is synchronous (LIST shows the new config when it
               returns); a broken config fails the reload and the old one keeps serving
  watchdog     with a drop-in WatchdogSec=2s, SIGSTOP of the daemon makes systemd restart
               it: a new MainPID, active again, the state kept, the subscriber resynchronised
  stop         `systemctl stop sectiond.service`: every client sees end-of-file (no !bye: the
               daemon cannot tell a stop from a restart), the socket units keep the paths
               and a new connection re-activates the service
  permissions  a user outside group sectiond gets EACCES on control.sock and is served
               read-only on readonly.sock; a member of group sectiond changes state
  journal      the start-up line is in `journalctl -u sectiond` with priority notice (5),
               a refused reload with priority err (3)
  changes      --log-changes: each saved group found by `journalctl SECTIOND_CLIENT_NAME=...`
               with who and what; a flood stays within the rate limit and says so
  restart, config, crash, handover
               clients across restarts and crashes (Tests/System/lib/lab_restarts.py)
  access       /etc/sectiond/access.conf naming a user of group sectiond by name, read by the
               hardened unit at a reload: that user's TOGGLE goes through, its DELETE is
               ERR DENIED, on the unnamed list and on sectiond@kiosk; its connection keeps operate across `systemctl restart`; a member no
               rule names still edits; without the file again, everything is as before

  isolation    the lab itself (own lab): its sysinit.target leaves the host's /tmp alone,
               users, homes, /etc and /dev writes stay in it, user_manager() works, and
               teardown leaves no process or cgroup behind

The installed binaries are the release build that `make install` ships (swift build -c release
--static-swift-stdlib, made here first: about 20 s from cold, seconds when up to date; bench.py
reuses it), not $BUILD_DIR: the debug build links the Swift runtime dynamically and behaves
differently under the hardened unit (a watchdog SIGABRT stalls 10 s in the runtime's
backtracer). SYSTEMD_LAB_BUILD_DIR=DIR uses DIR instead and skips the build.

usage: systemd-lab.py [PART ...]   (all parts by default, isolation first)
Prints PASS/FAIL lines, then `N passed, N failed`; when the lab cannot start on this
machine, one SKIP line saying why (SYSTEMD_LAB_REQUIRED=1 makes that a failure).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from lab import Lab, LabError, LabUnavailable, skip_line  # noqa: E402
from sdlib import ROOT, Client, Results, config_json, connect_as, require_binary  # noqa: E402
import lab_restarts  # noqa: E402

CONFIG = "/etc/sectiond/sections.json"
CONTROL = "/run/sectiond/control.sock"
READONLY = "/run/sectiond/readonly.sock"
OUTSIDER = "outsider"  # not in group sectiond
MEMBER = "member"  # in group sectiond
KIOSK = "kiosk"  # in group sectiond, and at operate by the access rules (the access part)
ACCESS = "/etc/sectiond/access.conf"


def wait_for(predicate, timeout, interval=0.1):
    """Polls predicate until it returns something true; returns that, or None on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def section_ids(lab, socket_name="control.sock"):
    with Client(lab.socket_path(socket_name), timeout=10) as c:
        return [line.split()[2] for line in c.request("LIST") if line.startswith("section ")]


def open_ids(lab):
    with Client(lab.socket_path(), timeout=10) as c:
        return [line.split()[2] for line in c.request("LIST")
                if line.startswith("section ") and line.split()[3] == "open"]


def service_state(lab):
    return lab.show("sectiond.service", "ActiveState", "SubState", "MainPID", "StatusText",
                    "NRestarts")


def running(lab):
    state = service_state(lab)
    return state if (state["ActiveState"], state["SubState"]) == ("active", "running") else None


def set_config(lab, ids):
    lab.write_file(CONFIG, config_json(ids))


# ---------------------------------------------------------------------------- parts

def test_activation(lab, r):
    before = service_state(lab)
    r.check(before["ActiveState"] == "inactive", "activation: service inactive before any client",
            before["ActiveState"])
    sockets = [lab.show(u, "ActiveState")["ActiveState"]
               for u in ("sectiond.socket", "sectiond-readonly.socket")]
    r.check(sockets == ["active", "active"], "activation: both socket units listening", str(sockets))
    started = time.monotonic()
    ids = section_ids(lab)
    elapsed = time.monotonic() - started
    r.check(ids == ["alpha", "beta", "gamma"], "activation: first connection served",
            f"LIST {ids} in {elapsed * 1000:.0f} ms")
    state = running(lab)
    r.check(state is not None, "activation: READY=1 reached (active/running)",
            str(state or service_state(lab)))
    status = (state or {}).get("StatusText", "")
    r.check(re.match(r"\d+ sections \(\d+ open\)", status) is not None,
            "activation: STATUS in StatusText", status)


def test_reload(lab, r):
    pid = lab.main_pid()
    set_config(lab, ["alpha", "beta", "gamma", "delta"])
    result = lab.systemctl("reload", "sectiond", check=False)
    ids = section_ids(lab)  # straight after systemctl returns: no waiting
    r.check(result.returncode == 0 and ids[-1:] == ["delta"],
            "reload: synchronous, LIST shows the new config when systemctl returns",
            f"status {result.returncode}, LIST {ids}")
    r.check(lab.main_pid() == pid, "reload: same process", f"MainPID {pid}")

    lab.write_file(CONFIG, json.dumps({"sections": [{"id": "dup", "title": "A"},
                                                    {"id": "dup", "title": "B"}]}))
    result = lab.systemctl("reload", "sectiond", check=False)
    r.check(result.returncode != 0, "reload: a broken config fails the reload",
            f"status {result.returncode}: {result.stderr.strip()}")
    ids = section_ids(lab)
    state = service_state(lab)
    r.check(ids == ["alpha", "beta", "gamma", "delta"] and state["ActiveState"] == "active",
            "reload: the old config keeps serving", f"LIST {ids}, {state['ActiveState']}")
    set_config(lab, ["alpha", "beta", "gamma", "delta"])


def subscribe(lab, socket_name="control.sock"):
    client = Client(lab.socket_path(socket_name), timeout=10)
    client.request("SUBSCRIBE")
    return client


def read_to_eof(client, timeout=10):
    """The lines a client gets until its connection ends, or None if it does not end."""
    client.sock.settimeout(timeout)
    lines = []
    try:
        while (line := client.readline()) is not None:
            lines.append(line)
        return lines
    except OSError:
        return None


def restarted(lab, old_pid):
    """The service's state once it runs again under a MainPID other than old_pid."""
    state = running(lab)
    return state if state and state["MainPID"] != str(old_pid) else None


def test_watchdog(lab, r):
    lab.write_file("/etc/systemd/system/sectiond.service.d/50-lab-watchdog.conf",
                   "[Service]\nWatchdogSec=2s\n")
    lab.systemctl("daemon-reload")
    lab.systemctl("restart", "sectiond.service")  # WATCHDOG_USEC is handed over at start
    with Client(lab.socket_path(), timeout=10) as c:
        opened = c.request("OPEN beta")
    before = running(lab)
    r.check(before is not None and opened[-1].startswith("OK"),
            "watchdog: running with WatchdogSec=2s and a change made", f"OPEN beta: {opened[-1]}")
    if before is None:
        return
    subscriber = subscribe(lab, "readonly.sock")  # after a crash, only these are kept
    pid = int(before["MainPID"])
    started = time.monotonic()
    lab.run(["kill", "-STOP", str(pid)])
    after = wait_for(lambda: restarted(lab, pid), 30)
    elapsed = time.monotonic() - started
    r.check(after is not None, "watchdog: a stopped daemon is restarted with a new MainPID",
            f"MainPID {pid} -> {(after or {}).get('MainPID')} in {elapsed:.1f} s, "
            f"NRestarts {before['NRestarts']} -> {(after or {}).get('NRestarts')}")
    journal = lab.journal()
    r.check("Watchdog timeout" in journal, "watchdog: systemd logged the watchdog timeout")
    ids = open_ids(lab)
    r.check(ids == ["beta"], "watchdog: state kept across the restart", f"open {ids}")
    lines = []
    subscriber.sock.settimeout(10)
    try:
        while not any(line.startswith("!state ") for line in lines):
            line = subscriber.readline()
            if line is None:
                break
            lines.append(line)
    except OSError:
        pass
    r.check(lines[:1] == ["!restart"] and lines[-1].startswith("!state ") and lines[-1].endswith(" beta"),
            "watchdog: the subscriber stays connected and is resynchronised", str(lines))
    subscriber.close()
    lab.run(["rm", "/etc/systemd/system/sectiond.service.d/50-lab-watchdog.conf"])
    lab.systemctl("daemon-reload")


def test_stop(lab, r):
    clients = [Client(lab.socket_path(), timeout=10), subscribe(lab),
               Client(lab.socket_path("readonly.sock"), timeout=10)]
    for c in (clients[0], clients[2]):
        c.request("PING")
    result = lab.systemctl("stop", "sectiond.service", check=False)
    endings = [read_to_eof(c, timeout=10) for c in clients]
    for c in clients:
        c.close()
    eofs = [lines is not None for lines in endings]
    r.check(result.returncode == 0 and all(eofs), "stop: every client sees end-of-file",
            f"status {result.returncode}, EOF {eofs}")
    # SIGTERM is all a stop and a restart have in common: the daemon leaves its connections to
    # the file descriptor store either way, and on a stop systemd closes them.
    r.check(endings[1] == [], "stop: the subscriber's connection just ends (no !bye, documented)",
            str(endings[1]))
    state = service_state(lab)["ActiveState"]
    sockets = [lab.show(u, "ActiveState")["ActiveState"]
               for u in ("sectiond.socket", "sectiond-readonly.socket")]
    paths = [os.path.exists(lab.host_path(p)) for p in (CONTROL, READONLY)]
    r.check(state == "inactive" and sockets == ["active", "active"] and all(paths),
            "stop: the socket units still own both paths",
            f"service {state}, sockets {sockets}, paths {paths}")
    ids = section_ids(lab, "readonly.sock")
    r.check(ids[:1] == ["alpha"] and running(lab) is not None,
            "stop: a new connection re-activates the service", f"LIST {ids}")


CLIENT = r"""
import errno, socket, sys
path, lines = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
try:
    s.connect(path)
except OSError as e:
    print("CONNECT", errno.errorcode.get(e.errno, e.errno))
    sys.exit(0)
f = s.makefile("rw")
for line in lines:
    f.write(line + "\n")
    f.flush()
    while True:
        reply = f.readline().rstrip("\n")
        if reply == "OK" or reply.startswith(("OK ", "ERR ")):
            print(reply)
            break
"""


def as_user(lab, user, path, *lines):
    """Runs a protocol client inside the lab as user; its status lines, or CONNECT <errno>."""
    out = lab.run(["python3", "-c", CLIENT, path, *lines], user=user).stdout
    return out.splitlines()


def test_permissions(lab, r):
    refused = as_user(lab, OUTSIDER, CONTROL, "LIST")
    r.check(refused == ["CONNECT EACCES"], "permissions: outsider refused on control.sock",
            str(refused))
    readonly = as_user(lab, OUTSIDER, READONLY, "LIST", "TOGGLE 0")
    r.check(len(readonly) == 2 and readonly[0].startswith("OK "),
            "permissions: outsider reads on readonly.sock", str(readonly[:1]))
    r.check(len(readonly) == 2 and readonly[1].startswith("ERR READONLY"),
            "permissions: outsider's TOGGLE gets ERR READONLY", str(readonly[1:]))
    before = open_ids(lab)
    changed = as_user(lab, MEMBER, CONTROL, "TOGGLE alpha")
    after = open_ids(lab)
    r.check(len(changed) == 1 and changed[0].startswith("OK ")
            and ("alpha" in after) != ("alpha" in before),
            "permissions: group member changes state on control.sock",
            f"{changed}, open {before} -> {after}")
    cli = lab.run(["sectionctl", "--socket", CONTROL, "toggle", "alpha"], user=MEMBER, check=False)
    r.check(cli.returncode == 0 and open_ids(lab) == before,
            "permissions: group member's sectionctl toggle", f"status {cli.returncode}")


def journal_entries(lab):
    out = lab.journal("sectiond", "-o", "json")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_journal(lab, r):
    entries = journal_entries(lab)
    starts = [e for e in entries if str(e.get("MESSAGE", "")).startswith("serving ")]
    r.check(bool(starts) and all(e.get("PRIORITY") == "5" for e in starts),
            "journal: start-up line with priority notice (5)",
            f"{len(starts)} lines, priorities {sorted({e.get('PRIORITY') for e in starts})}"
            + (f": {starts[0]['MESSAGE']}" if starts else ""))
    refused = [e for e in entries if "reload refused" in str(e.get("MESSAGE", ""))]
    r.check(bool(refused) and all(e.get("PRIORITY") == "3" for e in refused),
            "journal: refused reload with priority err (3)", f"{len(refused)} lines")
    raw = [e for e in entries if re.match(r"<\d>", str(e.get("MESSAGE", "")))]
    r.check(not raw, "journal: no raw <N> prefixes left in messages", f"{len(raw)} raw")


def process_gone(pid):
    """No such process, or only a zombie left for its parent to reap."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def host_accounts():
    """The host's passwd and group files, and what /home holds."""
    texts = []
    for path in ("/etc/passwd", "/etc/group"):
        with open(path) as f:
            texts.append(f.read())
    homes = sorted(os.listdir("/home")) if os.path.isdir("/home") else []
    return texts, homes


def test_isolation(r):
    """The lab itself: what it does stays in it, and nothing of it outlives it. Runs its
    own lab, which starts sysinit.target on purpose (systemd-tmpfiles --remove empties
    /tmp) and a user manager, then checks the host after teardown."""
    user = "labcheck"
    marker = tempfile.NamedTemporaryFile(prefix="sectiond-lab-marker.", dir="/tmp")
    dev_before = set(os.listdir("/dev"))
    # The host may have a labcheck already (taken-names.sh makes sure of it): what counts is
    # that the host's accounts and homes are the same after the lab as before it.
    accounts_before, homes_before = host_accounts()
    with Lab() as lab:
        lab.write_file("/tmp/sectiond-lab-marker", "removed at boot\n")
        lab.systemctl("start", "sysinit.target")
        lab.add_user(user)
        lab.write_file("/etc/sectiond-lab-marker", "lab only\n")
        lab_marker = os.path.exists(lab.host_path("/tmp/sectiond-lab-marker"))
        lab.user_manager(user)
        manager = lab.run(["systemctl", "--user", "is-system-running"], user=user).stdout.strip()
        pid, cgroup = lab.pid, lab.cgroup
    r.check(os.path.exists(marker.name) and not lab_marker,
            "isolation: the lab's sysinit.target empties its own /tmp, not the host's",
            f"host marker kept: {os.path.exists(marker.name)}, lab marker kept: {lab_marker}")
    marker.close()
    accounts_after, homes_after = host_accounts()
    r.check(accounts_after == accounts_before and homes_after == homes_before
            and not os.path.exists("/etc/sectiond-lab-marker"),
            "isolation: users, homes and /etc writes stay in the lab")
    new_dev = sorted(set(os.listdir("/dev")) - dev_before)
    r.check(not new_dev, "isolation: nothing made in the host's /dev", str(new_dev))
    r.check(manager == "running", "isolation: user_manager() starts a working systemd --user",
            manager)
    r.check(process_gone(pid) and not os.path.exists(cgroup),
            "isolation: teardown ends every lab process and removes its cgroup",
            f"PID 1 {pid} gone: {process_gone(pid)}, {cgroup} gone: {not os.path.exists(cgroup)}")


def test_changes(lab, r):
    """--log-changes (in the unit): each saved group is a structured journal entry naming who
    made it, found by its fields; a flood is logged within the rate limit, and says what it left out."""
    named = as_user(lab, MEMBER, CONTROL, "CLIENT NAME waybar", "TOGGLE beta", "TOGGLE beta")
    r.check(len(named) == 3 and all(line.startswith("OK") for line in named),
            "changes: a group member named waybar toggles twice", str(named))
    member_uid = lab.run(["id", "-u", MEMBER]).stdout.strip()

    def found():
        out = lab.run(["journalctl", "-u", "sectiond", "--no-pager", "-o", "json",
                       "SECTIOND_CLIENT_NAME=waybar"], check=False).stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]
    entries = wait_for(lambda: len(found()) >= 2 and found(), 10) or found()
    last = entries[-1] if entries else {}
    r.check(len(entries) == 2 and last.get("SECTIOND_CLIENT_UID") == member_uid
            and last.get("SECTIOND_VIA") == "socket" and last.get("SECTIOND_SECTIONS") == "beta"
            and last.get("SECTIOND_CHANGES") == "1" and "waybar" in str(last.get("MESSAGE"))
            and "beta" in str(last.get("MESSAGE")),
            "changes: journalctl -u sectiond SECTIOND_CLIENT_NAME=waybar finds each change, with who and what",
            json.dumps([{k: v for k, v in e.items() if k.startswith("SECTIOND_") or k == "MESSAGE"}
                        for e in entries])[:600])
    history = as_user(lab, MEMBER, CONTROL, "HISTORY 2")
    r.check(len(history) == 1 and history[0].startswith("OK "), "changes: HISTORY answers on the installed daemon",
            str(history))
    # A flood: 3,000 changes in groups of one. At most 200 entries at once and 20 a second are logged.
    before = len(lab.journal("sectiond", "-o", "json").splitlines())
    started = time.monotonic()
    flood = lab.run(["python3", "-c", CLIENT, CONTROL, "CLIENT NAME flood",
                     *(["TOGGLE gamma"] * 3000)], user=MEMBER, timeout=120).stdout.splitlines()
    took = time.monotonic() - started
    # The flood spent the burst and every token that came back while it ran; at 20 a second
    # one is back after 50 ms. Wait well past that, so that the next group is logged.
    time.sleep(0.3)
    lab.run(["python3", "-c", CLIENT, CONTROL, "CLIENT NAME after", "TOGGLE gamma"], user=MEMBER)
    time.sleep(1)
    logged = len(lab.journal("sectiond", "-o", "json").splitlines()) - before
    bound = 200 + 20 * (took + 2) + 5
    r.check(len(flood) == 3001 and logged <= bound,
            f"changes: a flood of 3,000 changes in {took:.1f} s made {logged} journal entries (bound {bound:.0f})",
            f"{len(flood)} replies")
    suppressed = wait_for(lambda: lab.run(["journalctl", "-u", "sectiond", "--no-pager", "-o", "json",
                                           "SECTIOND_CLIENT_NAME=after"], check=False).stdout.splitlines(),
                          10) or []
    r.check(bool(suppressed) and int(json.loads(suppressed[-1]).get("SECTIOND_SUPPRESSED", "0")) > 0,
            "changes: the entry after the flood says how many groups were not logged",
            suppressed[-1][:300] if suppressed else "none")


def test_access(lab, r):
    lab.add_user(KIOSK, groups=["sectiond"])
    lab.write_file(ACCESS, f"user {KIOSK} operate\n")
    try:
        lab.systemctl("start", "sectiond.service")
        lab.systemctl("reload", "sectiond.service")
        kiosk = as_user(lab, KIOSK, CONTROL, "TOGGLE alpha", "DELETE alpha")
        r.check(len(kiosk) == 2 and kiosk[0].startswith("OK ") and kiosk[1].startswith("ERR DENIED edit operate "),
                "access: the rules' user toggles and is refused an edit, under the unit", str(kiosk))
        # A named list (sectiond@NAME) reads the same file: the machine's users are its users.
        lab.systemctl("start", "sectiond@kiosk.socket", "sectiond-readonly@kiosk.socket")
        named = as_user(lab, KIOSK, "/run/sectiond/kiosk/control.sock", "TOGGLE 0", "DELETE 0")
        r.check(len(named) == 2 and named[0].startswith("OK ") and named[1].startswith("ERR DENIED edit operate "),
                "access: sectiond@NAME follows the same rules", str(named))
        member = as_user(lab, MEMBER, CONTROL, "MODE multi")
        r.check(len(member) == 1 and member[0].startswith("OK "), "access: a member no rule names still edits",
                str(member))
        group = int(lab.run(["getent", "group", "sectiond"]).stdout.split(":")[2])
        kept = connect_as(lab.socket_path(), lab.uid(KIOSK), [group])
        before = kept.request("STATUS")[0]
        pid = lab_restarts.restart_and_wait(lab, "restart", "sectiond.service")
        after = kept.request("STATUS")[0] if pid else "no restart"
        denied = kept.request("DELETE alpha")[-1] if pid else "no restart"
        r.check(before == after == "status access operate" and denied.startswith("ERR DENIED edit operate"),
                "access: a connection keeps its level across a restart", f"{before}; after: {after}, {denied}")
        kept.close()
    finally:
        lab.run(["rm", "-f", ACCESS])
        lab.systemctl("reload", "sectiond.service", check=False)
    again = as_user(lab, KIOSK, CONTROL, "MODE multi")
    r.check(bool(again) and again[0].startswith("OK "), "access: without the rules, the member edits again", str(again))


PARTS = {"activation": test_activation, "reload": test_reload, "watchdog": test_watchdog,
         "stop": test_stop, "permissions": test_permissions, "journal": test_journal,
         "changes": test_changes, "access": test_access,
         **lab_restarts.PARTS}


def set_up(lab):
    """The project installed as a user would, a config, two users, and only the sockets."""
    lab.install()
    set_config(lab, ["alpha", "beta", "gamma"])
    lab.add_user(OUTSIDER)
    lab.add_user(MEMBER, groups=["sectiond"])
    lab.systemctl("start", "sectiond.socket", "sectiond-readonly.socket")


def release_build():
    """The release build `make install` ships, made (or brought up to date) here, as BUILD_DIR;
    SYSTEMD_LAB_BUILD_DIR=DIR names a build to use instead. False when it did not build."""
    if os.environ.get("SYSTEMD_LAB_BUILD_DIR"):
        os.environ["BUILD_DIR"] = os.environ["SYSTEMD_LAB_BUILD_DIR"]
        return True
    command = ["swift", "build", "-c", "release", "--static-swift-stdlib"]
    try:
        built = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        print("FAIL release build did not finish within 900 s")
        return False
    if built.returncode != 0:
        print("\n".join((built.stdout + built.stderr).splitlines()[-20:]))
        print(f"FAIL release build ({' '.join(command)})")
        return False
    os.environ["BUILD_DIR"] = subprocess.run(command + ["--show-bin-path"], cwd=ROOT, capture_output=True,
                                             text=True).stdout.strip()
    return True


def main(argv):
    parts = argv or ["isolation", *PARTS]
    unknown = [p for p in parts if p != "isolation" and p not in PARTS]
    if unknown:
        print(f"unknown part {unknown[0]}; parts: isolation {' '.join(PARTS)}", file=sys.stderr)
        return 2
    if not release_build():
        print("0 passed, 1 failed")
        return 1
    require_binary()
    r = Results()
    try:
        if "isolation" in parts:
            test_isolation(r)
        parts = [p for p in parts if p != "isolation"]
        if not parts:
            return r.finish()
        with Lab() as lab:
            started = time.monotonic()
            try:
                set_up(lab)
            except LabError as e:
                r.check(False, "set-up: install, config, users, sockets", str(e))
                return r.finish()
            print(f"lab up, project installed in {time.monotonic() - started:.1f} s "
                  f"(binaries from {os.environ.get('BUILD_DIR', '.build/debug')})", flush=True)
            for part in parts:
                try:
                    PARTS[part](lab, r)
                except Exception as e:  # one broken part must not hide the others
                    r.check(False, f"{part}: ran to the end", f"{type(e).__name__}: {e}")
            if r.failed:
                print("journal of sectiond.service:\n" + lab.journal(), flush=True)
    except LabUnavailable as e:
        if os.environ.get("SYSTEMD_LAB_REQUIRED") == "1":
            r.check(False, "systemd lab starts", str(e))
            return r.finish()
        return skip_line(str(e))
    return r.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
