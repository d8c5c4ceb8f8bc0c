#!/usr/bin/env python3
"""The fleet (docs/FLEET.md, docs/SECURITY.md "Several hosts") as an administrator
meets it: the first host's list, a reload, and etcd secured.

- seed-and-reload: hosts with different configs: the first host's list is the fleet's, the
  others log that their config was not used and serve the shared list, and STATUS's
  fleet-config says whose config the list is on each; `sectionctl reload` on another host (its
  config edited) replaces the list for all and says so: every host lists the new sections at
  the same revision, every host's subscribers get the same events (`!reload`), every host
  logs the fleet-wide reload once and names the reloading host in fleet-config; `sectionctl
  status` prints every fleet-* fact STATUS gives, by its name.
- no-quorum: two of three members frozen: a change on the third's host is refused with
  ERR UNAVAILABLE within 10 s (docs/FLEET.md, "Failures"), reads are answered, STATUS's
  fleet-state says `refusing` (not `serving`) while changes are refused; once the members are
  thawed the host takes changes again and says `serving`.

- stop-while-committing: SIGTERM while a change waits for etcd (every member frozen): the
  client gets its answer (ERR UNAVAILABLE) before the daemon stops, within the commit's deadline.
- tls: members on https with a CA made for the test, asking for client certificates; three
  sectiond with --etcd-cacert, --etcd-cert and --etcd-key share one list (a change on host 0 is
  on host 2 at the same revision); a host without the client certificate is refused by etcd,
  serves reads and refuses changes with ERR UNAVAILABLE.
- auth: etcd's auth on, a user whose role reaches only the fleet's prefix; hosts with its user
  and password from --etcd-credentials FILE and from SECTIOND_ETCD_USER/PASSWORD share the list;
  a host with a wrong password refuses changes with ERR UNAVAILABLE, naming etcd's refusal; a
  user with docs/FLEET.md's read-only role reads the prefix but cannot write it, and a host run
  as that user serves reads and refuses changes, naming the role as what to check.

Needs etcd and etcdctl (else one SKIP line). Run one part: fleet-admin.py tls.
Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from etcd_lab import EtcdLab, LabUnavailable  # noqa: E402
from fleet_lab import FleetLab, Host  # noqa: E402
from sdlib import build_dir, config_json, known_parts, require_binary, run_parts  # noqa: E402


@contextlib.contextmanager
def etcd_lab(part, **options):
    """A started EtcdLab for `part`, stopped after it; None (and a SKIP line) without etcd."""
    try:
        etcd = EtcdLab(**options).start()
    except LabUnavailable as reason:
        print(f"SKIP fleet-admin {part}: {reason}", flush=True)
        yield None
        return
    try:
        yield etcd
    finally:
        etcd.stop()


def shared_change(results, fleet, what):
    reply = fleet.hosts[0].request("TOGGLE 1")
    if not results.check(reply[-1].startswith("OK "), f"{what}: a TOGGLE on host 0 is acknowledged", str(reply)):
        return
    revision = int(reply[-1].split()[1])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and fleet.hosts[-1].revision() < revision:
        time.sleep(0.05)
    listed = fleet.hosts[-1].request("LIST")
    results.check(listed[-1] == f"OK {revision}" and "section 1 beta open" in " ".join(listed),
                  f"{what}: the last host has the change at revision {revision}", str(listed))


def add_host(fleet, arguments, environment=None):
    """A host more, started with `arguments` instead of the fleet's own extra ones."""
    fleet_arguments, fleet.extra_args = fleet.extra_args, arguments
    try:
        host = Host(fleet, len(os.listdir(fleet.directory)), fleet.configs[0])  # a directory of its own
    finally:
        fleet.extra_args = fleet_arguments
    host.daemon.environment = environment or {}
    fleet.hosts.append(host)
    return host.start()


