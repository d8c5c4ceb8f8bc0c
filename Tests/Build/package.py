#!/usr/bin/env python3
"""The Debian package, built and then installed for real in the systemd
lab (Tests/System/lib/lab.py), whose overlays keep dpkg, apt, users and units off this machine:

  build     `scripts/deb.sh` (the release build, static Swift runtime) and the same binaries
            again as version +1, for the upgrade; the binaries link only what the package's
            Depends names (ldd), and no Swift runtime library
  lintian   no tag at all, info and pedantic included (the overrides carry their reasons)
  install   `apt-get install ./sectiond_*.deb`: user sectiond, /run/sectiond, both sockets
            enabled and listening with the units' modes; `sectionctl status` starts the
            daemon through the socket; a lab user's own daemon from the packaged user units
  upgrade   `apt-get install` of the +1 package restarts the daemon and keeps its state
            and a subscriber connected through the restart
  remove    `apt-get remove` stops the sockets and the daemon and keeps the state
  purge     `apt-get purge` removes the state and leaves no file that was not there before
            the install (the overlays' upper layers and /run, compared before and after)

Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "System", "lib"))
from lab import Lab, LabUnavailable  # noqa: E402
from sdlib import ROOT, Client, Results  # noqa: E402

APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}
# Bookkeeping that installing and purging any package leaves, and not the package's files:
# dpkg's, apt's and PackageKit's databases, caches and logs; man-db's index (its
# trigger); the journal; the ld.so cache. Everything else new after the purge is a leftover.
BOOKKEEPING = ("/var/lib/dpkg/", "/var/lib/apt/", "/var/cache/apt/", "/var/cache/debconf/",
               "/var/cache/man/", "/var/cache/ldconfig/", "/etc/ld.so.cache", "/var/log/",
               "/var/lib/PackageKit/")  # apt's hook wakes PackageKit over D-Bus
# /run: the lab's own layers, and the run-time records of systemd (units, their credentials,
# the journal), logind, D-Bus and utmp for the units and the user manager the test starts;
# none of them files the package made.
RUN_IGNORED = ("/run/lab/", "/run/systemd/", "/run/credentials/", "/run/log/", "/run/user/",
               "/run/dbus/", "/run/utmp")


def sh(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, **kwargs)


def ensure_tools(results):
    """dpkg-dev and binutils (scripts/deps.sh --deb) and lintian, installed if missing."""
    deps = sh(["scripts/deps.sh", "--deb"])
    if deps.returncode != 0:
        return results.check(False, "scripts/deps.sh --deb", deps.stderr.strip())
    if shutil.which("lintian") is None:
        sh(["apt-get", "update", "-qq"])
        got = sh(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "lintian"],
                 env={**os.environ, **APT_ENV})
        if got.returncode != 0:
            return results.check(False, "apt-get install lintian", got.stderr.strip())
    return True


def build(results, out):
    """The package from a release build, and the same binaries as the next version."""
    # The release build deb.sh runs (and reuses for the second package), never the
    # $BUILD_DIR scripts/test.sh exports for the other suites (the debug build).
    env = {key: value for key, value in os.environ.items() if key != "BUILD_DIR"}
    started = time.monotonic()
    first = sh(["scripts/deb.sh"], timeout=900, env={**env, "DEB_DIR": out})
    seconds = time.monotonic() - started
    if not results.check(first.returncode == 0, "scripts/deb.sh builds the package",
                         f"{seconds:.0f} s" if first.returncode == 0 else first.stderr.strip()):
        return None
    deb = first.stdout.strip().splitlines()[-1]
    version = deb.rsplit("/", 1)[-1].split("_")[1]
    bumped = version + "+1"
    second = sh(["scripts/deb.sh", "--no-build"], env={**env, "DEB_DIR": out, "VERSION": bumped})
    if not results.check(second.returncode == 0, f"VERSION={bumped} scripts/deb.sh --no-build",
                         second.stderr.strip()):
        return None
    return deb, second.stdout.strip().splitlines()[-1], version, bumped


def check_contents(results, deb, scratch):
    fields = sh(["dpkg-deb", "--field", deb, "Depends"]).stdout.strip()
    unpacked = os.path.join(scratch, "unpacked")
    sh(["dpkg-deb", "-x", deb, unpacked])
    libraries = set()
    binaries = ("usr/bin/sectiond", "usr/libexec/sectiond/sectiond-fleet", "usr/bin/sectionctl")
    for binary in binaries:
        ldd = sh(["ldd", os.path.join(unpacked, binary)]).stdout
        libraries |= {line.split()[0] for line in ldd.splitlines() if "=>" in line}
    swift = sorted(lib for lib in libraries if "swift" in lib.lower())
    results.check(libraries and not swift, "the Swift runtime is linked in statically (ldd finds no libswift*)",
                  ", ".join(swift))
    # Every library the binaries name (DT_NEEDED) comes from a package in Depends; the
    # rest of what ldd lists comes in with those (libsystemd0's own libraries).
    needed = set()
    for binary in binaries:
        dynamic = sh(["readelf", "-d", os.path.join(unpacked, binary)]).stdout
        needed |= {line.split("[")[1].split("]")[0] for line in dynamic.splitlines() if "(NEEDED)" in line}
    owners = {lib: owner_of(lib) for lib in needed}
    depends = {alt.strip().split()[0] for alt in fields.replace("|", ",").split(",")}
    missing = {lib: owner for lib, owner in owners.items() if owner not in depends}
    results.check(needed and not missing, "Depends names the package of every library the binaries link",
                  f"Depends: {fields}" + (f"; not covered: {missing}" if missing else ""))
    wanted = ["lib/systemd/system/sectiond.service", "lib/systemd/system/sectiond.socket",
              "lib/systemd/system/sectiond-readonly.socket", "usr/lib/systemd/user/sectiond.service",
              "usr/lib/systemd/user/sectiond.socket", "usr/lib/systemd/user/sectiond-readonly.socket",
              # the templates of named lists, system and user
              "lib/systemd/system/sectiond@.service", "lib/systemd/system/sectiond@.socket",
              "lib/systemd/system/sectiond-readonly@.socket", "usr/lib/systemd/user/sectiond@.service",
              "usr/lib/systemd/user/sectiond@.socket", "usr/lib/systemd/user/sectiond-readonly@.socket",
              "usr/lib/sysusers.d/sectiond.conf", "usr/lib/tmpfiles.d/sectiond.conf",
              "usr/share/man/man8/sectiond.8.gz", "usr/share/man/man1/sectionctl.1.gz",
              "usr/share/bash-completion/completions/sectionctl",
              "usr/share/zsh/vendor-completions/_sectionctl",
              "usr/share/doc/sectiond/examples/sections.json", "usr/share/doc/sectiond/examples/access.conf", "usr/share/doc/sectiond/copyright",
              "usr/share/doc/sectiond/examples/waybar/config.jsonc", "usr/share/doc/sectiond/examples/tmux.conf",
              # the D-Bus face (docs/DBUS.md): policy, activation on both buses, the interface
              "usr/share/dbus-1/system.d/org.sectiond.Sectiond1.conf",
              "usr/share/dbus-1/system-services/org.sectiond.Sectiond1.service",
              "usr/share/dbus-1/services/org.sectiond.Sectiond1.service",
              "usr/share/dbus-1/interfaces/org.sectiond.Sectiond1.xml", "usr/share/doc/sectiond/DBUS.md",
              # polkit's actions for callers without a direct right
              "usr/share/polkit-1/actions/org.sectiond.Sectiond1.policy",
              # sectiond(8) points to PROTOCOL.md (the package once shipped neither).
              "usr/share/doc/sectiond/README.md", "usr/share/doc/sectiond/PROTOCOL.md",
              # a fleet host's drop-ins and environment file (docs/FLEET.md), to copy
              "usr/share/doc/sectiond/examples/fleet/fleet.conf", "usr/share/doc/sectiond/examples/fleet/etcd-local.conf",
              "usr/share/doc/sectiond/examples/fleet/fleet.env", "usr/share/doc/sectiond/FLEET.md",
              "usr/share/doc/sectiond/FLEET-DESIGN.md",
              "usr/share/doc/sectiond/SECURITY.md",
              # what `sectiond --etcd` runs (docs/FLEET.md): the fleet's code is only in it
              "usr/libexec/sectiond/sectiond-fleet"]
    absent = [f for f in wanted if not os.path.isfile(os.path.join(unpacked, f))]
    results.check(not absent, f"the package holds units, snippets, man pages, completions, examples, D-Bus files "
                  f"({len(wanted)} files)", ", ".join(absent) and "missing: " + ", ".join(absent))
    in_etc = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(unpacked, "etc")) for f in files]
    conffiles = sh(["sh", "-c", f"dpkg-deb --ctrl-tarfile {deb} | tar -t"]).stdout
    results.check(not in_etc and "conffiles" not in conffiles,
                  "no file in /etc (the example is under /usr/share/doc), so no conffile", " ".join(in_etc))


def owner_of(library):
    """The Debian package that ships a shared library, by the path the dynamic linker uses."""
    cache = sh(["ldconfig", "-p"]).stdout
    for line in cache.splitlines():
        if line.strip().startswith(library + " "):
            path = line.split("=>")[1].strip()
            for candidate in (path, os.path.realpath(path)):
                found = sh(["dpkg", "-S", candidate])
                if found.returncode == 0:
                    return found.stdout.split(":")[0]
    return "?"


def check_lintian(results, deb):
    out = sh(["lintian", "--info", "--pedantic", "--tag-display-limit", "0", deb], timeout=300)
    tags = [line for line in out.stdout.splitlines() if line[:2] in ("E:", "W:", "I:", "P:", "X:")]
    results.check(out.returncode == 0 and not tags, "lintian --info --pedantic: no tags",
                  "\n".join(tags[:20]) or failure(out))


# ---------------------------------------------------------------- files before and after

def snapshot(lab):
    """What the lab holds beyond the host: every entry in the upper layers of the /etc, /usr,
    /var, /root, /opt and /srv overlays (a character device 0:0 there is a deleted file),
    and all of /run. Not /home: the test user's own files (their enabled units, their
    daemon's state) are theirs, and dpkg never touches them."""
    entries = {}
    for top in ("etc", "usr", "var", "root", "opt", "srv"):
        upper = lab.host_path(f"/run/lab/{top}/upper")
        for directory, dirs, files in os.walk(upper):
            for name in dirs + files:
                full = os.path.join(directory, name)
                info = os.lstat(full)
                whiteout = stat.S_ISCHR(info.st_mode) and info.st_rdev == 0
                path = "/" + top + full[len(upper):]
                entries[path] = "deleted" if whiteout else "dir" if stat.S_ISDIR(info.st_mode) else "file"
    run = lab.host_path("/run")
    for directory, dirs, files in os.walk(run):
        for name in dirs + files:
            path = "/run" + os.path.join(directory, name)[len(run):]
            if not (path + "/").startswith(RUN_IGNORED):
                entries[path] = "dir" if os.path.isdir(os.path.join(directory, name)) else "file"
    return entries


