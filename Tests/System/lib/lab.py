"""The systemd test lab: a real systemd 252 as PID 1 of a private PID, mount, cgroup, UTS
and IPC namespace, for testing sectiond as installed (units, sockets, users, journal).

    with Lab() as lab:                       # starts the lab; always torn down on leaving
        lab.install()                        # scripts/install.sh --no-build, run inside
        lab.systemctl("start", "sectiond.socket", "sectiond-readonly.socket")
        sock = lab.socket_path()             # host-visible /proc/PID/root/run/sectiond/control.sock
        lab.run(["sectionctl", "list"], user="alice")
        lab.journal("sectiond")              # journalctl -u sectiond inside
        lab.main_pid("sectiond.service")     # the service's MainPID (lab PID namespace)

How it is built (Tests/System/lib/lab-init.sh runs as the namespace's PID 1, then execs systemd):
- /run, /tmp and /var/tmp are fresh tmpfs mounts, and /etc, /usr, /var, /home, /root,
  /opt and /srv are overlays whose upper layers live in that /run, all before systemd
  starts: installs, useradd, systemd-sysusers, dpkg and the journal write only into the
  lab, which vanishes with it. The project tree (/work/...) stays visible, so built
  binaries install from inside, and files written through host_path() land in the lab.
- /dev is the lab's own (a tmpfs with the harmless nodes bound in, a private devpts, and
  /dev/console and /dev/kmsg as plain files): the host's devtmpfs is shared across mount
  namespaces, and systemd's status lines and journald's messages stay out of the host's
  console and kernel log. /sys and /proc/sys are read-only.
- The lab's systemd gets its own cgroup2 subtree (sectiond-lab.PID.N under the host's
  cgroup2 hierarchy) seen as / through a cgroup namespace, so it never touches the host's
  cgroups; the subtree is removed on teardown (and stale ones of dead runs at start).
- systemd starts only lab.target (no dependencies). The installed socket units pull in
  sysinit.target; every unit the early targets want is masked except the journal,
  sysusers and tmpfiles (which act on the lab's private layers), as are units that load
  kernel modules, set the clock or mount kernel file systems; container= tells systemd
  it is not a machine to set up. /tmp is private anyway, for systemd-tmpfiles --remove.
- Teardown is SIGKILL to the lab's PID 1 (SIGTERM would make systemd re-execute), which
  ends every process in the namespace. It happens on every path: stop() from __exit__,
  atexit, SIGTERM turned into SystemExit, and if this Python process dies outright the
  kernel does it (PR_SET_PDEATHSIG on unshare, and unshare --kill-child on PID 1).
  Start the Lab from the main thread: the death signal follows the thread that forked.
- Commands run inside through `nsenter -t PID -m -p`; as another user through setpriv.
  A lab process is visible from the host too: host_path(f"/proc/{lab.main_pid()}/fd").
- A user manager (`systemd --user`, for per-user units) comes from user_manager(name): the
  real user@UID.service, after dbus.socket (user-runtime-dir@ needs logind over D-Bus).

Needs root, util-linux unshare/nsenter, systemd (/lib/systemd/systemd) and a cgroup2
hierarchy; otherwise start() raises LabUnavailable with one line saying what is missing.
Standard library only.
"""

import atexit
import ctypes
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
INIT_SCRIPT = os.path.join(ROOT, "Tests", "System", "lib", "lab-init.sh")
SYSTEMD = "/lib/systemd/systemd"
CGROUP_PREFIX = "sectiond-lab."
PR_SET_PDEATHSIG = 1
_counter = itertools.count()


class LabUnavailable(Exception):
    """The lab cannot start on this machine; str() is one line saying why."""


class LabError(Exception):
    """A command inside the lab failed; carries its output."""


def cgroup2_mount():
    """The host's cgroup2 mount point, or None (pure v2 at /sys/fs/cgroup, hybrid at .../unified)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            fstype = fields[fields.index("-") + 1]
            if fstype == "cgroup2":
                return fields[4]
    return None


def own_cgroup2_path():
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    return "/"


def _remove_cgroup_tree(path, timeout=5.0):
    """rmdir a cgroup and its children, deepest first, once no process is left in it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(os.path.join(path, "cgroup.events")) as f:
                if "populated 0" in f.read():
                    break
        except FileNotFoundError:
            return
        time.sleep(0.05)
    for dirpath, _, _ in sorted(os.walk(path), key=lambda entry: -entry[0].count("/")):
        try:
            os.rmdir(dirpath)
        except OSError:
            pass


def _sweep_stale_cgroups(parent):
    """Removes lab cgroups left by a run whose Python process died without tearing down."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not name.startswith(CGROUP_PREFIX):
            continue
        owner = name[len(CGROUP_PREFIX):].split(".")[0]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            _remove_cgroup_tree(os.path.join(parent, name), timeout=0.5)


def _die_with_parent():
    """In the forked child before exec: SIGKILL when the Python process dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _sigterm_exits(signum, frame):
    raise SystemExit(128 + signum)