def refused_host(results, fleet, what, refusal, arguments, environment=None):
    """A host more, with `arguments`: it serves reads and refuses a change with ERR UNAVAILABLE."""
    host = add_host(fleet, arguments, environment)
    # Its first call to etcd is refused at once; the refusal names what etcd said from then on.
    deadline = time.monotonic() + 5
    while "fleet-error" not in host.status() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    reply = host.request("TOGGLE 0", timeout=20)
    took = time.monotonic() - started
    results.check(reply[-1].startswith("ERR UNAVAILABLE") and took < 10 and refusal in reply[-1],
                  f"{what}: its change is refused with ERR UNAVAILABLE within 10 s ({took:.1f} s), naming etcd's refusal",
                  str(reply))
    listed = host.request("LIST")
    results.check(listed[-1].startswith("OK "), f"{what}: it still answers reads", str(listed))
    return host


def seed_and_reload(results):
    with etcd_lab("seed-and-reload") as etcd:
        if etcd is None:
            return
        configs = [config_json(["alpha", "beta"]), config_json(["gamma"]), config_json(["delta", "epsilon", "zeta"])]
        with FleetLab(etcd, configs=configs) as fleet:
            for host in fleet.hosts:
                listed = [line.split()[2] for line in host.request("LIST")[:-1]]
                results.check(listed == ["alpha", "beta"], f"{host.name} serves the first host's list", str(listed))
            logged = [("config is not used" in host.log()) for host in fleet.hosts]
            results.check(logged == [False, True, True], "the hosts that adopted the list log that their config was not used",
                          str(logged))
            sources = [host.status().get("fleet-config", "") for host in fleet.hosts]
            results.check(sources[0].startswith("this host's config (it seeded the fleet")
                          and all(source.endswith("this host's config is not used") for source in sources[1:]),
                          "STATUS's fleet-config says whose config the list is: host 0's, not the others'", str(sources))
            watches = [host.subscribe() for host in fleet.hosts]
            try:
                with open(os.path.join(fleet.hosts[1].daemon.dir, "sections.json"), "w") as file:
                    file.write(config_json(["gamma", "alpha"]))
                done = sectionctl(fleet.hosts[1], "reload")
                said = "in a fleet: every host now serves h1's config, not only h1"
                if not results.check(done.returncode == 0 and said in done.stdout,
                                     "sectionctl reload on host 1 says it replaced the list on every host",
                                     done.stdout + done.stderr):
                    return
                revision = fleet.hosts[1].revision()
                fleet.converged(timeout=15)
                for host in fleet.hosts:
                    listed = host.request("LIST")
                    ids = [line.split()[2] for line in listed[:-1]]
                    results.check(ids == ["gamma", "alpha"] and listed[-1] == f"OK {revision}",
                                  f"{host.name} lists host 1's reloaded list at revision {revision}", str(listed))
                streams = [watch.events_until(revision) for watch in watches]
                results.check(streams[0] == streams[1] == streams[2] and f"!reload {revision}" in streams[0],
                              "every host's subscriber gets the reload's events, the same on each", str(streams))
            finally:
                for watch in watches:
                    watch.close()
            told = [host.log().count(f"h1 reloaded its config for every host: the list is replaced here too, at revision {revision}")
                    for host in fleet.hosts]
            here = fleet.hosts[1].log().count(f"this host's reload replaced the list on every host of the fleet, at revision {revision}")
            results.check(told == [1, 0, 1] and here == 1,
                          "every host logs the fleet-wide reload once (the others name host 1)", f"{told}, h1: {here}")
            sources = [host.status().get("fleet-config", "") for host in fleet.hosts]
            expected = [f"h1's config (reloaded for every host at revision {revision}); this host's config is not used",
                        f"this host's config (reloaded for every host at revision {revision})"]
            results.check(sources == [expected[0], expected[1], expected[0]],
                          "STATUS's fleet-config names host 1's config on every host after its reload", str(sources))
            status_shows_fleet(results, fleet.hosts[2], "seed-and-reload")