def leftovers(before, after):
    """Entries new since `before`, except directories that were already on the host (an
    overlay copies a directory up when something is created in it) and bookkeeping."""
    found = []
    for path, kind in sorted(after.items()):
        if before.get(path) == kind or path.startswith(BOOKKEEPING):
            continue
        if kind == "dir" and os.path.isdir(path) and not path.startswith("/run"):
            continue
        found.append(f"{kind} {path}")
    return found


# ---------------------------------------------------------------- in the lab

def apt(lab, *args):
    return lab.run(["apt-get", "-y", "-q", *args], check=False, timeout=300, env=APT_ENV)


def failure(result):
    """A failed command's last words, for a FAIL line; nothing when it succeeded."""
    return "" if result.returncode == 0 else (result.stdout + result.stderr).strip()[-800:]


def active(lab, unit):
    return lab.run(["systemctl", "is-active", unit], check=False).stdout.strip()


def status_json(lab):
    out = lab.run(["sectionctl", "--json", "status"], check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def in_lab(results, lab, deb, upgrade, version, bumped):
    # The lab as a booted machine with a user logged in, before the first snapshot: what
    # sysinit.target (tmpfiles for every package) and a login (logind, D-Bus) create is
    # not the package's, though the first socket the package starts would pull it in.
    # A container image's policy-rc.d (exit 101: start nothing) would keep the postinst
    # from starting the sockets; the lab is a machine that runs its services.
    lab.run(["rm", "-f", "/usr/sbin/policy-rc.d"])
    lab.systemctl("start", "sysinit.target")
    lab.add_user("alice")
    uid = lab.user_manager("alice")
    for path in (deb, upgrade):
        shutil.copy(path, lab.host_path("/var/tmp/"))
        os.chmod(lab.host_path("/var/tmp/" + os.path.basename(path)), 0o644)
    before = snapshot(lab)

    # --- install
    got = apt(lab, "install", "/var/tmp/" + os.path.basename(deb))
    if not results.check(got.returncode == 0, "apt-get install ./sectiond_*.deb in the lab",
                         failure(got)):
        return
    results.check("sectiond:" in lab.run(["getent", "passwd", "sectiond"], check=False).stdout,
                  "postinst made the system user sectiond (systemd-sysusers)")
    enabled = [lab.run(["systemctl", "is-enabled", u], check=False).stdout.strip()
               for u in ("sectiond.socket", "sectiond-readonly.socket")]
    states = [active(lab, u) for u in ("sectiond.socket", "sectiond-readonly.socket")]
    results.check(enabled == ["enabled", "enabled"] and states == ["active", "active"],
                  "both sockets enabled and listening after the install", f"{enabled} {states}")
    control = os.stat(lab.socket_path())
    readonly = os.stat(lab.socket_path("readonly.sock"))
    group = lab.run(["getent", "group", "sectiond"]).stdout.split(":")[2]
    results.check(stat.S_IMODE(control.st_mode) == 0o660 and str(control.st_gid) == group
                  and stat.S_IMODE(readonly.st_mode) == 0o666,
                  "control.sock 0660 group sectiond, readonly.sock 0666",
                  f"{oct(control.st_mode)} gid {control.st_gid}, {oct(readonly.st_mode)}")
    # `sectiond --etcd` execs /usr/libexec/sectiond/sectiond-fleet (docs/FLEET-DESIGN.md, "The
    # fleet's binary"): --check-config looks for it as a start would.
    fleet = lab.run(["/usr/bin/sectiond", "--check-config", "--etcd", "http://127.0.0.1:2379"], check=False)
    results.check(fleet.returncode == 0, "the packaged sectiond finds sectiond-fleet (--check-config --etcd)",
                  failure(fleet))
    status = lab.run(["sectionctl", "status"], check=False)
    results.check(status.returncode == 0 and f"sectiond {version}" in status.stdout,
                  "sectionctl status answers (the socket started the daemon)", failure(status))
    results.check(active(lab, "sectiond.service") == "active", "sectiond.service active, Type=notify",
                  lab.show("sectiond.service", "StatusText")["StatusText"])
    lab.run(["sectionctl", "toggle", "1"], check=False)
    lab.run(["sectionctl", "mode", "exclusive"], check=False)
    saved = status_json(lab)

    # --- an instance of the packaged templates beside the plain service
    instance = ("sectiond@pkg.socket", "sectiond-readonly@pkg.socket")
    enabled = lab.systemctl("enable", "--now", *instance, check=False)
    changed = lab.run(["sectionctl", "-l", "pkg", "open", "0"], check=False)
    plain = status_json(lab)
    results.check(enabled.returncode == 0 and changed.returncode == 0
                  and os.path.exists(lab.host_path("/var/lib/sectiond/pkg/state.json"))
                  and plain is not None and plain["revision"] == saved["revision"],
                  "systemctl enable --now sectiond@pkg.socket: the instance serves and saves in "
                  "/var/lib/sectiond/pkg beside the plain service, which it leaves alone",
                  failure(enabled) or failure(changed))
    lab.systemctl("stop", "sectiond@pkg.service", *instance, check=False)
    stopped = [active(lab, u) for u in ("sectiond@pkg.service", *instance)]
    results.check(stopped == ["inactive"] * 3 and active(lab, "sectiond.service") == "active",
                  "systemctl stop sectiond@pkg stops the instance, the plain service still runs", str(stopped))
    lab.systemctl("start", *instance, check=False)
    lab.run(["sectionctl", "-l", "pkg", "ping"], check=False)

    # --- the packaged user units, for a lab user's own daemon
    lab.run(["systemctl", "--user", "enable", "--now", "sectiond.socket"], user="alice", check=False)
    view = lab.run(["sectionctl", "view"], user="alice", check=False)
    where = lab.run(["sectionctl", "status"], user="alice", check=False).stdout
    user_ok = view.returncode == 0 and "First" in view.stdout and f"/run/user/{uid}/sectiond/control.sock" in where
    results.check(user_ok, "packaged user units: systemctl --user enable --now sectiond.socket; sectionctl view",
                  "" if user_ok else (view.stdout + view.stderr + where).strip()[-400:])
    lab.run(["systemctl", "--user", "disable", "--now", "sectiond.socket", "sectiond-readonly.socket",
             "sectiond.service"], user="alice", check=False)

    # --- upgrade, with a subscriber connected (clients stay connected)
    pid = lab.main_pid()
    subscriber = Client(lab.socket_path("readonly.sock"), timeout=30)
    subscribed_with = subscriber.request("SUBSCRIBE")[0]
    got = apt(lab, "install", "/var/tmp/" + os.path.basename(upgrade))
    installed = lab.run(["dpkg-query", "-W", "-f=${Version}", "sectiond"], check=False).stdout
    results.check(got.returncode == 0 and installed == bumped, f"upgrade to {bumped} with apt-get install",
                  failure(got) or f"installed: {installed}")
    new_pid = lab.main_pid()
    results.check(new_pid not in (0, pid), "the upgrade restarted the daemon", f"MainPID {pid} -> {new_pid}")
    try:
        answered = subscriber.request("PING")
    except (OSError, ConnectionError) as error:
        answered = [f"{type(error).__name__}: {error}"]
    subscriber.close()
    results.check(answered == ["OK"] and not subscriber.events,
                  "a subscriber stays connected across the upgrade, with no gap and no resync",
                  f"subscribed with '{subscribed_with}', then {subscriber.events} and {answered}")
    kept = status_json(lab)
    fields = ("revision", "mode", "open_ids")
    results.check(kept is not None and saved is not None
                  and all(kept[f] == saved[f] for f in fields),
                  "the state survives the upgrade (revision, mode, open sections)",
                  f"before {saved and {f: saved[f] for f in fields}}, after {kept and {f: kept[f] for f in fields}}")

    # --- remove, then purge: the access rules an admin wrote from the example go with the purge
    lab.write_file("/etc/sectiond/access.conf", "others operate\n")
    got = apt(lab, "remove", "sectiond")
    units = [active(lab, u) for u in ("sectiond.service", "sectiond.socket", "sectiond-readonly.socket")]
    results.check(got.returncode == 0 and all(u != "active" for u in units)
                  and not os.path.exists(lab.socket_path()),
                  "apt-get remove stops the daemon and both sockets", f"{units}")
    units = [active(lab, u) for u in ("sectiond@pkg.service", *instance)]
    results.check(all(u != "active" for u in units) and not os.path.exists(lab.socket_path("pkg/control.sock")),
                  "apt-get remove stops the instance sectiond@pkg too", f"{units}")
    results.check(os.path.exists(lab.host_path("/var/lib/sectiond/state.json")),
                  "apt-get remove keeps the state (/var/lib/sectiond/state.json)")
    got = apt(lab, "purge", "sectiond")
    results.check(got.returncode == 0 and not os.path.exists(lab.host_path("/var/lib/sectiond")),
                  "apt-get purge removes /var/lib/sectiond, every instance's state with it", failure(got))
    results.check(not os.path.exists(lab.host_path("/etc/sectiond/access.conf")),
                  "apt-get purge removes the access rules (/etc/sectiond/access.conf)")
    left = leftovers(before, snapshot(lab))
    results.check(not left, "after the purge no file is left that was not there before the install",
                  "\n".join(left[:30]))


def main():
    results = Results()
    if not ensure_tools(results):
        sys.exit(results.finish())
    scratch = tempfile.mkdtemp(prefix="sectiond-package.")
    try:
        built = build(results, scratch)
        if built is None:
            sys.exit(results.finish())
        deb, upgrade, version, bumped = built
        check_contents(results, deb, scratch)
        check_lintian(results, deb)
        try:
            with Lab() as lab:
                in_lab(results, lab, deb, upgrade, version, bumped)
        except LabUnavailable as e:
            print(f"SKIP the install, upgrade and purge in the systemd lab: {e}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(results.finish())


if __name__ == "__main__":
    main()
