#!/usr/bin/env python3
"""A fleet host under systemd, set up as docs/FLEET.md ("A fleet host under systemd") says, in the
systemd lab (Tests/System/lib/lab.py) against three etcd members on loopback over TLS with client
certificates (Tests/System/lib/etcd_lab.py; the lab shares the machine's network):

  - /etc/sectiond/fleet.env (SECTIOND_OPTIONS: --etcd, the TLS files in /etc/sectiond/etcd,
    root:sectiond 0640) read by a drop-in with only EnvironmentFile=: the daemon runs in fleet
    mode but the unit's sandbox (no network) keeps it from every member: it never gets up to date;
  - the shipped drop-in fleet.conf, copied from the installed examples: the daemon, as user
    sectiond in the full sandbox, joins the fleet; a change through it reaches a second host (a
    sectiond outside the lab) with the same revision, its history naming the lab's host;
  - etcd-local.conf orders the unit after etcd.service and network-online.target (Wants= too);
  - `systemd-analyze security` of the fleet host (the figure is printed), and no journal line
    of a failed set-up or a refused call.

Needs root (the lab) and etcd (scripts/deps.sh --test); otherwise one SKIP line, exit 77.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from etcd_lab import EtcdLab, LabUnavailable as EtcdUnavailable  # noqa: E402
from lab import Lab, LabUnavailable, skip_line  # noqa: E402
from sdlib import Client, Daemon, Results, require_binary  # noqa: E402

EXAMPLES = "/usr/local/share/doc/sectiond/examples/fleet"
DROP_INS = "/etc/systemd/system/sectiond.service.d"
TLS_DIR = "/etc/sectiond/etcd"
# The first contact with etcd, or the seed, by a debug daemon on a loaded 2-core machine.
UP_TO_DATE_SECONDS = 30
# Long enough for a daemon with a network to have reached a member many times over.
CUT_OFF_SECONDS = 15
results = Results()
check = results.check


def fleet_status(path):
    """STATUS's facts, or {} while the daemon does not answer."""
    try:
        with Client(path, timeout=5) as client:
            lines = client.request("STATUS")
    except OSError:
        return {}
    return dict(line.split(" ", 2)[1:] for line in lines if line.startswith("status ") and line.count(" ") >= 2)


def wait_up_to_date(path, seconds):
    """The STATUS facts once the daemon says it is up to date with etcd, else the last seen."""
    deadline = time.monotonic() + seconds
    facts = {}
    while time.monotonic() < deadline:
        facts = fleet_status(path)
        if facts.get("fleet-stale-since") == "-":
            break
        time.sleep(0.2)
    return facts


def start_fresh(lab):
    """The service restarted on a state of nothing, with the drop-ins now in place."""
    lab.systemctl("stop", "sectiond.service", check=False)
    lab.run(["sh", "-c", "rm -rf /var/lib/sectiond/*"])
    lab.systemctl("daemon-reload")
    return lab.systemctl("start", "sectiond.socket", "sectiond-readonly.socket", "sectiond.service", check=False)


def set_up(lab, etcd):
    lab.install()
    for name, source in zip(("ca.pem", "client.pem", "client-key.pem"), etcd.tls_files()):
        with open(source) as pem:
            lab.write_file(f"{TLS_DIR}/{name}", pem.read(), mode=0o640)
    lab.run(["chown", "-R", "root:sectiond", TLS_DIR])
    options = (f"--etcd {','.join(etcd.urls)} --host-name lab --etcd-cacert {TLS_DIR}/ca.pem "
               f"--etcd-cert {TLS_DIR}/client.pem --etcd-key {TLS_DIR}/client-key.pem")
    lab.write_file("/etc/sectiond/fleet.env", f"SECTIOND_OPTIONS={options}\n", mode=0o600)


def without_network(lab):
    lab.write_file(f"{DROP_INS}/only-env.conf", "[Service]\nEnvironmentFile=/etc/sectiond/fleet.env\n")
    started = start_fresh(lab)
    check(started.returncode == 0, "the unit starts with fleet.env alone", (started.stderr or "").strip())
    time.sleep(CUT_OFF_SECONDS)
    facts = fleet_status(lab.socket_path())
    check(facts.get("fleet-host") == "lab" and facts.get("fleet-stale-since") not in (None, "-"),
          f"without fleet.conf's network the daemon, in fleet mode, reaches no member in {CUT_OFF_SECONDS} s",
          str({k: v for k, v in facts.items() if k.startswith("fleet-")}))
    lab.run(["rm", f"{DROP_INS}/only-env.conf"])


