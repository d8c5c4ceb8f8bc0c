#!/usr/bin/env python3
"""A user's own sectiond under a real user manager, in the systemd lab
(Tests/System/lib/lab.py): a lab user, the real user@UID.service, and then what the README shows,
as that user (no root, and both sockets listening at once):

    scripts/install.sh --prefix ~/.local        (here with --no-build and the built binaries)
    systemctl --user enable --now sectiond.socket sectiond-readonly.socket
    sectionctl --readonly status                (before anything else has used the daemon)
    sectionctl view

The system daemon (`make install`'s layout, PREFIX=/usr/local) runs beside it, as on a
machine with both: sectionctl talks to the user's own daemon, and to the system's (saying
so) once the user's is stopped, with the hint that fits when neither runs.

Checks: the sockets are %t/sectiond/*.sock, 0600 in a 0700 directory, and sectionctl finds
them through $XDG_RUNTIME_DIR; the daemon serves ~/.config/sectiond/sections.json and keeps
its state in ~/.local/state/sectiond across a restart; Type=notify status, a synchronous
reload (a bad config fails it and the old one stays); the read-only socket refuses changes;
the sandbox is in force (no capabilities, no_new_privs, seccomp, its own user and mount
namespaces, read-only system and home except the state directory) and the journal has no set-up failure; the
watchdog (shortened to 2 s in a drop-in) restarts a stopped daemon. Also the system unit's
ConfigurationDirectory=: the system daemon (user sectiond) serves /etc/sectiond/sections.json.

Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import json
import os
import stat
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from lab import Lab, LabUnavailable, skip_line  # noqa: E402
from sdlib import Results, config_json, require_binary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

USER = "alice"


def output(result):
    return (result.stdout + result.stderr).strip()


def system_config(results, lab):
    """The system unit finds /etc/sectiond/sections.json through ConfigurationDirectory=,
    though the daemon runs as user sectiond (whose own default is ~/.config)."""
    lab.write_file("/etc/sectiond/sections.json", config_json(["etc-one", "etc-two"]))
    lab.systemctl("start", "sectiond.socket", "sectiond-readonly.socket")
    listed = lab.run(["sectionctl", "--json", "list"], check=False)
    ids = [s["id"] for s in json.loads(listed.stdout)["sections"]] if listed.returncode == 0 else []
    results.check(ids == ["etc-one", "etc-two"],
                  "system service serves /etc/sectiond/sections.json (ConfigurationDirectory=)",
                  "" if ids == ["etc-one", "etc-two"] else output(listed))


def user_service(results, lab):
    lab.add_user(USER)
    home = f"/home/{USER}"
    uid = lab.uid(USER)
    user_path = f"{home}/.local/bin:/usr/local/bin:/usr/bin:/bin"
    run = lambda argv, **kw: lab.run(argv, user=USER, check=False, env={"PATH": user_path, **kw.pop("env", {})}, **kw)  # noqa: E731
    run(["mkdir", "-p", f"{home}/.config/sectiond"])
    config = f"{home}/.config/sectiond/sections.json"
    run(["sh", "-c", f"cat > {config}"], input=config_json(["mail", "news", "todo"]))
    lab.user_manager(USER)

    build_dir = os.environ.get("BUILD_DIR", ".build/debug")
    build_dir = build_dir if os.path.isabs(build_dir) else os.path.join(ROOT, build_dir)
    install = run([os.path.join(ROOT, "scripts", "install.sh"), "--no-build", "--prefix", f"{home}/.local"],
                  env={"BUILD_DIR": build_dir}, cwd=ROOT, timeout=120)
    results.check(install.returncode == 0, "scripts/install.sh --prefix ~/.local as the user, without root",
                  output(install).splitlines()[-1] if install.returncode == 0 else output(install))
    fragment = run(["systemctl", "--user", "show", "-P", "FragmentPath", "sectiond.socket"]).stdout.strip()
    exec_start = run(["systemctl", "--user", "show", "-P", "ExecStart", "sectiond.service"]).stdout
    results.check(fragment == f"{home}/.local/share/systemd/user/sectiond.socket"
                  and f"{home}/.local/bin/sectiond" in exec_start,
                  "the user manager loads the units from ~/.local/share/systemd/user, running ~/.local/bin/sectiond",
                  f"{fragment}; {exec_start.strip()[:120]}")

    enable = run(["systemctl", "--user", "enable", "--now", "sectiond.socket", "sectiond-readonly.socket"])
    results.check(enable.returncode == 0, "systemctl --user enable --now sectiond.socket sectiond-readonly.socket",
                  "" if enable.returncode == 0 else output(enable))
    viewer = run(["sectionctl", "--readonly", "--json", "status"])
    daemon = json.loads(viewer.stdout) if viewer.returncode == 0 else {}
    results.check(daemon.get("socket") == f"/run/user/{uid}/sectiond/readonly.sock" and daemon.get("daemon") == "user",
                  "sectionctl --readonly status works at once, on the user's own read-only socket",
                  str(daemon.get("socket")) if viewer.returncode == 0 else output(viewer))
    view = run(["sectionctl", "view"])
    results.check(view.returncode == 0 and "Mail" in view.stdout and "Todo" in view.stdout,
                  "sectionctl view shows the sections of ~/.config/sectiond/sections.json",
                  "" if view.returncode == 0 else output(view))
    status = run(["sectionctl", "--json", "status"])
    socket = json.loads(status.stdout)["socket"] if status.returncode == 0 else output(status)
    results.check(socket == f"/run/user/{uid}/sectiond/control.sock",
                  "sectionctl finds %t/sectiond/control.sock through $XDG_RUNTIME_DIR", socket)
    modes = {}
    for path in (f"/run/user/{uid}/sectiond", f"/run/user/{uid}/sectiond/control.sock",
                 f"/run/user/{uid}/sectiond/readonly.sock"):
        info = os.stat(lab.host_path(path))
        modes[path.rsplit("/", 1)[1]] = (oct(stat.S_IMODE(info.st_mode)), info.st_uid)
    results.check(modes == {"sectiond": ("0o700", uid), "control.sock": ("0o600", uid),
                            "readonly.sock": ("0o600", uid)},
                  "sockets 0600 in a 0700 directory, owned by the user", str(modes))

    show = lambda *p: dict(  # noqa: E731
        line.split("=", 1) for line in run(["systemctl", "--user", "show", "sectiond.service",
                                             *[f"--property={x}" for x in p]]).stdout.splitlines())
    props = show("ActiveState", "Type", "StatusText", "WatchdogUSec", "MainPID")
    results.check(props["ActiveState"] == "active" and props["Type"] == "notify"
                  and props["StatusText"].startswith("3 sections") and props["WatchdogUSec"] == "20s",
                  "Type=notify, STATUS= and a 20 s watchdog under the user manager",
                  f"{props['StatusText']}; watchdog {props['WatchdogUSec']}")

    # State: a change lands in ~/.local/state/sectiond and survives a restart.
    run(["sectionctl", "open", "news"])
    state_file = lab.host_path(f"{home}/.local/state/sectiond/state.json")
    saved = open(state_file).read() if os.path.exists(state_file) else ""
    results.check('"news"' in saved, "state saved in ~/.local/state/sectiond/state.json", saved.strip())
    run(["systemctl", "--user", "restart", "sectiond.service"])
    after = run(["sectionctl", "--json", "status"])
    open_ids = json.loads(after.stdout)["open_ids"] if after.returncode == 0 else output(after)
    results.check(open_ids == ["news"], "the state survives systemctl --user restart", str(open_ids))

    # Reload: a good config is taken, a bad one fails the reload and the old one stays.
    run(["sh", "-c", f"cat > {config}"], input=config_json(["mail", "news", "todo", "later"]))
    good = run(["systemctl", "--user", "reload", "sectiond.service"])
    count = run(["sectionctl", "--json", "list"])
    sections = len(json.loads(count.stdout)["sections"]) if count.returncode == 0 else -1
    results.check(good.returncode == 0 and sections == 4, "systemctl --user reload takes the new config",
                  output(good) or f"{sections} sections")
    run(["sh", "-c", f"cat > {config}"], input='{"sections": [{"title": "all"}]}')
    bad = run(["systemctl", "--user", "reload", "sectiond.service"])
    count = run(["sectionctl", "--json", "list"])
    sections = len(json.loads(count.stdout)["sections"]) if count.returncode == 0 else -1
    results.check(bad.returncode != 0 and sections == 4,
                  "a bad config fails systemctl --user reload and the daemon keeps the old one",
                  f"reload exit {bad.returncode}, {sections} sections")

    refused = run(["sectionctl", "--readonly", "send", "TOGGLE 0"])
    results.check(refused.returncode == 1 and "ERR READONLY" in refused.stdout,
                  "the read-only socket refuses a change (ERR READONLY)", output(refused))

    # The sandbox, as the running daemon sees it.
    pid = int(show("MainPID")["MainPID"])
    fields = dict(line.split(":\t", 1) for line in open(f"/proc/{lab.pid}/root/proc/{pid}/status")
                  .read().splitlines() if ":\t" in line)
    results.check(fields.get("CapBnd") == "0000000000000000" and fields.get("NoNewPrivs") == "1"
                  and fields.get("Seccomp") == "2",
                  "no capabilities, no_new_privs, a seccomp filter",
                  f"CapBnd {fields.get('CapBnd')} NoNewPrivs {fields.get('NoNewPrivs')} Seccomp {fields.get('Seccomp')}")
    shell = run(["readlink", "/proc/self/ns/user", "/proc/self/ns/mnt"]).stdout.split()
    daemon = [os.readlink(f"/proc/{lab.pid}/root/proc/{pid}/ns/{ns}") for ns in ("user", "mnt")]
    results.check(all(a != b for a, b in zip(shell, daemon)),
                  "the daemon has a user and a mount namespace of its own (PrivateUsers=yes)",
                  f"{daemon} vs {shell}")
    mounts = {}
    for line in open(f"/proc/{lab.pid}/root/proc/{pid}/mountinfo"):
        parts = line.split()
        mounts[parts[4]] = parts[5].split(",")[0]
    state_dir = f"{home}/.local/state/sectiond"
    home_mount = max((m for m in mounts if (home + "/").startswith(m.rstrip("/") + "/")), key=len)
    results.check(mounts.get(state_dir) == "rw" and mounts.get(home_mount) == "ro"
                  and mounts.get("/") == "ro",
                  "read-only file system and home, the state directory alone writable",
                  f"/ {mounts.get('/')}, {home_mount} {mounts.get(home_mount)}, state {mounts.get(state_dir)}")
    journal = run(["journalctl", "--user", "-u", "sectiond", "--no-pager", "-o", "cat"]).stdout
    trouble = [line for line in journal.splitlines()
               if "ignoring" in line or "Failed to" in line or "failed at step" in line.lower()]
    results.check("serving" in journal and not trouble,
                  "the journal shows the daemon serving and no sandbox set-up failure",
                  "\n".join(trouble[:5]))

    # The watchdog: with WatchdogSec=2s, a stopped daemon is restarted.
    run(["mkdir", "-p", f"{home}/.config/systemd/user/sectiond.service.d"])
    run(["sh", "-c", f"cat > {home}/.config/systemd/user/sectiond.service.d/watchdog.conf"],
        input="[Service]\nWatchdogSec=2s\nTimeoutAbortSec=1s\n")
    run(["sh", "-c", f"cat > {config}"], input=config_json(["mail", "news", "todo"]))
    run(["systemctl", "--user", "daemon-reload"])
    run(["systemctl", "--user", "restart", "sectiond.service"])
    stopped = int(show("MainPID")["MainPID"])
    run(["kill", "-STOP", str(stopped)])
    deadline = time.monotonic() + 15
    restarted = stopped
    while time.monotonic() < deadline and restarted in (stopped, 0):
        time.sleep(0.25)
        restarted = int(show("MainPID")["MainPID"])
    took = 15 - (deadline - time.monotonic())
    alive = run(["sectionctl", "ping"])
    results.check(restarted not in (stopped, 0) and alive.returncode == 0,
                  "the watchdog (2 s) restarts a stopped daemon", f"new MainPID after {took:.1f} s")


def fallback(results, lab):
    """With the user's own daemon stopped, sectionctl reaches the system's and says so; with
    neither running, the error names both and how to start each."""
    path = f"/home/{USER}/.local/bin:/usr/local/bin:/usr/bin:/bin"
    run = lambda argv: lab.run(argv, user=USER, check=False, env={"PATH": path})  # noqa: E731
    run(["systemctl", "--user", "stop", "sectiond.socket", "sectiond-readonly.socket", "sectiond.service"])
    viewer = run(["sectionctl", "-r", "status"])
    results.check(viewer.returncode == 0 and "/run/sectiond/readonly.sock (the system daemon)" in viewer.stdout,
                  "without the user's own daemon, sectionctl -r status reads the system daemon and says so",
                  output(viewer).splitlines()[1] if viewer.returncode == 0 else output(viewer))
    plain = run(["sectionctl", "status"])
    results.check(plain.returncode == 0 and "/run/sectiond/readonly.sock (the system daemon)" in plain.stdout,
                  "sectionctl status (no -r) by a user outside group sectiond reads the system daemon",
                  "" if plain.returncode == 0 else output(plain))
    control = run(["sectionctl", "open", "etc-one"])
    results.check(control.returncode == 3 and "usermod -aG sectiond" in control.stderr,
                  "a user outside group sectiond is told how to join it, or to use --readonly",
                  output(control))
    lab.systemctl("stop", "sectiond.socket", "sectiond-readonly.socket", "sectiond.service")
    neither = run(["sectionctl", "status"])
    results.check(neither.returncode == 3 and "systemctl --user start sectiond.socket" in neither.stderr
                  and "sudo systemctl start sectiond.socket" in neither.stderr,
                  "with neither daemon running, the error names both sockets and the systemctl for each",
                  output(neither))


def main():
    require_binary()
    results = Results()
    try:
        with Lab() as lab:
            lab.install()
            system_config(results, lab)
            user_service(results, lab)
            fallback(results, lab)
    except LabUnavailable as e:
        sys.exit(skip_line(str(e)))
    sys.exit(results.finish())


if __name__ == "__main__":
    main()