def sectionctl(host, *arguments):
    return subprocess.run([os.path.join(build_dir(), "sectionctl"), "-s", host.socket, *arguments],
                          capture_output=True, text=True, timeout=30)


def status_shows_fleet(results, host, what):
    """`sectionctl status` prints every fleet-* fact of STATUS as `name:  value`; returns STATUS."""
    facts = host.status()
    shown = sectionctl(host, "status").stdout
    fleet = {key: value for key, value in facts.items() if key.startswith("fleet-")}
    missing = [key for key, value in fleet.items() if not re.search(rf"^{re.escape(key)}: +{re.escape(value)}$", shown, re.M)]
    results.check(len(fleet) >= 7 and not missing,
                  f"{what}: sectionctl status prints every fleet-* fact STATUS gives ({len(fleet)}), by its name",
                  f"missing {missing} in:\n{shown}")
    return facts


# The bound on a change's answer that docs/FLEET.md ("Failures") promises whatever etcd does.
CHANGE_LIMIT = 10.0


def no_quorum(results):
    with etcd_lab("no-quorum") as etcd:
        if etcd is None:
            return
        with FleetLab(etcd, hosts=1) as fleet:
            host = fleet.hosts[0]  # its own member, m0, first
            for index in (1, 2):
                etcd.kill(index, signal.SIGSTOP)
            try:
                started = time.monotonic()
                reply = host.request("TOGGLE 1", timeout=CHANGE_LIMIT + 10)
                took = time.monotonic() - started
                results.check(reply[-1].startswith("ERR UNAVAILABLE") and took <= CHANGE_LIMIT,
                              f"no quorum: a change is refused with ERR UNAVAILABLE within {CHANGE_LIMIT:.0f} s",
                              f"{reply[-1]} after {took:.1f} s")
                started = time.monotonic()
                listed = host.request("LIST")
                results.check(listed[-1].startswith("OK ") and time.monotonic() - started < 2,
                              "no quorum: reads are answered at once", str(listed[-1]))
                facts = status_shows_fleet(results, host, "no quorum")
                results.check(facts.get("fleet-state") == "refusing" and facts.get("fleet-error", "-") != "-",
                              "no quorum: fleet-state says refusing, fleet-error why", str(facts))
            finally:
                for index in (1, 2):
                    etcd.kill(index, signal.SIGCONT)
            deadline = time.monotonic() + 30
            reply, facts = [""], {}
            while time.monotonic() < deadline:
                reply = host.request("TOGGLE 1", timeout=CHANGE_LIMIT + 10)
                facts = host.status()
                if reply[-1].startswith("OK ") and facts.get("fleet-state") == "serving":
                    break
                time.sleep(0.5)
            results.check(reply[-1].startswith("OK ") and facts.get("fleet-state") == "serving",
                          "quorum back: changes are taken again and fleet-state says serving",
                          f"{reply[-1]}, {facts.get('fleet-state')}")


def stop_while_committing(results):
    with etcd_lab("stop-while-committing") as etcd:
        if etcd is None:
            return
        with FleetLab(etcd, hosts=1) as fleet:
            host = fleet.hosts[0]
            for index in range(len(etcd.urls)):
                etcd.kill(index, signal.SIGSTOP)
            try:
                client = host.connect(timeout=20)
                client.send("TOGGLE 1\n")
                time.sleep(0.5)
                host.daemon.proc.send_signal(signal.SIGTERM)
                started = time.monotonic()
                reply = client.read_reply()
                client.close()
                results.check(reply[-1].startswith("ERR UNAVAILABLE"),
                              "SIGTERM while a change waits for etcd: the client hears its outcome first", str(reply))
                code = host.daemon.proc.wait(timeout=15)
                results.check(code == 0 and time.monotonic() - started < 10,
                              f"then the daemon stops (exit {code}, {time.monotonic() - started:.1f} s)")
            finally:
                for index in range(len(etcd.urls)):
                    etcd.kill(index, signal.SIGCONT)


