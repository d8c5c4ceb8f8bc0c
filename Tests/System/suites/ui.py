#!/usr/bin/env python3
"""End-to-end tests of `sectionctl ui` in tmux against a real sectiond.

Each check is on what a person would see: the screen as `tmux capture-pane -p` prints it,
and, for terminal hygiene, what tmux reports about the pane (alternate screen, cursor, mouse
reporting) and what `stty -a` prints once the ui has gone. Standard library only.
"""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sdlib  # noqa: E402
import ui_load  # noqa: E402
from tmux_pane import Pane, cells, cursor_line, show, status_line, status_shows_socket  # noqa: E402

WIDE_TITLE = "日本語のとても長いタイトル 🍎 with e\u0301 and more words than fit"


def config(extra_first=(), without=()):
    sections = [{"id": section, "title": section.capitalize(), "items": ["new item"]} for section in extra_first]
    sections += [
        {"id": "fruit", "title": "Fruit", "items": ["apple", "pear", "plum"]},
        {"id": "veg", "title": "Vegetables", "items": ["leek"]},
        {"id": "wide", "title": WIDE_TITLE, "items": ["漢字の項目", "plain item"]},
    ]
    sections += [{"id": f"s{n:02}", "title": f"Section {n:02}", "items": [f"item {n}-a", f"item {n}-b"]}
                 for n in range(3, 30)]
    return json.dumps({"mode": "multi", "sections": [s for s in sections if s["id"] not in without]})


