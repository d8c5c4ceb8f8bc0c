#!/usr/bin/env python3
"""sectiond-web.service as installed, in the systemd lab (Tests/System/lib/lab.py):
scripts/install.sh's units and page, the real websocketd, the real sandbox.

System unit: started with the documented port drop-in (the lab shares the host's network, so a
free port rather than 8047), it serves the page and its WebSocket runs `sectionctl pipe` on the
read-only socket (SUBSCRIBE answers, TOGGLE is ERR READONLY); a cross-site Origin gets 403; it
runs as the user sectiond-web, not root; `systemd-analyze security` rates it (the figure is printed);
the documented control drop-in (SECTIOND_WEB_SOCKET, SupplementaryGroups=sectiond) lets TOGGLE
through, and with the access rule `user sectiond-web operate` only what operate allows. User unit: under a lab user's manager, with its own port drop-in, the page reads the
user's own daemon and cannot change it; its `systemd-analyze --user security` figure. No journal
line of the system unit says a sandbox setting failed.

Prints PASS/FAIL lines, then `N passed, N failed`.
"""

import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from lab import Lab, LabUnavailable, skip_line  # noqa: E402
from sdlib import Results, require, require_binary  # noqa: E402
from web_socket import free_port, handshake, wait_for, ws_read_lines, ws_send_text  # noqa: E402

USER = "kiosk"
results = Results()
check = results.check


def converse(port, lines, origin=None):
    """Sends each line over a WebSocket to 127.0.0.1:port and returns (status, reply lines)."""
    status, sock, rest = handshake(port, f"127.0.0.1:{port}", origin or f"http://127.0.0.1:{port}")
    try:
        if status != 101:
            return status, []
        for line in lines:
            ws_send_text(sock, line)
        statuses = [0]

        def answered(got):
            statuses[0] = sum(1 for line in got if line.startswith(("OK", "ERR")))
            return statuses[0] >= len(lines)
        return status, ws_read_lines(sock, rest, answered, timeout=10)
    finally:
        sock.close()


def page_served(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            return response.status == 200 and b'id="sections"' in response.read()
    except OSError:
        return False


def security(result):
    """The overall exposure `systemd-analyze security` printed (99 when it printed none)."""
    match = re.search(r"Overall exposure level for (\S+): (\d+\.\d+)", result.stdout)
    if not match:
        return 99
    print(f"FIGURE systemd-analyze security {match[1]}: {match[2]}", flush=True)
    return float(match[2])


def drop_in(lab, path, text):
    lab.write_file(path, "[Service]\n" + text)


def system_unit(lab):
    port = free_port()
    drop_in(lab, "/etc/systemd/system/sectiond-web.service.d/port.conf", f"Environment=SECTIOND_WEB_PORT={port}\n")
    lab.systemctl("daemon-reload")
    lab.systemctl("start", "sectiond.socket", "sectiond-readonly.socket")
    started = lab.systemctl("start", "sectiond-web.service", check=False)
    check(started.returncode == 0, "systemctl start sectiond-web.service", (started.stderr or "").strip())
    served = wait_for(lambda: page_served(port), 10, 0.1)
    check(served, f"the port drop-in moves the page to 127.0.0.1:{port}")

    status, lines = converse(port, ["SUBSCRIBE", "TOGGLE 0"])
    check(status == 101 and lines[:1] and lines[0].startswith("state ") and lines[-1].startswith("ERR READONLY"),
          "read-only by default: SUBSCRIBE answers, TOGGLE is refused", str(lines))
    status, _ = converse(port, ["PING"], origin=f"http://evil.example:{port}")
    check(status == 403, "a cross-site Origin is refused (403)", str(status))

    pid = lab.main_pid("sectiond-web.service")
    user = lab.run(["ps", "-o", "user=", "-p", str(pid)], check=False).stdout.strip()
    check(pid > 0 and user == "sectiond-web", "websocketd runs as the user sectiond-web (sysusers.d), not root", user)

    exposure = security(lab.run(["systemd-analyze", "security", "sectiond-web.service"], check=False))
    check(exposure <= 1.0, "systemd-analyze security rates the system unit at most 1.0", str(exposure))

    drop_in(lab, "/etc/systemd/system/sectiond-web.service.d/control.conf",
            "Environment=SECTIOND_WEB_SOCKET=/run/sectiond/control.sock\nSupplementaryGroups=sectiond\n")
    lab.systemctl("daemon-reload")
    lab.systemctl("restart", "sectiond-web.service")
    wait_for(lambda: page_served(port), 10, 0.1)
    status, lines = converse(port, ["TOGGLE 0"])
    check(status == 101 and lines and re.match(r"OK \d+$", lines[-1]),
          "the control drop-in lets the page change the list", str(lines))

    # The operate option: the rule for the page's user, read by sectiond when it starts.
    lab.write_file("/etc/sectiond/access.conf", "user sectiond-web operate\n")
    lab.systemctl("restart", "sectiond.service")
    lab.systemctl("restart", "sectiond-web.service")
    wait_for(lambda: page_served(port), 10, 0.1)
    status, lines = converse(port, ["TOGGLE 0", "DELETE 0", "RELOAD FRESH"])
    check(status == 101 and len(lines) >= 3 and re.match(r"OK \d+$", lines[-3])
          and all(line.startswith("ERR DENIED edit operate") for line in lines[-2:]),
          "with the rule 'user sectiond-web operate' the page toggles, and its DELETE and RELOAD FRESH are"
          " refused", str(lines))
    journal = lab.journal("sectiond-web")
    failures = [line for line in journal.splitlines() if re.search(r"Failed|failed to|Permission denied", line)]
    check(not failures, "the journal has no failed set-up or refused connection", "; ".join(failures[:3]))
    lab.systemctl("stop", "sectiond-web.service")


def user_unit(lab):
    lab.add_user(USER)
    run = lambda argv, **kw: lab.run(argv, user=USER, check=False, **kw)  # noqa: E731
    lab.user_manager(USER)
    port = free_port()
    home = f"/home/{USER}"
    run(["mkdir", "-p", f"{home}/.config/systemd/user/sectiond-web.service.d"])
    run(["sh", "-c", f"cat > {home}/.config/systemd/user/sectiond-web.service.d/port.conf"],
        input=f"[Service]\nEnvironment=SECTIOND_WEB_PORT={port}\n")
    run(["systemctl", "--user", "daemon-reload"])
    started = run(["systemctl", "--user", "enable", "--now", "sectiond.socket", "sectiond-web.service"])
    check(started.returncode == 0, "systemctl --user enable --now sectiond-web.service",
          "" if started.returncode == 0 else (started.stderr or "").strip()[:200])
    served = wait_for(lambda: page_served(port), 15, 0.1)
    status, lines = converse(port, ["VIEW", "OPEN 0"]) if served else (0, [])
    check(served and status == 101 and any(line.startswith("section 0 ") for line in lines)
          and lines[-1].startswith("ERR READONLY"),
          "user unit: the page reads the user's own daemon, read-only", str(lines[-2:]))
    exposure = security(run(["systemd-analyze", "--user", "security", "sectiond-web.service"]))
    check(exposure <= 2.0, "systemd-analyze --user security rates the user unit at most 2.0", str(exposure))
    run(["systemctl", "--user", "stop", "sectiond-web.service"])


def main():
    require(["websocketd"])
    require_binary()
    try:
        with Lab() as lab:
            lab.install()
            system_unit(lab)
            user_unit(lab)
    except LabUnavailable as error:
        return skip_line(str(error))
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