def with_drop_in(lab, etcd):
    """Returns how many lines the unit's journal had before (the cut-off start's complaints)."""
    before = len(lab.journal().splitlines())
    lab.run(["mkdir", "-p", DROP_INS])
    lab.run(["cp", f"{EXAMPLES}/fleet.conf", f"{DROP_INS}/fleet.conf"])
    started = start_fresh(lab)
    check(started.returncode == 0, "the unit starts with the shipped fleet.conf", (started.stderr or "").strip())
    facts = wait_up_to_date(lab.socket_path(), UP_TO_DATE_SECONDS)
    check(facts.get("fleet-host") == "lab" and facts.get("fleet-stale-since") == "-",
          "with fleet.conf the daemon joins the fleet over TLS, in its sandbox",
          str({k: v for k, v in facts.items() if k.startswith("fleet-")}) + " " + lab.journal()[-600:])
    user = lab.run(["ps", "-o", "user=", "-p", str(lab.main_pid())], check=False).stdout.strip()
    check(user == "sectiond", "the fleet host runs as user sectiond", user)

    ca, cert, key = etcd.tls_files()
    outside = Daemon(extra_args=["--etcd", ",".join(reversed(etcd.urls)), "--host-name", "outside",
                                 "--etcd-cacert", ca, "--etcd-cert", cert, "--etcd-key", key])
    try:
        second_host(lab, outside)
    except (OSError, RuntimeError) as error:
        check(False, "a second host shares the lab host's list", f"{type(error).__name__}: {error}")
    finally:
        outside.close()
    return before


def second_host(lab, outside):
    """A change through the lab's host reaches a host outside the lab."""
    outside.start(timeout=UP_TO_DATE_SECONDS)
    check(wait_up_to_date(outside.socket, UP_TO_DATE_SECONDS).get("fleet-stale-since") == "-",
          "a second host outside the lab joins the same fleet", outside.log()[-400:])
    with outside.connect(timeout=15) as subscriber, Client(lab.socket_path(), timeout=15) as lab_client:
        subscriber.request("SUBSCRIBE")
        reply = lab_client.request("TOGGLE 1")[-1]
        revision = int(reply.split()[-1]) if reply.startswith("OK ") else 1
        events = subscriber.events_until(revision)
        check(reply.startswith("OK ") and int(events[-1].split()[1]) == revision,
              "a change through the lab's host reaches the other's subscriber with its revision",
              f"{reply!r}, {events!r}")
        history = subscriber.request("HISTORY 1")[0]
        check("@lab" in history, "the other host's history names the lab's host", history)


def ordering(lab):
    lab.run(["cp", f"{EXAMPLES}/etcd-local.conf", f"{DROP_INS}/etcd-local.conf"])
    lab.systemctl("daemon-reload")
    shown = lab.show("sectiond.service", "Wants", "After", "DropInPaths")
    wants, after = shown.get("Wants", "").split(), shown.get("After", "").split()
    check(all(unit in wants and unit in after for unit in ("network-online.target", "etcd.service")),
          "fleet.conf and etcd-local.conf: Wants= and After= network-online.target and etcd.service", str(shown))


def security_and_journal(lab, journal_from):
    out = lab.run(["systemd-analyze", "security", "sectiond.service"], check=False).stdout
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", out)
    exposure = float(match[1]) if match else 99
    print(f"FIGURE systemd-analyze security sectiond.service with fleet.conf: {exposure}", flush=True)
    check(exposure <= 2.0, "systemd-analyze security rates the fleet host at most 2.0", str(exposure))
    failures = [line for line in lab.journal().splitlines()[journal_from:]
                if re.search(r"Failed to|failed to set|Permission denied|Operation not permitted", line)]
    check(not failures, "with fleet.conf the journal has no failed set-up and no refused call", "; ".join(failures[:3]))


def main():
    require_binary()
    if os.getuid() != 0:
        return skip_line("needs root")
    try:
        etcd = EtcdLab(tls=True).start()
    except EtcdUnavailable as reason:
        print(f"SKIP fleet-units: {reason}", flush=True)
        return 77  # skipped, for scripts/test.sh
    try:
        with Lab() as lab:
            set_up(lab, etcd)
            without_network(lab)
            journal_from = with_drop_in(lab, etcd)
            ordering(lab)
            security_and_journal(lab, journal_from)
    except LabUnavailable as reason:
        return skip_line(str(reason))
    finally:
        etcd.stop()
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
