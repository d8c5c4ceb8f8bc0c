#!/usr/bin/env python3
"""Several lists on one machine, under a real systemd 252 as PID 1 (the lab,
Tests/System/lib/lab.py), installed as the Debian package installs it (PREFIX=/usr, the D-Bus
policy in /usr/share/dbus-1/system.d): the unnamed list (sectiond.service), two system
instances (sectiond@a, with /etc/sectiond/a.json, and sectiond@b, with no config yet) and
one per-user instance (alice's sectiond@u under her user manager), all at once. Then:

- each is changed through its own face: sectionctl -l, the bus name
  org.sectiond.Sectiond1.NAME (busctl), and the socket itself (protocol lines), and each
  list shows its own change only; alice changes hers on her session bus too;
- `systemctl restart sectiond@a` keeps a's state and leaves b and the plain list alone
  (their MainPID and revision);
- a crash of a (SIGKILL, Restart=on-failure) leaves b's clients connected: a subscriber of
  b still gets b's next change, and b's process is the same;
- `systemctl reload sectiond@a` takes a's new config, b's list is unchanged;
- a full disk under a (its state directory a full tmpfs) refuses a's changes, while b takes
  its own and tells its subscribers; a at its client limit refuses a client, b takes more;
- `sectionctl lists` in text and JSON, as root (every system list) and as alice (her own
  list, then the system's through their read-only sockets);
- STATUS says `status list NAME`, the service's status line begins `list NAME:`;
- the bus names: `busctl list` shows org.sectiond.Sectiond1, .a and .b; bus activation of
  sectiond@c-d (bus name ...Sectiond1.c-d) through a service file written for that instance;
- the installed sectiond-web.service: the page ?list=a in Chromium shows a, a click changes a;
- sectiond --list NAME started by hand by a user derives that user's paths;
- README.md's worked example, run as written in a lab of its own;
- the refusals of bad names (`../x`, `A`, 33 characters, empty) by sectionctl and by
  sectiond, and of the unit sectiond@Bad, whose start fails naming the rule.

Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from lab import ROOT, Lab, LabUnavailable, skip_line  # noqa: E402
from sdlib import Client, Results, config_json, require_binary  # noqa: E402
from web_socket import free_port, wait_for  # noqa: E402

RULE = "a list name is 1 to 32 characters of a-z, 0-9, _ and -, starting with a letter"
USER = "alice"
BUS = "org.sectiond.Sectiond1"
PATH = "/org/sectiond/Sectiond1"
BAD_NAMES = ["../x", "A", "a" * 33, ""]


def output(result):
    return (result.stdout + result.stderr).strip()


class Lists:
    """The lab with the plain daemon, sectiond@a, sectiond@b and alice's sectiond@u running."""

    def __init__(self, lab):
        self.lab = lab
        self.home = f"/home/{USER}"
        self.user_path = "/usr/bin:/bin"

    def ctl(self, *argv, user=None):
        result = self.lab.run(["sectionctl", *argv], user=user, check=False,
                              env={"PATH": self.user_path} if user else None)
        return result

    def listed(self, *argv, user=None):
        """The sections of a list as {id: open}, or the error text."""
        result = self.ctl(*argv, "--json", "list", user=user)
        if result.returncode != 0:
            return output(result)
        return {s["id"]: s["open"] for s in json.loads(result.stdout)["sections"]}

    def revision(self, *argv):
        result = self.ctl(*argv, "--json", "status")
        return json.loads(result.stdout)["revision"] if result.returncode == 0 else output(result)

    def user_systemctl(self, *argv):
        return self.lab.run(["systemctl", "--user", *argv], user=USER, check=False,
                            env={"PATH": self.user_path})

    def set_up(self, results):
        lab = self.lab
        lab.install(prefix="/usr")
        lab.write_file("/etc/sectiond/sections.json", config_json(["one", "two", "three"]))
        lab.write_file("/etc/sectiond/a.json", config_json(["apple", "apricot"]))
        lab.systemctl("start", "dbus.socket")
        lab.add_user(USER)
        lab.user_manager(USER)
        started = lab.systemctl("start", "sectiond.socket", "sectiond-readonly.socket", "sectiond@a.socket",
                                "sectiond-readonly@a.socket", "sectiond@b.socket", "sectiond-readonly@b.socket",
                                check=False)
        # The user's session bus first, so that sectiond@u finds it at once.
        self.user_systemctl("start", "dbus.socket")
        user = self.user_systemctl("start", "sectiond@u.socket", "sectiond-readonly@u.socket")
        results.check(started.returncode == 0 and user.returncode == 0,
                      "the sockets of the plain list, sectiond@a, sectiond@b and alice's sectiond@u start",
                      output(started) + output(user))
        # The first request activates each service.
        for argv in ([], ["-l", "a"], ["-l", "b"]):
            self.ctl(*argv, "ping")
        self.ctl("-l", "u", "ping", user=USER)
        active = {unit: lab.show(unit, "ActiveState")["ActiveState"]
                  for unit in ("sectiond.service", "sectiond@a.service", "sectiond@b.service")}
        user_active = self.user_systemctl("is-active", "sectiond@u.service").stdout.strip()
        results.check(set(active.values()) == {"active"} and user_active == "active",
                      "four daemons at once: sectiond, sectiond@a, sectiond@b and alice's sectiond@u",
                      f"{active}, user {user_active}")

    def paths(self, results):
        """Each list's own sockets, config and state, as the units and --list derive them."""
        lab = self.lab
        sockets = [f"/run/sectiond/{n}/{s}" for n in ("a", "b") for s in ("control.sock", "readonly.sock")]
        results.check(all(os.path.exists(lab.host_path(p)) for p in sockets),
                      "sockets in /run/sectiond/a/ and /run/sectiond/b/", str(sockets))
        lists = {name: self.listed("-l", name) for name in ("a", "b")}
        lists["-"] = self.listed()
        lists["u"] = self.listed("-l", "u", user=USER)
        results.check(list(lists["a"]) == ["apple", "apricot"] and list(lists["-"]) == ["one", "two", "three"]
                      and len(lists["b"]) == 3 and "apple" not in lists["b"],
                      "a serves /etc/sectiond/a.json, b (no config yet) the demo set, the plain list its own",
                      str(lists))
        facts = {}
        for name in ("a", "b"):
            status = self.ctl("-l", name, "--json", "status")
            facts[name] = json.loads(status.stdout) if status.returncode == 0 else {"error": output(status)}
        results.check(facts["a"].get("config") == "/etc/sectiond/a.json"
                      and facts["a"].get("state") == "/var/lib/sectiond/a/state.json"
                      and facts["b"].get("config") is None
                      and facts["b"].get("state") == "/var/lib/sectiond/b/state.json"
                      and facts["a"].get("list") == "a",
                      "sectionctl -l a status: list a, config /etc/sectiond/a.json, state /var/lib/sectiond/a/",
                      f"a {facts['a'].get('config')} {facts['a'].get('state')}, b {facts['b'].get('state')}")
        raw = Client(lab.host_path("/run/sectiond/b/readonly.sock")).request("STATUS")
        plain = Client(lab.host_path("/run/sectiond/readonly.sock")).request("STATUS")
        results.check("status list b" in raw and "status list -" in plain,
                      "STATUS says status list b on b's read-only socket, status list - on the plain one",
                      f"{raw[0]} / {plain[0]}")
        text = lab.show("sectiond@b.service", "StatusText")["StatusText"]
        plain_text = lab.show("sectiond.service", "StatusText")["StatusText"]
        results.check(text.startswith("list b: ") and not plain_text.startswith("list"),
                      "the status line of sectiond@b begins 'list b:', the plain one's as before",
                      f"{text} / {plain_text}")
        state = lab.host_path(f"{self.home}/.local/state/sectiond/u/state.json")
        results.check(os.path.exists(lab.host_path(f"/run/user/{lab.uid(USER)}/sectiond/u/control.sock"))
                      and os.path.exists(state),
                      "alice's sectiond@u: sockets in $XDG_RUNTIME_DIR/sectiond/u, state in "
                      "~/.local/state/sectiond/u")

    def changes(self, results):
        """One change per list, each through another face; each list shows its own only."""
        a = self.ctl("-l", "a", "open", "apple")
        results.check(a.returncode == 0, "sectionctl -l a open apple", output(a))
        b_first = next(iter(self.listed("-l", "b")))
        bus = self.lab.run(["busctl", "--system", "call", f"{BUS}.b", PATH, BUS, "Open", "s", b_first],
                           check=False)
        results.check(bus.returncode == 0, f"busctl call {BUS}.b Open {b_first}", output(bus))
        with Client(self.lab.host_path("/run/sectiond/control.sock")) as plain:
            reply = plain.request("OPEN two")
        results.check(reply[-1].startswith("OK"), "OPEN two on the plain list's control socket", str(reply))
        u = self.ctl("-l", "u", "open", "1", user=USER)
        results.check(u.returncode == 0, "alice: sectionctl -l u open 1", output(u))
        seen = {"a": self.listed("-l", "a"), "b": self.listed("-l", "b"), "-": self.listed(),
                "u": self.listed("-l", "u", user=USER)}
        opened = {name: [i for i, is_open in lst.items() if is_open] if isinstance(lst, dict) else lst
                  for name, lst in seen.items()}
        u_ids = list(seen["u"]) if isinstance(seen["u"], dict) else []
        results.check(opened["a"] == ["apple"] and opened["b"] == [b_first] and opened["-"] == ["two"]
                      and opened["u"] == u_ids[1:2],
                      "each list holds its own change only", str(opened))
        session = self.lab.run(["busctl", "--user", "call", f"{BUS}.u", PATH, BUS, "Toggle", "s", "third"],
                               user=USER, check=False, env={"PATH": self.user_path})
        u_open = self.listed("-l", "u", user=USER)
        results.check(session.returncode == 0 and isinstance(u_open, dict) and u_open.get("third") is True,
                      f"alice: busctl --user call {BUS}.u Toggle third, on her session bus", output(session))
        env = {"SECTIOND_LIST": "a"}
        by_env = self.lab.run(["sectionctl", "--json", "status"], env=env, check=False)
        results.check(by_env.returncode == 0 and json.loads(by_env.stdout)["open_ids"] == ["apple"],
                      "SECTIOND_LIST=a sectionctl status talks to a", output(by_env)[:200])
        property_a = self.lab.run(["busctl", "--system", "get-property", f"{BUS}.a", PATH, BUS, "Revision"],
                                  check=False)
        results.check(property_a.returncode == 0 and property_a.stdout.split()[1] == str(self.revision("-l", "a")),
                      f"{BUS}.a's Revision is a's revision", output(property_a))

    def bus_names(self, results):
        names = self.lab.run(["busctl", "--system", "list", "--no-legend"], check=False).stdout
        ours = sorted(line.split()[0] for line in names.splitlines() if line.startswith("org.sectiond"))
        results.check(ours == [BUS, f"{BUS}.a", f"{BUS}.b"],
                      "busctl list | grep org.sectiond: the plain name and one per instance", str(ours))

    def activation(self, results):
        """Bus activation of an instance: dbus-daemon knows a name only from a file of its own,
        so the administrator writes one per instance (docs/DBUS.md, "Several lists"); the first
        call then starts sectiond@c-d through systemd, under the name c-d as it is."""
        service = f"/usr/local/share/dbus-1/system-services/{BUS}.c-d.service"
        self.lab.write_file(service, f"[D-BUS Service]\nName={BUS}.c-d\nExec=/bin/false\nUser=sectiond\n"
                            "SystemdService=sectiond@c-d.service\n")
        self.lab.run(["busctl", "--system", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                      "org.freedesktop.DBus", "ReloadConfig"], check=False)
        before = self.lab.show("sectiond@c-d.service", "ActiveState")["ActiveState"]
        call = self.lab.run(["busctl", "--system", "call", f"{BUS}.c-d", PATH, BUS, "List"], check=False)
        after = self.lab.show("sectiond@c-d.service", "ActiveState")["ActiveState"]
        results.check(before == "inactive" and call.returncode == 0 and after == "active",
                      f"the first call to {BUS}.c-d starts sectiond@c-d (a service file for the instance)",
                      f"{before} -> {after}: {output(call)[:120]}")
        status = self.ctl("-l", "c-d", "--json", "status")
        results.check(status.returncode == 0 and json.loads(status.stdout)["list"] == "c-d",
                      "sectionctl -l c-d reaches it at /run/sectiond/c-d/", output(status)[:120])

    def restart(self, results):
        lab = self.lab
        before = {unit: lab.main_pid(unit) for unit in ("sectiond.service", "sectiond@b.service")}
        revisions = (self.revision(), self.revision("-l", "b"))
        old = lab.main_pid("sectiond@a.service")
        lab.systemctl("restart", "sectiond@a.service")
        new = lab.main_pid("sectiond@a.service")
        kept = self.listed("-l", "a")
        results.check(new not in (0, old) and kept == {"apple": True, "apricot": False},
                      "systemctl restart sectiond@a: a new process, a's state kept", f"{old} -> {new}, {kept}")
        after = {unit: lab.main_pid(unit) for unit in before}
        results.check(after == before and (self.revision(), self.revision("-l", "b")) == revisions,
                      "the plain list and b are untouched by a's restart (same processes, same revisions)",
                      f"{before} -> {after}")

    def crash(self, results):
        """A crash of a: b's subscriber stays connected and gets b's next change."""
        lab = self.lab
        b_pid = lab.main_pid("sectiond@b.service")
        subscriber = Client(lab.host_path("/run/sectiond/b/readonly.sock"), timeout=10)
        subscribed = subscriber.request("SUBSCRIBE")
        victim = lab.main_pid("sectiond@a.service")
        lab.run(["kill", "-KILL", str(victim)])
        restarted = wait_for(lambda: lab.main_pid("sectiond@a.service") not in (0, victim)
                             and self.ctl("-l", "a", "ping").returncode == 0, 15)
        self.ctl("-l", "b", "toggle", "0")
        event = subscriber.readline()
        subscriber.close()
        results.check(subscribed[-1].startswith("OK") and event is not None and event.startswith("!"),
                      "a subscriber of b, connected while a crashed, gets b's next change", str(event))
        results.check(lab.main_pid("sectiond@b.service") == b_pid, "b's process is the same after a's crash")
        results.check(restarted and self.listed("-l", "a") == {"apple": True, "apricot": False},
                      "a is restarted (Restart=on-failure) with its state")

    def reload(self, results):
        b_before = self.listed("-l", "b")
        self.lab.write_file("/etc/sectiond/a.json", config_json(["apple", "apricot", "avocado"]))
        reloaded = self.lab.systemctl("reload", "sectiond@a.service", check=False)
        results.check(reloaded.returncode == 0 and list(self.listed("-l", "a")) == ["apple", "apricot", "avocado"]
                      and self.listed("-l", "b") == b_before,
                      "systemctl reload sectiond@a takes a's new config; b is unchanged", output(reloaded))

    def lists(self, results):
        text = self.ctl("lists")
        rows = [line.split() for line in text.stdout.splitlines()[1:]]
        names = [(row[0], row[1]) for row in rows]
        results.check(text.returncode == 0 and text.stdout.startswith("NAME")
                      and names == [("-", "system"), ("a", "system"), ("b", "system")],
                      "sectionctl lists (root): the plain list, a and b, one line each", text.stdout)
        a_row = next((row for row in rows if row[0] == "a"), [])
        results.check(a_row[2:5] == ["3", "1", str(self.revision("-l", "a"))],
                      "the row of a: 3 sections, 1 open, its revision", " ".join(a_row))
        as_json = self.ctl("lists", "--json")
        entries = json.loads(as_json.stdout)["lists"] if as_json.returncode == 0 else []
        results.check([e["name"] for e in entries] == [None, "a", "b"]
                      and all(e["error"] is None and isinstance(e["clients"], int) for e in entries),
                      "sectionctl lists --json: name (null unnamed), counts, clients", as_json.stdout[:300])
        mine = self.ctl("lists", "--json", user=USER)
        seen = [(e["name"], e["scope"], e["clients"] is None) for e in json.loads(mine.stdout)["lists"]] \
            if mine.returncode == 0 else output(mine)
        results.check(seen == [("u", "user", False), (None, "system", True), ("a", "system", True),
                               ("b", "system", True)],
                      "as alice: her own list u first, then the system's through their read-only sockets "
                      "(no client count)", str(seen))

    def full_disk(self, results):
        """a's state directory full (a 256 KiB tmpfs with a's state moved in, filled): a refuses
        its changes and says why, b takes its changes and tells its subscriber; once there is
        room again, a takes changes again."""
        lab = self.lab
        kept = self.listed("-l", "a")
        mounted = lab.run(["sh", "-c", "systemctl stop sectiond@a.service && cp -a /var/lib/sectiond/a /run/a-state"
                           " && mount -t tmpfs -o size=256k,mode=0700,uid=$(id -u sectiond),gid=$(id -g sectiond)"
                           " tmpfs /var/lib/sectiond/a && cp -a /run/a-state/. /var/lib/sectiond/a/"
                           " && systemctl start sectiond@a.service"
                           " && (dd if=/dev/zero of=/var/lib/sectiond/a/fill bs=4k 2>/dev/null; true)"],
                          check=False)
        results.check(mounted.returncode == 0 and self.listed("-l", "a") == kept,
                      "a restarted on a 256 KiB state directory, now full, with its state", output(mounted))
        subscriber = Client(lab.host_path("/run/sectiond/b/readonly.sock"), timeout=10)
        subscriber.request("SUBSCRIBE")
        refused = self.ctl("-l", "a", "toggle", "0")
        taken = self.ctl("-l", "b", "toggle", "0")
        event = subscriber.readline()
        subscriber.close()
        results.check(refused.returncode == 1 and "No space left on device" in refused.stderr,
                      "a full disk under a: a refuses the change and says why", output(refused))
        results.check(taken.returncode == 0 and event is not None and event.startswith("!"),
                      "meanwhile b takes its change and its subscriber gets it", f"{output(taken)}; {event}")
        lab.run(["rm", "/var/lib/sectiond/a/fill"])
        again = wait_for(lambda: self.ctl("-l", "a", "toggle", "1").returncode == 0, 10)
        results.check(again, "with room again, a takes changes again")

    def limit(self, results):
        """a at its client limit (a drop-in: --max-clients 2) refuses a third client, while b
        takes new clients as before."""
        lab = self.lab
        lab.write_file("/etc/systemd/system/sectiond@a.service.d/limit.conf",
                       "[Service]\nExecStart=\nExecStart=/usr/bin/sectiond --list %i --max-clients 2 --fd-store 3"
                       " --bus system\nFileDescriptorStoreMax=3\n")
        lab.systemctl("daemon-reload")
        lab.systemctl("restart", "sectiond@a.service")
        held = [Client(lab.host_path("/run/sectiond/a/control.sock")) for _ in range(2)]
        answered = [client.request("PING") for client in held]
        with Client(lab.host_path("/run/sectiond/a/control.sock")) as third:
            refused = third.readline()
        b_clients = [Client(lab.host_path("/run/sectiond/b/control.sock")) for _ in range(4)]
        b_answers = [client.request("PING") for client in b_clients]
        for client in held + b_clients:
            client.close()
        results.check(answered == [["OK"], ["OK"]] and refused is not None and refused.startswith("ERR"),
                      "a at its limit of 2 clients refuses a third", str(refused))
        results.check(b_answers == [["OK"]] * 4, "meanwhile b takes 4 new clients", str(b_answers))
        lab.run(["rm", "-r", "/etc/systemd/system/sectiond@a.service.d"])
        lab.systemctl("daemon-reload")
        lab.systemctl("restart", "sectiond@a.service")

    def fallback(self, results):
        """-l resolves as the unnamed list does: alice has no list a of her own, so she reads
        the system's a through its read-only socket, and is told how to get the right to change."""
        status = self.ctl("-l", "a", "status", user=USER)
        results.check(status.returncode == 0 and "/run/sectiond/a/readonly.sock (the system daemon)" in status.stdout
                      and "list:      a" in status.stdout,
                      "alice: sectionctl -l a status reads the system's list a through its read-only socket",
                      output(status)[:300])
        change = self.ctl("-l", "a", "toggle", "0", user=USER)
        results.check(change.returncode == 3 and "usermod -aG sectiond" in change.stderr,
                      "alice: a change of the system's list a says how to join group sectiond", output(change))
        absent = self.ctl("-l", "nothing", "status")
        results.check(absent.returncode == 3 and "sudo systemctl start sectiond@nothing.socket" in absent.stderr,
                      "a list that does not run: the error names its socket unit", output(absent))

    def by_hand(self, results):
        """sectiond --list NAME started by hand by alice derives her own paths from the name:
        sockets in $XDG_RUNTIME_DIR/sectiond/NAME, ~/.config/sectiond/NAME.json,
        ~/.local/state/sectiond/NAME/state.json; an explicit --socket still wins. (The lab
        ends both daemons: they are its processes.)"""
        uid = self.lab.uid(USER)
        run = lambda command: self.lab.run(["sh", "-c", command], user=USER, check=False,  # noqa: E731
                                           env={"PATH": self.user_path})
        run("mkdir -p ~/.config/sectiond && echo '" + config_json(["by", "hand"]) + "' > ~/.config/sectiond/hand.json"
            " && (setsid sectiond --list hand >/dev/null 2>&1 &)"
            " && (setsid sectiond --list other --socket /tmp/other.sock --no-state >/dev/null 2>&1 &)")
        wait_for(lambda: self.ctl("-l", "hand", "ping", user=USER).returncode == 0, 10)
        status = self.ctl("-l", "hand", "--json", "status", user=USER)
        facts = json.loads(status.stdout) if status.returncode == 0 else {}
        results.check(facts.get("socket") == f"/run/user/{uid}/sectiond/hand/control.sock"
                      and facts.get("config") == f"{self.home}/.config/sectiond/hand.json"
                      and facts.get("state") == f"{self.home}/.local/state/sectiond/hand/state.json"
                      and facts.get("open_ids") == [] and facts.get("sections") == 2,
                      "alice: sectiond --list hand by hand uses her runtime, config and state directories",
                      str({k: facts.get(k) for k in ("socket", "config", "state")}) if facts else output(status))
        # Killed, its socket file stays: sectionctl lists says the list does not answer, and why.
        self.lab.run(["kill", "-KILL", str(facts.get("pid", 0))], check=False)
        mine = self.ctl("lists", "--json", user=USER)
        rows = {e["name"]: e for e in json.loads(mine.stdout)["lists"]} if mine.returncode == 0 else {}
        dead = rows.get("hand", {})
        results.check(mine.returncode == 0 and dead.get("sections") is None and "hand/control.sock" in (dead.get("error") or "")
                      and rows.get("u", {}).get("error") is None,
                      "a list whose daemon died (its socket left) is listed with why, the others as before",
                      str(dead.get("error")))
        ask = lambda: self.ctl("--socket", "/tmp/other.sock", "--json", "status", user=USER)  # noqa: E731
        other = wait_for(lambda: (answer := ask()).returncode == 0 and answer, 10) or ask()
        listed = json.loads(other.stdout).get("list") if other.returncode == 0 else output(other)
        results.check(listed == "other", "sectiond --list other --socket /tmp/other.sock: the explicit socket wins",
                      str(listed))

    def web(self, results):
        """The installed sectiond-web.service, on a free port (a drop-in), with the control
        socket (the README's drop-in, plus the group): the page ?list=a in Chromium on the host
        (the lab shares the host's network) shows a, and a click there changes a alone."""
        selenium = subprocess.run(["/usr/bin/python3", "-c", "import selenium"], capture_output=True).returncode == 0
        if not (os.path.exists("/usr/bin/websocketd") and os.path.exists("/usr/bin/chromium") and selenium):
            print("SKIP the web page in the lab: websocketd, chromium or python3-selenium is not installed "
                  "(scripts/deps.sh --test installs them)", flush=True)
            return
        port = free_port()
        self.lab.write_file("/etc/systemd/system/sectiond-web.service.d/lists.conf",
                            f"[Service]\nEnvironment=SECTIOND_WEB_PORT={port}\n"
                            "Environment=SECTIOND_WEB_SOCKET=/run/sectiond/control.sock\n"
                            "SupplementaryGroups=sectiond\n")
        self.lab.systemctl("daemon-reload")
        started = self.lab.systemctl("start", "sectiond-web.service", check=False)
        wait_for(lambda: self._listening(port), 10)
        before = {"a": self.listed("-l", "a"), "-": self.listed()}
        shown = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "Tests", "System", "lib", "web_list_page.py"),
                                f"http://127.0.0.1:{port}/?list=a", "1"],
                               capture_output=True, text=True, timeout=120)
        got = json.loads(shown.stdout) if shown.returncode == 0 else {}
        after = {"a": self.listed("-l", "a"), "-": self.listed()}
        titles = [s["title"] for s in got.get("sections", [])]
        results.check(started.returncode == 0 and got.get("connected") and got.get("bar") == "a"
                      and titles == [t.capitalize() for t in before["a"]],
                      "sectiond-web.service in the lab: the page ?list=a in Chromium shows the list a",
                      f"{got.get('bar')} {titles}" if got else (output(started) + shown.stderr[-400:]))
        flipped = {k: v for k, v in after["a"].items() if before["a"].get(k) != v} if isinstance(after["a"], dict) else {}
        results.check(list(flipped) == [list(before["a"])[1]] and after["-"] == before["-"],
                      "a click on the page ?list=a toggles a's section, the unnamed list is unchanged",
                      f"{flipped}; plain {after['-'] == before['-']}")
        self.lab.systemctl("stop", "sectiond-web.service", check=False)

    @staticmethod
    def _listening(port):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            return False

    def refusals(self, results):
        for name in BAD_NAMES:
            shown = name if len(name) < 10 else f"{len(name)} characters"
            ctl = self.ctl("-l", name, "list")
            env = self.lab.run(["sectionctl", "list"], env={"SECTIOND_LIST": name}, check=False)
            daemon = self.lab.run(["sectiond", "--list", name, "--check-config"], check=False)
            results.check(ctl.returncode == 2 and RULE in ctl.stderr and daemon.returncode == 2
                          and RULE in daemon.stderr and (name == "" or (env.returncode == 2 and RULE in env.stderr)),
                          f"the list name '{shown}' is refused by sectionctl -l, SECTIOND_LIST and "
                          "sectiond --list, naming the rule",
                          f"{output(ctl)} / {output(daemon)}")
        bad = self.lab.systemctl("start", "sectiond@Bad.service", check=False)
        journal = self.lab.journal("sectiond@Bad.service")
        results.check(bad.returncode != 0 and RULE in journal,
                      "systemctl start sectiond@Bad fails and the journal names the rule",
                      journal.strip().splitlines()[-1] if journal.strip() else output(bad))


