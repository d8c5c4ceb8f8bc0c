"""`sectionctl ui` under load: another client makes changes at a fixed rate
while keys are typed, and the ui's terminal output is read from a pty with timestamps.

Measured:
- key latency: from writing `j` or `k` to the pty until the frame that moves the cursor's
  marker to the new row has arrived (what a person waits for);
- frames per second: redraws of the status line, which changes with every revision;
- bytes per frame written to the terminal (only changed rows are redrawn);
- the ui's CPU time (utime + stime from /proc) as a share of one core, with and without load.

Run by Tests/System/suites/ui.py, which checks the figures; by hand, for docs/PERFORMANCE.md:
    BUILD_DIR=.build/release python3 Tests/System/lib/ui_load.py [--seconds 10] [--rate 1000]
"""

import argparse
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdlib  # noqa: E402

ROWS, COLUMNS = 24, 100


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class PtyUI:
    """sectionctl ui on a pty of its own; a thread keeps reading what it draws, with times."""

    def __init__(self, ctl, socket):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8")
        env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen([ctl, "--socket", socket, "ui"], stdin=slave, stdout=slave, stderr=slave,
                                     env=env, start_new_session=True)
        os.close(slave)
        self.chunks = []  # (time, bytes)
        self.lock = threading.Lock()
        self.running = True
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        while self.running:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.chunks.append((time.monotonic(), data))

    def output_since(self, start):
        with self.lock:
            return b"".join(data for when, data in self.chunks if when >= start)

    def wait_for(self, pattern, since, timeout=2.0):
        """The time at which output written after `since` first matched `pattern`, or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                seen = b""
                for when, data in self.chunks:
                    if when < since:
                        continue
                    seen += data
                    if pattern.search(seen):
                        return when
            time.sleep(0.001)
        return None

    def press(self, key):
        os.write(self.master, key)

    def close(self):
        self.press(b"q")
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.running = False
        self.reader.join()
        os.close(self.master)


class Load:
    """Another client toggling one section `rate` times a second, in batches every 10 ms."""

    def __init__(self, socket, rate, section):
        self.client = sdlib.Client(socket, timeout=10)
        self.rate = rate
        self.section = section
        self.sent = 0
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.started = time.monotonic()
        self.thread.start()

    def run(self):
        batch = max(1, self.rate // 100)
        next_at = time.monotonic()
        while self.running:
            self.client.send(f"TOGGLE {self.section}\n" * batch)
            for _ in range(batch):
                self.client.read_reply()
            self.sent += batch
            next_at += batch / self.rate
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def stop(self):
        self.running = False
        self.thread.join()
        self.seconds = time.monotonic() - self.started
        self.client.close()


def config(count, open_all):
    sections = [{"id": f"s{n:02}", "title": f"Section {n:02}", "items": [f"item {n}-{i}" for i in range(5)],
                 "open": open_all} for n in range(count)]
    return json.dumps({"mode": "multi", "sections": sections})


def measure(ctl, seconds=5.0, rate=1000, sections=40, open_all=False):
    results = {"sections": sections, "rows": sections * (6 if open_all else 1)}
    with sdlib.Daemon(config=config(sections, open_all), state=False) as daemon:
        daemon.start()
        ui = PtyUI(ctl, daemon.socket)
        try:
            status_row = re.compile(rb"\x1b\[%d;1H" % ROWS)
            if ui.wait_for(re.compile(rb"connected"), 0, timeout=10) is None:
                raise RuntimeError("the ui did not connect")
            time.sleep(0.5)
            idle_cpu = cpu_seconds(ui.proc.pid)
            time.sleep(2)
            results["idle_cpu_percent"] = 100 * (cpu_seconds(ui.proc.pid) - idle_cpu) / 2
            # A SIGWINCH makes the ui draw the whole screen once: the size of a frame without the diff.
            redrawn = time.monotonic()
            os.kill(ui.proc.pid, signal.SIGWINCH)
            time.sleep(0.3)
            results["full_frame_bytes"] = len(ui.output_since(redrawn))

            load = Load(daemon.socket, rate, "s01")
            load.start()
            time.sleep(0.5)
            start = time.monotonic()
            cpu_start = cpu_seconds(ui.proc.pid)
            latencies = []
            row = 1
            while time.monotonic() - start < seconds:
                key, row = (b"j", row + 1) if row == 1 else (b"k", row - 1)
                pressed = time.monotonic()
                ui.press(key)
                seen = ui.wait_for(re.compile(rb"\x1b\[%d;1H(?:\x1b\[2K)?\x1b\[0;7m\xe2\x80\xba" % row), pressed)
                latencies.append(1000 * (seen - pressed) if seen else float("inf"))
                time.sleep(0.1)
            elapsed = time.monotonic() - start
            cpu = cpu_seconds(ui.proc.pid) - cpu_start
            output = ui.output_since(start)
            load.stop()
            frames = len(status_row.findall(output))
            results.update({
                "rate_asked": rate,
                "changes_per_second": round(load.sent / load.seconds),
                "seconds": round(elapsed, 2),
                "keys": len(latencies),
                "key_latency_ms_median": round(sdlib.percentile(latencies, 50), 2),
                "key_latency_ms_p95": round(sdlib.percentile(latencies, 95), 2),
                "key_latency_ms_max": round(max(latencies), 2),
                "frames_per_second": round(frames / elapsed, 1),
                "bytes_per_frame": round(len(output) / max(frames, 1)),
                "cpu_percent": round(100 * cpu / elapsed, 1),
            })
            # Every change reached the screen: the last drawing of Section 01 has its final state.
            time.sleep(0.2)
            with daemon.connect() as client:
                s01_open = "section 1 s01 open 5 Section 01" in client.request("LIST")
            header = re.compile(r"(▾|▸)(?:\x1b\[[0-9;]*m)* (?:\x1b\[[0-9;]*m)*Section 01")
            drawn = header.findall(ui.output_since(start).decode(errors="replace"))
            results["final_state_drawn"] = bool(drawn) and drawn[-1] == ("▾" if s01_open else "▸")
        finally:
            ui.close()
    return results


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--sections", type=int, default=40)
    parser.add_argument("--open", action="store_true", help="every section open (5 items each)")
    args = parser.parse_args(argv)
    sdlib.require_binary()
    figures = measure(os.path.join(sdlib.build_dir(), "sectionctl"), args.seconds, args.rate, args.sections, args.open)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