class Lab:
    """One systemd lab. Small API: start/stop (or `with`), run, systemctl, show, install,
    host_path/socket_path, write_file/copy_in, journal, main_pid, add_user, user_manager."""

    def __init__(self, start_timeout=30.0):
        self.start_timeout = start_timeout
        self.pid = None  # the lab's systemd (its PID 1) as seen from the host
        self.proc = None  # the unshare process
        self.cgroup = None
        self.log = None

    # ------------------------------------------------------------------ life cycle

    def start(self):
        self._check_prerequisites()
        mount = cgroup2_mount()
        parent = os.path.normpath(mount + own_cgroup2_path())
        _sweep_stale_cgroups(parent)
        self.cgroup = os.path.join(parent, f"{CGROUP_PREFIX}{os.getpid()}.{next(_counter)}")
        try:
            os.mkdir(self.cgroup)
        except OSError as e:
            raise LabUnavailable(f"cannot create a cgroup for the lab at {self.cgroup}: {e.strerror}")
        atexit.register(self.stop)
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
            signal.signal(signal.SIGTERM, _sigterm_exits)
        procs = os.path.join(self.cgroup, "cgroup.procs")

        def in_child():
            _die_with_parent()
            with open(procs, "w") as f:
                f.write("0")

        self.log = tempfile.TemporaryFile(prefix="sectiond-lab.")
        try:
            self.proc = subprocess.Popen(
                ["unshare", "--pid", "--mount", "--mount-proc", "--cgroup", "--uts", "--ipc",
                 "--fork", "--kill-child", "sh", INIT_SCRIPT],
                env={**os.environ, "LAB_PROJECT": ROOT},
                stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                preexec_fn=in_child, start_new_session=True)
            self.pid = self._wait_for_pid1()
            self._wait_for_manager()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """SIGKILL to the lab's PID 1 ends every process in it; idempotent."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.pid = None
        if self.proc is not None:
            # unshare reaps its child, PID 1, and then exits; killing it first would leave
            # PID 1 a zombie for the host's init to reap.
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self.cgroup is not None:
            _remove_cgroup_tree(self.cgroup)
            self.cgroup = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _check_prerequisites(self):
        if os.geteuid() != 0:
            raise LabUnavailable("the systemd lab needs root (namespaces, mounts, cgroups)")
        for tool in ("unshare", "nsenter", "setpriv"):
            if shutil.which(tool) is None:
                raise LabUnavailable(f"no {tool} on PATH (Debian package util-linux)")
        if not os.access(SYSTEMD, os.X_OK):
            raise LabUnavailable(f"no {SYSTEMD} (Debian package systemd)")
        if cgroup2_mount() is None:
            raise LabUnavailable("no cgroup2 hierarchy is mounted; systemd needs one")

    def _startup_log(self):
        if self.log is None:
            return ""
        self.log.seek(0)
        text = self.log.read().decode(errors="replace").strip()
        return text.splitlines()[-1] if text else "no output"

    def _wait_for_pid1(self):
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LabUnavailable(f"unshare exited with {self.proc.returncode}: {self._startup_log()}")
            for entry in os.listdir("/proc"):
                if entry.isdigit() and _parent_pid(entry) == self.proc.pid:
                    return int(entry)
            time.sleep(0.01)
        raise LabUnavailable(f"unshare started no PID 1 within {self.start_timeout:.0f} s")

    def _wait_for_manager(self):
        """systemctl answers over /run/systemd/private once the manager is up (no D-Bus)."""
        deadline = time.monotonic() + self.start_timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LabUnavailable(f"the lab's PID 1 exited with {self.proc.returncode}: "
                                     f"{self._startup_log()}")
            if os.path.basename(_executable(self.pid) or "") == "systemd":
                result = self.run(["systemctl", "list-units", "--no-legend", "lab.target"],
                                  check=False, timeout=10)
                if result.returncode == 0 and "lab.target" in result.stdout:
                    return
                last = (result.stderr or result.stdout).strip()
            time.sleep(0.05)
        raise LabUnavailable(f"systemd as PID 1 did not answer within {self.start_timeout:.0f} s"
                             + (f": {last}" if last else "") + f" ({self._startup_log()})")

    # ------------------------------------------------------------------ commands inside

    def run(self, argv, user=None, check=True, timeout=60, input=None, env=None, cwd="/"):
        """Runs argv inside the lab (its mounts and PID namespace) as root, or as `user`
        (name or uid, with that user's groups and a login-like environment).
        Returns a CompletedProcess with text stdout/stderr; raises LabError on a non-zero
        status when check is set."""
        command = ["nsenter", "-t", str(self.pid), "-m", "-p", f"--wd={cwd}"]
        environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                       "LANG": "C.UTF-8", "HOME": "/root"}
        if user is not None:
            command += ["setpriv", f"--reuid={user}", f"--regid={self._primary_group(user)}",
                        "--init-groups", "--"]
            environment.update(self._user_environment(user))
        environment.update(env or {})
        command += ["env", "-i"] + [f"{k}={v}" for k, v in environment.items()] + list(argv)
        result = subprocess.run(command, input=input, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise LabError(f"{' '.join(argv)} exited with {result.returncode} in the lab"
                           f"{' as ' + str(user) if user is not None else ''}: "
                           f"{(result.stderr or result.stdout).strip()}")
        return result

    def systemctl(self, *args, check=True, timeout=60):
        return self.run(["systemctl", "--no-pager", *args], check=check, timeout=timeout)

    def show(self, unit, *properties):
        """systemctl show -p ...: {property: value}."""
        out = self.systemctl("show", unit, *[f"--property={p}" for p in properties]).stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def main_pid(self, unit="sectiond.service"):
        """The unit's MainPID in the lab's PID namespace (0 when it has none)."""
        return int(self.show(unit, "MainPID")["MainPID"])

    def journal(self, unit="sectiond", *args):
        """journalctl -u UNIT inside (extra args: e.g. "-o", "json")."""
        return self.run(["journalctl", "-u", unit, "--no-pager", *args]).stdout

    def install(self, build_dir=None, prefix="/usr/local"):
        """The project's real installer, run inside so that systemd-sysusers,
        systemd-tmpfiles and daemon-reload act on the lab. build_dir: the built
        binaries (default $BUILD_DIR, else .build/debug)."""
        build_dir = build_dir or os.environ.get("BUILD_DIR", ".build/debug")
        if not os.path.isabs(build_dir):
            build_dir = os.path.join(ROOT, build_dir)
        return self.run([os.path.join(ROOT, "scripts", "install.sh"), "--no-build"],
                        env={"BUILD_DIR": build_dir, "PREFIX": prefix}, cwd=ROOT, timeout=120)

    # ------------------------------------------------------------------ files and users

    def host_path(self, path):
        """The host-visible path of a path inside the lab (through /proc/PID/root)."""
        return f"/proc/{self.pid}/root{path}"

    def socket_path(self, name="control.sock"):
        return self.host_path(f"/run/sectiond/{name}")

    def write_file(self, path, text, mode=0o644):
        """Writes a file inside the lab (into its private /etc, /run, ... layers)."""
        target = self.host_path(path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as f:
            f.write(text)
        os.chmod(target, mode)

    def copy_in(self, host_file, path):
        """Copies a host file into the lab (the lab's /tmp, /run, ... are not the host's:
        a .deb built in the host's /tmp must be copied in before apt-get can see it)."""
        target = self.host_path(path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(host_file, target)
        return path

    def add_user(self, name, groups=()):
        """useradd in the lab's private passwd; returns the new uid."""
        argv = ["useradd", "--create-home", "--shell", "/bin/sh"]
        if groups:
            argv += ["--groups", ",".join(groups)]
        self.run(argv + [name])
        return self.uid(name)

    def uid(self, user):
        return int(self.run(["id", "-u", str(user)]).stdout)

    def _primary_group(self, user):
        return int(self.run(["id", "-g", str(user)]).stdout)

    def _user_environment(self, user):
        entry = self.run(["getent", "passwd", str(user)]).stdout.strip().split(":")
        return {"USER": entry[0], "LOGNAME": entry[0], "HOME": entry[5], "SHELL": entry[6],
                "XDG_RUNTIME_DIR": f"/run/user/{entry[2]}"}

    def user_manager(self, user, timeout=30):
        """Starts the real user@UID.service (`systemd --user`, with PAM) for a lab user and
        waits until `systemctl --user` answers; then run(["systemctl", "--user", ...],
        user=user). The system bus comes first: user-runtime-dir@UID asks logind (which
        D-Bus activates) for /run/user/UID and fails without it. Returns the uid."""
        uid = self.uid(user)
        self.systemctl("start", "dbus.socket")
        self.systemctl("start", f"user@{uid}.service", timeout=timeout)
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            state = self.run(["systemctl", "--user", "is-system-running"], user=user,
                             check=False).stdout.strip()
            if state in ("running", "degraded"):
                return uid
            time.sleep(0.1)
        raise LabError(f"the user manager of {user} did not answer within {timeout} s ({state})")


def _parent_pid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _executable(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


SKIPPED = 77
"""The exit status of a suite that could not run here (automake's convention; scripts/test.sh
counts it as skipped and lists the reason)."""


def skip_line(reason):
    """The one line a suite prints when the lab cannot start; returns the status to exit with."""
    print(f"SKIP systemd lab: {reason}", flush=True)
    return SKIPPED
