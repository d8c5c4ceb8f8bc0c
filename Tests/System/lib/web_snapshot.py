"""A real `!state` for the page: the daemon sends one to a subscriber that fell more
than its event limit (64 KiB) behind, instead of the events it missed. The page's connection
is websocketd's `sectionctl pipe` child; stopping it (SIGSTOP) while another client makes many
changes, the mode among them, makes its connection fall behind for real; after SIGCONT the page
must count a `!state` and end up holding what LIST and MODE say. For Tests/System/suites/web.py.
"""

import os
import signal
import threading

import sdlib
from web_lib import check, settled
from web_socket import wait_for

FLOOD_ID = "flood-" + "x" * 200  # long, so each TOGGLE's event is ~230 bytes
FLOOD_TOGGLES = 8000  # ~1.8 MB of events: far more than the socket buffers plus 64 KiB


def pipe_pids(websocketd_pid):
    """The `sectionctl` processes whose parent is this websocketd (one per WebSocket)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                command = f.read().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == websocketd_pid and os.path.basename(command[0]) == b"sectionctl":
            pids.append(int(name))
    return pids


def pipelined(path, lines):
    """Sends the lines over one connection without waiting, reading the replies meanwhile;
    returns how many were answered OK."""
    client = sdlib.Client(path, timeout=120)
    sender = threading.Thread(target=client.send, args=("".join(line + "\n" for line in lines),), daemon=True)
    sender.start()
    ok = 0
    try:
        for _ in lines:
            ok += client.read_reply()[-1].startswith("OK")
        sender.join(10)
    except ConnectionError:  # the daemon went away: the replies read so far count
        pass
    finally:
        client.close()
    return ok


def listed(client):
    """LIST and MODE as the page's snapshot() holds them."""
    lines = client.request("LIST")
    sections = []
    for line in lines[:-1]:
        _, _, ident, state, count, title = line.split(" ", 5)
        sections.append({"id": ident, "title": title, "count": int(count), "open": state == "open"})
    mode = client.request("MODE")[0].split()[1]
    return {"revision": int(lines[-1].split()[1]), "mode": mode, "sections": sections}


def held(driver):
    shown = driver.execute_script("return window.sectiondPage.snapshot()")
    return {key: shown[key] for key in ("revision", "mode", "sections")}


def snapshot_checks(context):
    driver, daemon, client, control = context.driver, context.daemon, context.client, context.control
    client.request("MODE multi")
    client.request(f"INSERT 0 {FLOOD_ID} Flood")
    settled(driver, client)
    counts = "return [window.sectiondPage.stats.events.state ?? 0, window.sectiondPage.stats.connections]"
    before = driver.execute_script(counts)
    pipes = pipe_pids(control.proc.pid)
    check(pipes, "the page's connection has its `sectionctl pipe` under websocketd", str(pipes))
    stopped = []
    try:
        for pid in pipes:
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
        # Every event of these goes to the stopped pipe's connection, which falls behind...
        ok = pipelined(daemon.socket, [f"TOGGLE {FLOOD_ID}"] * FLOOD_TOGGLES)
        # ...so these reach it only through the snapshot: the mode, and which sections are open.
        replies = [client.request(line) for line in ("MODE exclusive", "OPEN today", "RENAME today Today, caught up")]
        check(ok == FLOOD_TOGGLES and all(reply[-1].startswith("OK") for reply in replies),
              "a client makes thousands of changes and a mode switch while the page's pipe is stopped",
              f"{ok} of {FLOOD_TOGGLES} OK; {[reply[-1] for reply in replies]}")
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    after = wait_for(lambda: (lambda now: now[0] > before[0] and now)(driver.execute_script(counts)), 10)
    check(after and after[1] == before[1],
          "a page that fell behind gets a real !state from the daemon (on the same connection)",
          f"!state count and connections before {before}, after {after or driver.execute_script(counts)}")
    expected = listed(client)
    same = wait_for(lambda: held(driver) == expected, 10, 0.05)
    shown = held(driver)
    check(same, "after !state the page holds what LIST and MODE say (mode, open sections, titles, revision)",
          f"page mode {shown['mode']} rev {shown['revision']}, daemon mode {expected['mode']} "
          f"rev {expected['revision']}; open on the page "
          f"{[s['id'][:12] for s in shown['sections'] if s['open']]}, in the daemon "
          f"{[s['id'][:12] for s in expected['sections'] if s['open']]}")
    left = settled(driver, client, 10)
    check(not left, "after !state the page shows exactly what VIEW shows", "; ".join(left[:3]))
    client.request(f"DELETE {FLOOD_ID}")
    client.request("MODE multi")
    settled(driver, client)
