#!/usr/bin/env python3
"""sectiond on the system bus under a real systemd 252, in the systemd lab
(Tests/System/lib/lab.py): dbus-daemon as the system bus (dbus.socket), the project installed
as the Debian package installs it (scripts/install.sh with PREFIX=/usr: the units, the
policy in /usr/share/dbus-1/system.d, the activation file in system-services), and then:

- bus activation: nothing runs until the first method call, which starts sectiond.service
  through systemd and is answered;
- access: a user outside the sectiond group reads the properties and List, and gets
  AccessDenied for Toggle and for setting Mode; a member of the group may change;
- one sequence of revisions across the control socket (sectionctl) and the bus;
- the name after `systemctl restart` and after a crash (SIGKILL, Restart=on-failure):
  the new process owns it and Revision continues;
- the hardened unit keeps its `systemd-analyze security` rating (at most 1.0);
- the user unit on a user's session bus (dbus-user-session): activated by the first call;
- polkit (Debian's polkitd, activated by the bus as on a desktop): the package's actions are
  known to it; a rule in /etc/polkit-1/rules.d grants operate to one user, who opens and
  closes but may not edit, while another user, not granted, may do neither; a caller that
  does not allow interactive authorization is told so when polkit would ask for a password.

Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from lab import Lab, LabError, LabUnavailable, skip_line  # noqa: E402
from sdlib import Results, config_json, require_binary  # noqa: E402

NAME = "org.sectiond.Sectiond1"
PATH = "/org/sectiond/Sectiond1"
OUTSIDER = "bob"
MEMBER = "carol"
OPERATOR = "erin"
# The rule an administrator writes (docs/DBUS.md, "Access"): operate for one user.
RULE = """polkit.addRule(function(action, subject) {
    if (action.id == "org.sectiond.Sectiond1.operate" && subject.user == "%s") {
        return polkit.Result.YES;
    }
});
""" % OPERATOR
SESSION_USER = "dave"


def busctl(lab, *args, user=None):
    result = lab.run(["busctl", "--system", *args], user=user, check=False, timeout=60)
    return result.returncode, (result.stdout + result.stderr).strip()


def gdbus_call(lab, method, *args, user=None):
    result = lab.run(["gdbus", "call", "--system", "--dest", NAME, "--object-path", PATH,
                      "--method", method, *args], user=user, check=False, timeout=60)
    return result.returncode, (result.stdout + result.stderr).strip()


def revision(lab, user=None):
    status, out = busctl(lab, "get-property", NAME, PATH, NAME, "Revision", user=user)
    return int(out.split()[1]) if status == 0 else out


def wait_for(condition, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def owner(lab):
    status, out = busctl(lab, "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                         "GetNameOwner", "s", NAME)
    return out.split()[1].strip('"') if status == 0 else None


def set_up(lab):
    lab.install(prefix="/usr")
    lab.write_file("/etc/sectiond/sections.json", config_json(["alpha", "beta", "gamma"]))
    lab.add_user(OUTSIDER)
    lab.add_user(MEMBER, groups=["sectiond"])
    lab.systemctl("start", "dbus.socket")


def installed(lab, r):
    for path in ("/usr/share/dbus-1/system.d/org.sectiond.Sectiond1.conf",
                 "/usr/share/dbus-1/system-services/org.sectiond.Sectiond1.service",
                 "/usr/share/dbus-1/services/org.sectiond.Sectiond1.service",
                 "/usr/share/dbus-1/interfaces/org.sectiond.Sectiond1.xml"):
        r.check(os.path.exists(lab.host_path(path)), f"installed {path}")
    unit = lab.show("sectiond.service", "BusName", "ExecStart")
    r.check(unit.get("BusName") == NAME and "--bus system" in unit.get("ExecStart", ""),
            "the unit has BusName= and runs with --bus system", str(unit))


def activation(lab, r):
    state = lab.show("sectiond.service", "ActiveState")["ActiveState"]
    r.check(state == "inactive", "before the first call sectiond.service is not running", state)
    status, out = busctl(lab, "call", NAME, PATH, NAME, "Toggle", "s", "alpha")
    r.check(status == 0 and out == "bt true 1", "the first call activates the service and is answered", out)
    state = lab.show("sectiond.service", "ActiveState")["ActiveState"]
    r.check(state == "active", "sectiond.service was started by bus activation", state)
    journal = lab.journal()
    r.check("D-Bus: on the system bus as org.sectiond.Sectiond1" in journal and "cannot own" not in journal,
            "the daemon owns the name as user sectiond (the policy lets it)", journal[-2000:])


def access(lab, r):
    status, out = busctl(lab, "get-property", NAME, PATH, NAME, "Revision", "OpenSections", user=OUTSIDER)
    r.check(status == 0 and out.splitlines() == ["t 1", 'as 1 "alpha"'],
            "a user outside the group reads the properties", out)
    status, out = busctl(lab, "call", NAME, PATH, NAME, "List", user=OUTSIDER)
    r.check(status == 0 and out.startswith("ta(ssbu) 1 3"), "... and List", out)
    # polkit runs in the lab: bob has no direct right, is not at a seat, and no rule grants
    # him anything, so polkit would ask for an administrator's password; gdbus call does not
    # allow that, and is told so.
    status, out = gdbus_call(lab, f"{NAME}.Toggle", "beta", user=OUTSIDER)
    r.check(status != 0 and "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired" in out,
            "... and is refused Toggle, polkit wanting a password it may not ask for", out)
    status, out = gdbus_call(lab, "org.freedesktop.DBus.Properties.Set", NAME, "Mode", "<'exclusive'>",
                             user=OUTSIDER)
    r.check(status != 0 and "InteractiveAuthorizationRequired" in out, "... and setting Mode", out)
    r.check(revision(lab) == 1, "nothing changed")
    status, out = busctl(lab, "call", NAME, PATH, NAME, "Toggle", "s", "beta", user=MEMBER)
    r.check(status == 0 and out == "bt true 2", "a member of the sectiond group may change", out)


def one_sequence(lab, r):
    socket = {"SECTIOND_SOCKET": "/run/sectiond/control.sock"}
    out = lab.run(["sectionctl", "toggle", "gamma"], user=MEMBER, check=False, env=socket)
    r.check(out.returncode == 0, "sectionctl toggle on the control socket", out.stderr)
    r.check(revision(lab, user=OUTSIDER) == 3, "the bus shows the socket's change with its revision")
    status, out = busctl(lab, "call", NAME, PATH, NAME, "Close", "s", "gamma", user=MEMBER)
    listed = lab.run(["sectionctl", "--json", "list"], user=MEMBER, check=False, env=socket).stdout
    r.check(out == "t 4" and '"revision":4' in listed.replace(" ", ""), "and the socket the bus's",
            f"{out}\n{listed}")


def restarts(lab, r):
    before = owner(lab)
    lab.systemctl("restart", "sectiond.service")
    r.check(wait_for(lambda: owner(lab) not in (None, before), 20),
            "after systemctl restart the new process owns the name", f"{before} -> {owner(lab)}")
    r.check(revision(lab) == 4, "Revision continues across the restart", revision(lab))
    before = owner(lab)
    lab.systemctl("kill", "--signal=KILL", "--kill-who=main", "sectiond.service")
    r.check(wait_for(lambda: owner(lab) not in (None, before), 30),
            "after a crash (SIGKILL) the restarted process owns the name", f"{before} -> {owner(lab)}")
    status, out = busctl(lab, "call", NAME, PATH, NAME, "Toggle", "s", "alpha", user=MEMBER)
    r.check(out == "bt false 5", "and changes go on from the saved revision", out)


def security(lab, r):
    out = lab.run(["systemd-analyze", "security", "--no-pager", "sectiond.service"], check=False).stdout
    found = re.search(r"Overall exposure level for sectiond.service: ([0-9.]+)", out)
    level = float(found.group(1)) if found else None
    r.check(level is not None and level <= 1.0, "systemd-analyze security rates the unit at most 1.0",
            out.splitlines()[-1] if out else "no output")


def session_activation(lab, r):
    """The user unit: the first call on a user's session bus starts the user's sectiond.service
    (the session activation file, SystemdService=), which serves with --bus session."""
    if not os.path.exists(lab.host_path("/usr/lib/systemd/user/dbus.socket")):
        print("SKIP session bus activation: no user dbus.socket (dbus-user-session is not installed)")
        return
    lab.add_user(SESSION_USER)
    lab.user_manager(SESSION_USER)
    run = lambda argv: lab.run(argv, user=SESSION_USER, check=False)  # noqa: E731
    run(["systemctl", "--user", "start", "dbus.socket"])
    state = run(["systemctl", "--user", "is-active", "sectiond.service"]).stdout.strip()
    r.check(state == "inactive", "session: before the first call the user's sectiond.service is not running", state)
    call = run(["busctl", "--user", "call", NAME, PATH, NAME, "Toggle", "s", "first"])
    r.check(call.returncode == 0 and call.stdout.strip() == "bt true 1",
            "session: the first call on the user's bus activates the user's service and is answered",
            (call.stdout + call.stderr).strip())
    state = run(["systemctl", "--user", "is-active", "sectiond.service"]).stdout.strip()
    r.check(state == "active", "session: the user's sectiond.service was started by bus activation", state)


def polkit_rule(lab, r):
    """A user granted operate by a polkit rule, and one not granted, each through busctl."""
    if not os.path.exists(lab.host_path("/usr/share/dbus-1/system-services/org.freedesktop.PolicyKit1.service")):
        r.check(False, "polkit: polkitd is installed (scripts/deps.sh --test installs it)")
        return
    lab.add_user(OPERATOR)
    lab.write_file("/etc/polkit-1/rules.d/50-sectiond-test.rules", RULE)
    out = lab.run(["pkaction", "--action-id", "org.sectiond.Sectiond1.operate", "--verbose"], check=False)
    r.check(out.returncode == 0 and "implicit active:   yes" in out.stdout,
            "polkit knows the installed action org.sectiond.Sectiond1.operate (allow_active=yes)",
            out.stdout + out.stderr)
    start = revision(lab)
    status, out = busctl(lab, "call", NAME, PATH, NAME, "Open", "s", "gamma", user=OPERATOR)
    r.check(status == 0 and out == f"t {start + 1}", "the user the rule grants operate opens a section", out)
    status, out = busctl(lab, "call", NAME, PATH, NAME, "Toggle", "s", "gamma", user=OPERATOR)
    r.check(status == 0 and out == f"bt false {start + 2}", "... and toggles it", out)
    status, out = busctl(lab, "call", NAME, PATH, NAME, "InsertSection", "sss", "end", "extra", "Extra",
                         user=OPERATOR)
    r.check(status != 0 and "edit read InsertSection needs the edit level" in out and revision(lab) == start + 2,
            "... but may not insert a section (edit is not granted): Denied, nothing changed", out)
    status, out = busctl(lab, "--allow-interactive-authorization=no", "call", NAME, PATH, NAME, "Toggle", "s",
                         "gamma", user=OUTSIDER)
    r.check(status != 0 and "polkit asks you to authenticate" in out and revision(lab) == start + 2,
            "a user the rule does not grant is asked to authenticate when polkit would want a password",
            out)
    status, out = busctl(lab, "--allow-interactive-authorization=yes", "call", NAME, PATH, NAME, "Toggle", "s",
                         "gamma", user=OUTSIDER)
    r.check(status != 0 and "polkit does not grant org.sectiond.Sectiond1.operate" in out
            and revision(lab) == start + 2,
            "... and refused when it allows authentication but no agent can ask for the password", out)


PARTS = [installed, activation, access, one_sequence, restarts, security, session_activation, polkit_rule]


def main():
    require_binary()
    r = Results()
    try:
        with Lab() as lab:
            set_up(lab)
            for part in PARTS:
                try:
                    part(lab, r)
                except Exception as e:  # one broken part must not hide the others
                    r.check(False, f"{part.__name__}: ran to the end", f"{type(e).__name__}: {e}")
            if r.failed:
                print("journal of sectiond.service:\n" + lab.journal(), flush=True)
    except LabError as e:
        r.check(False, "set-up: install with PREFIX=/usr, users, dbus.socket", str(e))
    except LabUnavailable as e:
        if os.environ.get("SYSTEMD_LAB_REQUIRED") != "1":
            return skip_line(str(e))
        r.check(False, "systemd lab starts", str(e))
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