class UITest:
    def __init__(self):
        self.results = sdlib.Results()
        self.daemon = sdlib.Daemon(config=config()).start()
        self.ctl = os.path.join(sdlib.build_dir(), "sectionctl")
        self.panes = []

    def pane(self, name, width=80, height=12, command=None):
        pane = Pane(f"sdui-{os.getpid()}-{name}", width, height, command)
        self.panes.append(pane)
        return pane

    def start_ui(self, pane, *options, prefix=""):
        pane.type_line("clear")
        command = [self.ctl, "--socket", self.daemon.socket, *options, "ui"]
        pane.type_line(prefix + " ".join(shlex.quote(part) for part in command) + "; echo EXIT=$?")
        return pane.wait(lambda s: "connected" in status_line(s) or "read-only" in status_line(s))

    def check(self, ok, name, detail):
        """A check whose detail (a screen) is printed only when it fails."""
        return self.results.check(ok, name, "" if ok else detail)

    def check_screen(self, pane, name, predicate, timeout=5.0):
        ok, screen = pane.wait(predicate, timeout)
        self.results.check(ok, name, "" if ok else show(screen))
        return ok

    def open_ids(self):
        with self.daemon.connect() as client:
            return [line.split()[2] for line in client.request("LIST") if line.split()[3:4] == ["open"]]

    def request(self, line):
        with self.daemon.connect() as client:
            return client.request(line)

    def close(self):
        for pane in self.panes:
            pane.close()
        self.daemon.close()

    # The checks, in the order a person would meet them.

    def refuses_without_a_terminal(self):
        run = subprocess.run([self.ctl, "--socket", self.daemon.socket, "ui"], stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=10)
        self.check(run.returncode == 2 and "sectionctl view" in run.stderr and "watch" in run.stderr,
                           "not a terminal: exit 2, suggests view and watch", f"{run.returncode} {run.stderr!r}")
        pane = self.pane("dumb")
        pane.type_line(f"TERM=dumb {self.ctl} --socket {self.daemon.socket} ui; echo EXIT=$?")
        self.check_screen(pane, "TERM=dumb: exit 2 with the same advice",
                          lambda s: any("EXIT=2" in line for line in s)
                          and any("'dumb'" in line for line in s))
        pane.type_line(f"clear; {self.ctl} --socket {self.daemon.dir}/none.sock ui; echo EXIT=$?")
        ok = self.check_screen(pane, "no daemon: exit 3 naming the socket, before the terminal is touched",
                               lambda s: any("EXIT=3" in line for line in s)
                               and any("no daemon is listening" in line for line in s))
        self.check(ok and pane.flags() == ("0", "1", "0"), "and the terminal as it was", str(pane.flags()))

    def first_screen_and_toggle(self, pane):
        ok, screen = self.start_ui(pane)
        self.check(ok and screen[0].startswith("› ▸ Fruit  (0 fruit, 3 items)")
                   and status_shows_socket(status_line(screen), self.daemon.socket),
                           "starts on the first header; status shows socket, mode, revision, link", show(screen))
        self.check(pane.flags() == ("1", "0", "1"), "alternate screen, hidden cursor, mouse reporting",
                           str(pane.flags()))
        pane.keys("Enter")
        self.check_screen(pane, "Enter opens the cursor's section, items indented under it",
                          lambda s: s[0].startswith("› ▾ Fruit") and s[1].strip() == "apple"
                          and s[3].strip() == "plum")
        self.check(self.open_ids() == ["fruit"], "the daemon has it open", str(self.open_ids()))
        self.check("\x1b[32m▾" in pane.escapes(), "colour: the open marker is green", pane.escapes())

    def another_clients_change_appears(self, pane):
        started = time.monotonic()
        self.request("OPEN veg")
        ok = self.check_screen(pane, "another client's change appears",
                               lambda s: any(line.startswith("  ▾ Vegetables") for line in s)
                               and any(line.strip() == "leek" for line in s))
        if ok:
            print(f"     (seen on screen after {1000 * (time.monotonic() - started):.0f} ms, tmux polling included)")
        # The cursor stays on Vegetables while Fruit, above it, closes.
        pane.keys("j", "j", "j", "j")
        self.check_screen(pane, "j moves the cursor down to Vegetables",
                          lambda s: cursor_line(s).startswith("› ▾ Vegetables"))
        self.request("CLOSE fruit")
        self.check_screen(pane, "the cursor stays on its section when one above closes",
                          lambda s: s[0].startswith("  ▸ Fruit") and s[1].startswith("› ▾ Vegetables"))
        pane.literal("c")
        self.check_screen(pane, "c closes the cursor's section", lambda s: cursor_line(s).startswith("› ▸ Vegetables"))

    def mouse(self, pane):
        ok, screen = pane.wait(lambda s: any(line.startswith("  ▸ Section 03") for line in s))
        line = next((i for i, text in enumerate(screen) if text.startswith("  ▸ Section 03")), None)
        if line is None:
            self.check(False, "mouse: Section 03 on screen", show(screen))
            return
        pane.literal(f"\x1b[<0;7;{line + 1}M\x1b[<0;7;{line + 1}m")
        self.check_screen(pane, "a click on a header toggles it and puts the cursor there",
                          lambda s: s[line].startswith("› ▾ Section 03") and s[line + 1].strip() == "item 3-a")
        self.check("s03" in self.open_ids(), "the click reached the daemon", str(self.open_ids()))
        before = pane.screen()[0]
        pane.literal("\x1b[<65;7;5M")
        self.check_screen(pane, "the wheel scrolls the list", lambda s: s[0] != before and " rev " in s[-1]
                          and "Section" in s[0])
        pane.literal("\x1b[<64;7;5M")
        self.check_screen(pane, "the wheel scrolls back", lambda s: s[0] == before)

    def scrolling(self, pane):
        pane.literal("G")
        self.check_screen(pane, "G: the last row, the list scrolled to keep it visible",
                          lambda s: s[-2].startswith("› ▸ Section 29") and not s[0].startswith("  ▸ Fruit"))
        pane.keys("PageUp")
        self.check_screen(pane, "PgUp: a page up", lambda s: cursor_line(s) != "" and "Section 29" not in cursor_line(s))
        pane.literal("g")
        self.check_screen(pane, "g: back to the first row", lambda s: s[0].startswith("› ▸ Fruit"))
        pane.keys("PageDown")
        self.check_screen(pane, "PgDn: a page down, cursor on screen",
                          lambda s: cursor_line(s) != "" and not s[0].startswith("› "))
        pane.literal("g")

    def modes(self, pane):
        pane.literal("m")
        self.check_screen(pane, "m switches to exclusive mode", lambda s: " exclusive " in status_line(s))
        pane.literal("O")
        self.check_screen(pane, "O in exclusive mode: the refusal is in the status line",
                          lambda s: "exclusive mode" in status_line(s) and "OPEN ALL" in status_line(s), timeout=3)
        pane.literal("m")
        self.check_screen(pane, "m switches back to multi", lambda s: " multi " in status_line(s))
        pane.literal("O")
        self.check_screen(pane, "O opens every section", lambda s: s[0].startswith("› ▾ Fruit") and "▸" not in "".join(s))
        pane.literal("C")
        self.check_screen(pane, "C closes every section", lambda s: "▾" not in "".join(s))
        pane.literal("?")
        self.check_screen(pane, "? shows the keys", lambda s: s[0].startswith("sectionctl ui: keys"))
        pane.literal("x")
        self.check_screen(pane, "any key closes the keys", lambda s: s[0].startswith("› ▸ Fruit"))

    def resize_and_cut(self, pane):
        pane.resize(40, 8)
        self.check_screen(pane, "resize: status line on the new last row, every line fits 40 cells",
                          lambda s: len(s) == 8 and "connected" in s[7] and s[0].startswith("› ▸ Fruit")
                          and all(cells(line) <= 40 for line in s))
        pane.literal("jj")
        ok, screen = pane.wait(lambda s: cursor_line(s).startswith("› ▸ 日本語"))
        line = cursor_line(screen)
        # The title is cut, not its `(index id, n items)` suffix.
        self.check(ok and "…  (2 wide, 2 items)" in line and line.endswith(")") and cells(line) <= 40,
                           "a wide title is cut by display width with an ellipsis", show(screen))
        pane.keys("Enter")
        self.check_screen(pane, "wide items are drawn", lambda s: any(line.strip() == "漢字の項目" for line in s))
        pane.keys("Enter")
        pane.resize(80, 12)
        self.check_screen(pane, "resize back to 80x12", lambda s: len(s) == 12 and "connected" in s[11]
                          and cursor_line(s).startswith("› ▸ 日本語") and "(2 wide, 2 it" in cursor_line(s))
        pane.literal("g")

    def reloads(self, pane):
        """Sections appear and disappear above the cursor (a config reload): it stays on its own."""
        pane.literal("j")
        self.check_screen(pane, "cursor on Vegetables", lambda s: cursor_line(s).startswith("› ▸ Vegetables"))
        self.rewrite_config(config(extra_first=("added", "another")))
        pane.literal("r")
        # The list scrolls so that the cursor keeps its line: Added and Another are above the screen.
        self.check_screen(pane, "r reloads: new sections above, the cursor stays on Vegetables, on its line",
                          lambda s: s[0].startswith("  ▸ Fruit  (2 fruit") and s[1].startswith("› ▸ Vegetables  (3 veg")
                          and "reloaded" in status_line(s))
        pane.literal("gj")
        self.check_screen(pane, "the new sections are there", lambda s: s[0].startswith("  ▸ Added")
                          and s[1].startswith("› ▸ Another"))
        pane.literal("jj")
        self.rewrite_config(config(without=("veg",)))
        self.request("RELOAD")
        self.check_screen(pane, "its section deleted, the cursor moves to the nearest one",
                          lambda s: s[0].startswith("  ▸ Fruit") and s[1].startswith("› ▸ 日本語"))
        self.rewrite_config(config())
        self.request("RELOAD")
        self.check_screen(pane, "the config back: Vegetables reappears above the cursor",
                          lambda s: s[0].startswith("  ▸ Vegetables  (1 veg") and s[1].startswith("› ▸ 日本語"))
        pane.literal("g")

    def rewrite_config(self, text):
        with open(os.path.join(self.daemon.dir, "sections.json"), "w") as f:
            f.write(text)

    def viewer(self):
        pane = self.pane("viewer")
        ok, screen = self.start_ui(pane, "--readonly", prefix="NO_COLOR=1 ")
        self.check(ok and "read-only" in status_line(screen), "--readonly: a viewer", show(screen))
        before = self.open_ids()
        pane.keys("Enter")
        self.check_screen(pane, "the viewer refuses Enter with read-only in the status line",
                          lambda s: "read-only" in status_line(s) and "TOGGLE" in status_line(s))
        time.sleep(0.2)
        self.check(self.open_ids() == before, "nothing changed in the daemon", str(self.open_ids()))
        self.request("OPEN fruit")
        self.check_screen(pane, "the viewer shows changes made elsewhere", lambda s: s[0].startswith("› ▾ Fruit"))
        escapes = pane.escapes()
        self.check("\x1b[7m" in escapes and not re.search(r"\x1b\[[0-9;]*3[0-7]m", escapes) and "\x1b[1m" not in escapes,
                   "NO_COLOR: no colour, the cursor and status line still in reverse video", repr(escapes))
        self.request("CLOSE fruit")
        pane.literal("q")
        pane.wait(lambda s: any("EXIT=" in line for line in s))

    def daemon_restart(self, pane):
        self.daemon.kill(signal.SIGTERM)
        self.check_screen(pane, "daemon gone: the screen stays, the status says disconnected and retrying",
                          lambda s: "disconnected, retrying" in status_line(s) and s[0].startswith("› ▸ Fruit"))
        self.daemon = sdlib.Daemon(config=config(), directory=self.daemon.dir).start()
        self.daemon.own_dir = True  # the first daemon's directory: removed at the end as before
        self.check_screen(pane, "daemon back: the ui reconnects by itself",
                          lambda s: status_line(s).split("  ")[-2:-1] == ["connected"]
                          or "  connected  |" in status_line(s), timeout=8)
        self.request("OPEN veg")
        self.check_screen(pane, "after reconnecting, changes appear again",
                          lambda s: any(line.startswith("  ▾ Vegetables") for line in s))
        self.request("CLOSE veg")

    def falls_behind(self):
        """A ui that stops reading (SIGSTOP) while 20,001 changes happen (400 KB of events: more
        than the socket buffer and the daemon's 64 KiB) gets a !state snapshot once it reads
        again; the screen ends right. The ui is the pane's own process: under an interactive
        shell, job control would take the terminal from a stopped ui and not give it back."""
        pane = self.pane("behind", command=[self.ctl, "--socket", self.daemon.socket, "ui"])
        ok, screen = pane.wait(lambda s: "connected" in status_line(s))
        if not self.check(ok, "a ui as the pane's process", show(screen)):
            return
        pid = int(pane.run("display-message", "-p", "-t", "t", "#{pane_pid}"))
        os.kill(pid, signal.SIGSTOP)
        try:
            with self.daemon.connect() as client:
                for count in [1000] * 20 + [1]:
                    client.send("TOGGLE fruit\n" * count)
                    for _ in range(count):
                        client.read_reply()
                revision = client.request("LIST")[-1].split()[1]
        finally:
            os.kill(pid, signal.SIGCONT)
        self.check_screen(pane, "after falling behind (a !state snapshot) the screen shows the final state",
                          lambda s: s[0].startswith("› ▾ Fruit") and f"rev {revision} " in status_line(s), timeout=8)
        self.request("CLOSE fruit")
        pane.literal("q")
        gone = False
        for _ in range(100):
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    gone = stat.read().split()[2] == "Z"
            except FileNotFoundError:  # already reaped, perhaps between two looks
                gone = True
            if gone:
                break
            time.sleep(0.05)
        self.check(gone, "and it still quits on q", "")

    def restored(self, pane, how, name):
        ok, screen = pane.wait(lambda s: any(line.startswith("EXIT=") for line in s))
        exit_line = next((line for line in screen if line.startswith("EXIT=")), "none")
        self.check(ok and exit_line == "EXIT=0" and pane.flags() == ("0", "1", "0")
                           and not any(line.startswith("› ") for line in screen),
                           f"{name}: exit 0, normal screen back, cursor shown, mouse reporting off",
                           f"{exit_line} flags {pane.flags()}" + show(screen))
        pane.type_line("clear; echo \"STTY: $(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo|isig|opost|icrnl)'"
                       " | sort | tr '\\n' ' ')\"")
        ok, screen = pane.wait(lambda s: any(line.startswith("STTY:") for line in s))
        settings = next((line for line in screen if line.startswith("STTY:")), "")
        self.check(settings.split() == ["STTY:", "echo", "icanon", "icrnl", "isig", "opost"] and
                   any(line.startswith("ui-test$") for line in screen),
                           f"{name}: stty sane again and the shell prompt back", settings + show(screen))

    def quitting(self, pane):
        for how, name in (("q", "q"), ("Escape", "Esc"), ("C-c", "Ctrl-C"), ("SIGTERM", "SIGTERM"),
                          ("SIGHUP", "SIGHUP")):
            ok, screen = self.start_ui(pane)
            if not ok:
                self.check(False, f"{name}: the ui started", show(screen))
                continue
            if how.startswith("SIG"):
                pid = pane.shell_child()
                os.kill(pid, getattr(signal, how))
            else:
                pane.keys(how)
            self.restored(pane, how, name)

    def under_load(self):
        """1,000 changes a second from another client (Tests/System/lib/ui_load.py measures; the figures are printed)."""
        figures = ui_load.measure(self.ctl, seconds=3, rate=1000)
        print("     " + ", ".join(f"{key} {value}" for key, value in figures.items()))
        # A margin a busy CI machine meets (the debug build: p95 18 ms, docs/PERFORMANCE.md); keys that
        # waited behind the events, the failure this guards, wait seconds.
        self.check(figures["key_latency_ms_p95"] <= 200, "under 1,000 changes/s keys are handled within 200 ms (p95)",
                   str(figures))
        self.check(figures["frames_per_second"] <= 61, "redraws are coalesced to at most 60 a second", str(figures))
        self.check(figures["final_state_drawn"], "the last change is on screen once the load stops", str(figures))
        # Debug build on a shared CI machine: the bound is loose; docs/PERFORMANCE.md has the release figures.
        self.check(figures["cpu_percent"] <= 50 and figures["idle_cpu_percent"] <= 2,
                   "the ui's CPU stays low under load and is nil when idle", str(figures))

    def main(self):
        try:
            self.refuses_without_a_terminal()
            pane = self.pane("main")
            self.first_screen_and_toggle(pane)
            self.another_clients_change_appears(pane)
            self.mouse(pane)
            self.scrolling(pane)
            self.modes(pane)
            self.resize_and_cut(pane)
            self.reloads(pane)
            self.viewer()
            self.daemon_restart(pane)
            self.falls_behind()
            pane.literal("q")
            self.restored(pane, "q", "after all that, q")
            self.quitting(pane)
            self.under_load()
        finally:
            self.close()
        return self.results.finish()


if __name__ == "__main__":
    sdlib.require(["tmux"])
    sdlib.require_binary()
    sys.exit(UITest().main())
