"""A terminal a person would look at, for the suites that drive `sectionctl ui` (ui.py,
ctl-safety.py): a tmux server of the suite's own at a fixed size, read with `tmux capture-pane`,
and the display width and status line of what it shows. Standard library only.
"""

import itertools
import os
import re
import shlex
import subprocess
import time
import unicodedata


def cells(text):
    """Display width as a terminal counts it (tmux agrees for these characters)."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or ch in "\u200b\u200d\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return width


class Pane:
    """A tmux server of its own, with one window running an interactive bash at a fixed size."""

    servers = itertools.count()
    """Numbers each server's socket name: a name is never reused, so a new-session cannot reach
    a server that was just killed and is still exiting ("server exited unexpectedly")."""

    def __init__(self, name, width, height, command=None):
        """A pane with an interactive bash, or running `command` (a list) as its only process."""
        server = f"{name}-{next(Pane.servers)}"
        self.base = ["tmux", "-L", server, "-f", "/dev/null"]
        self.socket = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", server)
        env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8", PS1="ui-test$ ")
        env.pop("NO_COLOR", None)
        env.pop("TMUX", None)
        subprocess.run(self.base + ["kill-server"], capture_output=True)
        shell = "exec " + " ".join(shlex.quote(part) for part in command) if command else "bash --norc --noprofile"
        subprocess.run(self.base + ["new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), shell],
                       check=True, env=env)
        self.run("set-option", "-g", "status", "off")
        if not command:
            # bash sets its own prompt when interactive; this one marks "the shell is back".
            self.type_line("PS1='ui-test$ '")
        self.height = height

    def run(self, *args):
        return subprocess.run(self.base + list(args), capture_output=True, text=True).stdout

    def screen(self):
        lines = self.run("capture-pane", "-p", "-t", "t").split("\n")
        lines = lines[:self.height] + [""] * max(0, self.height - len(lines))
        return [line.rstrip() for line in lines]

    def escapes(self):
        """The screen with its colour and attribute sequences."""
        return self.run("capture-pane", "-p", "-e", "-t", "t")

    def keys(self, *keys):
        self.run("send-keys", "-t", "t", *keys)

    def literal(self, text):
        self.run("send-keys", "-t", "t", "-l", text)

    def type_line(self, command):
        self.literal(command)
        self.keys("Enter")

    def flags(self):
        """(alternate screen on, cursor visible, mouse reporting on) as tmux sees the pane."""
        out = self.run("display-message", "-p", "-t", "t", "#{alternate_on} #{cursor_flag} #{mouse_any_flag}")
        return tuple(out.split())

    def resize(self, width, height):
        self.run("resize-window", "-t", "t", "-x", str(width), "-y", str(height))
        self.height = height

    def shell_child(self):
        """The pid of the command the pane's shell is running (the ui)."""
        shell = self.run("display-message", "-p", "-t", "t", "#{pane_pid}").strip()
        for _ in range(100):
            try:
                with open(f"/proc/{shell}/task/{shell}/children") as f:
                    children = f.read().split()
                if children:
                    return int(children[0])
            except OSError:
                pass
            time.sleep(0.05)
        return None

    def wait(self, predicate, timeout=5.0):
        """Polls the screen until predicate(screen) holds; returns (held, last screen)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if predicate(screen):
                return True, screen
            if time.monotonic() > deadline:
                return False, screen
            time.sleep(0.05)

    def close(self):
        subprocess.run(self.base + ["kill-server"], capture_output=True)
        try:
            os.unlink(self.socket)  # tmux leaves its socket file behind
        except OSError:
            pass


def cursor_line(screen):
    return next((line for line in screen if line.startswith("›")), "")


def status_shows_socket(line, socket):
    """Mode, revision, link and key hints, the rows hidden below if any, then the socket (cut
    with an ellipsis when the line is wider than the screen)."""
    found = re.fullmatch(r" multi  rev \d+  connected  \|  \? keys  q quit  (\|  \d+ more below  )?\|  (.+)", line)
    if found is None:
        return False
    shown = found.group(2)
    return shown == socket or (shown.endswith("…") and socket.startswith(shown[:-1]))


def status_line(screen):
    """The status line, after the message lines above it when a message did not fit beside
    it (list rows start with two cells of gutter; a message line with one space)."""
    lines = [screen[-1]]
    for line in reversed(screen[-3:-1]):
        if not (line.startswith(" ") and not line.startswith("  ")):
            break
        lines.insert(0, line)
    return "".join(lines)


def show(screen):
    return "\n" + "\n".join(f"    |{line}" for line in screen)