def readme_example(results):
    """README.md's worked example ("Several lists"), run as written (without sudo: the lab's
    shell is root) in a lab of its own whose unnamed list has three sections, one open; each
    command's standard output is what the README shows."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    section = text[text.index("## Several lists"):]
    block = section[section.index("```console\n") + len("```console\n"):]
    block = block[:block.index("```")]
    steps = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:].replace("sudo ", ""), []))
        elif steps:
            steps[-1][1].append(line)
    with Lab() as lab:
        lab.install(prefix="/usr")
        lab.systemctl("start", "dbus.socket")
        lab.write_file("/etc/sectiond/sections.json", config_json(["one", "two", "three"]))
        lab.systemctl("start", "sectiond.socket", "sectiond-readonly.socket")
        lab.run(["sectionctl", "open", "two"])
        for command, shown in steps:
            got = lab.run(["sh", "-c", command], check=False)
            same = got.returncode == 0 and got.stdout.rstrip("\n").splitlines() == shown
            results.check(same, f"README: {command[:70]}", "" if same else f"expected {shown}, got {output(got)}")
        exported = lab.run(["sectiond", "--list", "media", "--check-config"], check=False)
        results.check(exported.returncode == 0 and "/etc/sectiond/media.json: OK: 4 sections" in exported.stdout,
                      "README: the exported /etc/sectiond/media.json is a config sectiond --list media takes",
                      output(exported))


PARTS = ["paths", "changes", "bus_names", "restart", "crash", "reload", "lists", "activation", "full_disk", "limit", "fallback", "by_hand", "web", "refusals"]


def main():
    require_binary()
    results = Results()
    wanted = sys.argv[1:] or PARTS
    try:
        with Lab() as lab:
            lists = Lists(lab)
            lists.set_up(results)
            for name in PARTS:
                if name in wanted:
                    print(f"-- {name}", flush=True)
                    try:
                        getattr(lists, name)(results)
                    except (OSError, RuntimeError, ValueError, KeyError) as error:
                        results.check(False, f"{name} ran to its end", repr(error))
        if not sys.argv[1:] or "readme" in wanted:
            print("-- readme", flush=True)
            readme_example(results)
    except LabUnavailable as e:
        sys.exit(skip_line(str(e)))
    sys.exit(results.finish())


if __name__ == "__main__":
    main()
