"""`sectionctl pipe` on its own, against a real sectiond: what it relays, when it exits, how it
fails, and that neither direction waits for the other. Run by Tests/System/suites/web.py.
"""

import os
import subprocess
import time

from web_lib import SECTIONCTL, check, run


def pipe_checks(daemon):
    socket_args = ["--socket", daemon.socket]
    done = run(socket_args + ["pipe"], input="LIST\nTOGGLE someday\n")
    lines = done.stdout.splitlines()
    check(done.returncode == 0 and lines[-3].startswith("OK") and lines[-2].startswith("section 3 someday open")
          and lines[-1].startswith("OK "), "pipe: relays requests and exits after the last reply at end of input",
          repr(lines[-3:]) + done.stderr)
    run(socket_args + ["close", "someday"])
    done = run(socket_args + ["--readonly", "pipe"], input="TOGGLE 0\n")
    check(done.stdout.startswith("ERR READONLY") and done.returncode == 0,
          "pipe --readonly: the read-only socket beside the control socket", (done.stdout + done.stderr).strip())
    missing = os.path.join(daemon.dir, "none.sock")
    done = run(["--socket", missing, "pipe"], input="PING\n")
    check(done.returncode == 3 and f"no daemon is listening on {missing}" in done.stderr,
          "pipe: an unreachable socket exits 3 with sectionctl's message", done.stderr.strip()[:90])

    done = run(socket_args + ["pipe"], input="PING\nQUIT\nLIST\n")
    check(done.returncode == 0 and done.stdout == "OK\nOK\n",
          "pipe: the replies before the daemon closes are passed on, the input after QUIT is dropped",
          repr(done.stdout[:60]) + done.stderr)
    # More than the daemon holds for a client that does not read (1 MiB), in and out at once:
    # neither direction may wait for the other.
    count = 30000
    done = run(socket_args + ["pipe"], input="".join(f"PING {n}\n" for n in range(count)))
    replies = done.stdout.splitlines()
    check(done.returncode == 0 and len(replies) == count and all(r.startswith("ERR SYNTAX") for r in replies),
          f"pipe: {count:,} pipelined requests get their {count:,} replies (no deadlock)",
          f"{len(replies)} replies, exit {done.returncode}")

    # Line by line both ways: a request gets its reply, an event arrives, while input stays open.
    proc = subprocess.Popen([SECTIONCTL] + socket_args + ["pipe"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(b"SUBSCRIBE\n")
        proc.stdin.flush()
        first = [proc.stdout.readline(), proc.stdout.readline()]
        run(socket_args + ["toggle", "today"])
        started = time.monotonic()
        event = proc.stdout.readline()
        took = time.monotonic() - started
        check(first[0].startswith(b"state ") and first[1].startswith(b"OK ") and event.startswith(b"!opened ")
              and took < 2, "pipe: replies and events come line by line while input stays open",
              f"{first} {event} after {took:.3f} s")
        proc.stdin.close()
        code = proc.wait(timeout=5)
        check(code == 0, "pipe: end of input ends the relay (exit 0)", str(code))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run(socket_args + ["close", "today"])

    # QUIT: the daemon closes, and pipe exits although its input is still open.
    proc = subprocess.Popen([SECTIONCTL] + socket_args + ["pipe"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(b"QUIT\n")
        proc.stdin.flush()
        code = proc.wait(timeout=5)
        check(code == 0 and proc.stdout.read() == b"OK\n", "pipe: exits when the daemon closes the connection")
    except subprocess.TimeoutExpired:
        check(False, "pipe: exits when the daemon closes the connection", "still running after 5 s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