def tls(results):
    with etcd_lab("tls", tls=True) as etcd:
        if etcd is None:
            return
        ca, cert, key = etcd.tls_files()
        with FleetLab(etcd, extra_args=["--etcd-cacert", ca, "--etcd-cert", cert, "--etcd-key", key]) as fleet:
            shared_change(results, fleet, "tls")
            refused_host(results, fleet, "a host without the client certificate", "etcd", ["--etcd-cacert", ca])


def etcdctl(etcd, *words):
    return subprocess.run(["etcdctl", f"--endpoints={etcd.urls[0]}", *words], capture_output=True, text=True,
                          timeout=20)


def auth(results):
    with etcd_lab("auth") as etcd:
        if etcd is None:
            return
        fleet = FleetLab(etcd)
        prefix = fleet.prefix
        # docs/FLEET.md's roles: readwrite on the prefix for the hosts, read for what only watches.
        for command in (["user", "add", "root:rootpw"], ["user", "add", "fleet:fleetpw"], ["role", "add", "fleet"],
                        ["role", "grant-permission", "fleet", "--prefix=true", "readwrite", prefix],
                        ["user", "grant-role", "fleet", "fleet"], ["user", "add", "watcher:watchpw"],
                        ["role", "add", "fleet-reader"],
                        ["role", "grant-permission", "fleet-reader", "--prefix=true", "read", prefix],
                        ["user", "grant-role", "watcher", "fleet-reader"], ["auth", "enable"]):
            done = etcdctl(etcd, *command)
            if not results.check(done.returncode == 0, f"etcdctl {' '.join(command)}", done.stderr):
                return
        credentials = os.path.join(etcd.directory, "credentials")
        with open(os.open(credentials, os.O_WRONLY | os.O_CREAT, 0o600), "w") as file:
            file.write("fleet:fleetpw\n")
        fleet.extra_args = ["--etcd-credentials", credentials]
        with fleet:
            shared_change(results, fleet, "auth with --etcd-credentials")
            refused_host(results, fleet, "a host with a wrong password", "authentication failed", [],
                         {"SECTIOND_ETCD_USER": "fleet", "SECTIOND_ETCD_PASSWORD": "wrong"})
            # The environment's user and password work as the file's do.
            fleet.hosts.pop().kill()
            host = add_host(fleet, [], {"SECTIOND_ETCD_USER": "fleet", "SECTIOND_ETCD_PASSWORD": "fleetpw"})
            revision = fleet.converged(timeout=15)
            reply = host.request("TOGGLE 2")
            results.check(reply[-1] == f"OK {revision + 1}",
                          "auth from SECTIOND_ETCD_USER/PASSWORD: the host joins and changes the list", str(reply))
            # The read-only role: it reads the fleet's keys, it cannot write them, and a host
            # given it joins, serves reads and refuses changes naming the role.
            read = etcdctl(etcd, "--user", "watcher:watchpw", "get", "--prefix", "--keys-only", prefix)
            written = etcdctl(etcd, "--user", "watcher:watchpw", "put", prefix + "head", "0 0 forged")
            results.check(read.returncode == 0 and prefix + "head" in read.stdout and written.returncode != 0
                          and "permission denied" in written.stderr,
                          "the read-only role reads the prefix and cannot write it", f"{read} {written}")  # fmt: skip
            fleet.hosts.pop().kill()
            refused_host(results, fleet, "a host with the read-only role", "role", [],
                         {"SECTIOND_ETCD_USER": "watcher", "SECTIOND_ETCD_PASSWORD": "watchpw"})


PARTS = {"seed-and-reload": seed_and_reload, "no-quorum": no_quorum, "stop-while-committing": stop_while_committing,
         "tls": tls, "auth": auth}


def main(argv):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    require_binary()
    known_parts(PARTS, argv)
    return run_parts(PARTS, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
