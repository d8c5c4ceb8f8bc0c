#!/usr/bin/python3
"""The web page (web/) in a real Chromium, against a real sectiond and websocketd started here
(run by /usr/bin/python3, which has Debian's python3-selenium; the browser's packages are installed
first when missing).

websocketd runs with the command line of systemd/sectiond-web.service.in (origin list, headers,
--binary), with this checkout's page and sectionctl in place of the installed ones. Every check
is on what the page shows (the DOM: titles, counts, aria-expanded, tiles, the status line) or on
what the daemon saw (a socket subscriber's events). Also the origin checks with raw HTTP
handshakes, `sectionctl pipe` on its own (web_pipe.py), a real `!state` after the page's
connection fell behind (web_snapshot.py), the operate option: a bridge at the operate level
toggles and is refused edits (web_operate.py), and the speed figures for
docs/PERFORMANCE.md (web_speed.py); web_lib.py has what they share.

Screenshots (light and dark) go to $WEB_SCREENSHOTS (default build/web-screenshots/).
"""

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sdlib  # noqa: E402

BROWSER_TOOLS = ["websocketd", "chromium", "chromedriver", "curl"]
if not all(shutil.which(tool) for tool in BROWSER_TOOLS) or importlib.util.find_spec("selenium") is None:
    subprocess.run([os.path.join(sdlib.ROOT, "scripts", "deps.sh"), "--test"], stdout=sys.stderr)
    sdlib.require(BROWSER_TOOLS, modules=["selenium"], fix="run scripts/deps.sh --test as root")
from web_lib import (ROOT, Subscriber, Websocketd, browser, check, header, load, page, page_request,  # noqa: E402
                     results, run, settled, view)
from web_busy import busy_checks  # noqa: E402
from web_operate import operate_checks  # noqa: E402
from web_pipe import pipe_checks  # noqa: E402
from web_snapshot import snapshot_checks  # noqa: E402
from web_socket import free_port, handshake, wait_for, ws_read_lines, ws_request, ws_send_text  # noqa: E402
from web_speed import speed_checks  # noqa: E402

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

HOSTILE_TITLE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> & "quotes"'
HOSTILE_ITEM = "<b>bold</b> <a href=javascript:alert(1)>link</a> &amp;"


def config(mode="multi"):
    sections = [
        {"id": "inbox", "title": "Inbox", "items": ["Invoice 2024-117 from Acme", "Team offsite agenda",
                                                    "Re: build is green again"], "open": True},
        {"id": "today", "title": "Today", "items": ["Stand-up at 09:30", "Review pull request #42",
                                                    "Call the plumber", "Water the plants"]},
        {"id": "projects", "title": "Projects & Ideas", "items": ["sectiond: web page", "Garden shed",
                                                                  "Learn the accordion"]},
        {"id": "someday", "title": "Someday / Maybe", "items": ["Visit Lisbon", "Read a long book"]},
    ]
    sections += [{"id": f"s{n}", "title": f"Section {n}", "items": [f"item {n}.{i}" for i in range(n % 7)]}
                 for n in range(4, 40)]
    return json.dumps({"mode": mode, "sections": sections})


def origin_checks(bridge):
    port = bridge.port
    cases = [
        ("a cross-site page (Origin: another site)", f"127.0.0.1:{port}", f"http://evil.example:{port}", 403),
        ("DNS rebinding (Host and Origin both the attacker's name)", f"evil.example:{port}",
         f"http://evil.example:{port}", 403),
        ("another local port's page", f"127.0.0.1:{port}", f"http://127.0.0.1:{free_port()}", 403),
        ("an opaque origin (null: sandboxed frames, file: pages)", f"127.0.0.1:{port}", "null", 403),
        ("the page's own origin, 127.0.0.1", f"127.0.0.1:{port}", f"http://127.0.0.1:{port}", 101),
        ("the page's own origin, localhost", f"localhost:{port}", f"http://localhost:{port}", 101),
    ]
    for name, host, origin, wanted in cases:
        status, sock, _ = handshake(port, host, origin)
        sock.close()
        check(status == wanted, f"origin: {name} gets {wanted}", f"got {status}")
    status, sock, rest = handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
    try:
        ws_send_text(sock, "PING")
        lines = ws_read_lines(sock, rest, lambda lines: "OK" in lines)
        check("OK" in lines, "a WebSocket from the page's origin speaks the protocol (PING, OK)", str(lines))
    finally:
        sock.close()
    fetched = subprocess.run(["curl", "-sS", "-D", "-", "-o", "/dev/null", bridge.url],
                             capture_output=True, text=True, timeout=10).stdout
    check("X-Frame-Options: DENY" in fetched and "frame-ancestors 'none'" in fetched,
          "the page may not be framed by other sites (X-Frame-Options, CSP frame-ancestors)", fetched[:120])


def main():
    sdlib.require_binary()
    directory = tempfile.mkdtemp(prefix="sdweb.", dir="/tmp")
    shots = os.environ.get("WEB_SCREENSHOTS") or os.path.join(ROOT, "build", "web-screenshots")
    os.makedirs(shots, exist_ok=True)
    daemon = sdlib.Daemon(config(), directory=directory).start()
    bridges = []
    driver = None
    try:
        pipe_checks(daemon)
        control = Websocketd(directory, "control", ["--socket", daemon.socket]).start()
        readonly = Websocketd(directory, "readonly", ["--readonly-socket", daemon.readonly_socket]).start()
        bridges += [control, readonly]
        origin_checks(control)

        driver = browser(directory)
        client = daemon.connect()
        started = time.monotonic()
        loaded = load(driver, control.url, 15)
        check(loaded, "the page connects and reads the list", f"{time.monotonic() - started:.2f} s")
        left = settled(driver, client)
        check(not left, "the page shows exactly what VIEW shows (titles, counts, aria-expanded, tiles)",
              "; ".join(left[:5]))
        context = Context(driver=driver, daemon=daemon, client=client, control=control, readonly=readonly,
                          directory=directory, shots=shots)
        browser_checks(context)
        context.client.close()
    except Exception as error:  # a crash is a failure, with what was running
        import traceback
        traceback.print_exc()
        check(False, "the suite ran to the end", repr(error))
    finally:
        if driver:
            try:
                driver.quit()
            except Exception:
                pass
        for bridge in bridges:
            bridge.stop()
        daemon.close()
        shutil.rmtree(directory, ignore_errors=True)
    return results.finish()


class Context:
    """What the browser checks share; restart_checks replaces the client (its daemon restarted)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def browser_checks(context):
    subscriber = Subscriber(context.daemon.socket)
    try:
        interaction_checks(context, subscriber)
    finally:
        subscriber.close()
    screenshot_checks(context)
    edit_checks(context)
    restart_checks(context)
    snapshot_checks(context)
    readonly_checks(context)
    operate_checks(context)
    speed_checks(context)
    named_list_checks(context)
    busy_checks(context)
    # Nothing went wrong in the page: no script error, no resource refused (by the CSP, say).
    # Chromium logs each failed WebSocket attempt while a restart is under way; those are expected.
    errors = [entry["message"] for entry in context.driver.get_log("browser")
              if entry["level"] == "SEVERE" and "WebSocket connection to" not in entry["message"]]
    check(not errors, "the browser's console has no errors", "; ".join(errors[:3]))


def named_list_checks(context):
    """?list=NAME: the same bridge shows the list NAME, whose sockets are in the
    directory NAME beside the bridge's socket, as sectiond --list NAME puts them; a click
    changes that list, not the other; a bad name gets no list."""
    driver = context.driver
    os.makedirs(os.path.join(context.directory, "media"), mode=0o755)
    media = sdlib.Daemon(json.dumps({"sections": [{"id": "players", "title": "Players", "items": ["Living room"]},
                                                  {"id": "radio", "title": "Radio", "items": []}]}),
                         directory=os.path.join(context.directory, "media")).start()
    try:
        client = media.connect()
        loaded = load(driver, context.control.url + "?list=media", 15)
        left = settled(driver, client)
        shown = driver.execute_script("return [document.title, document.querySelector('.bar-title').textContent]")
        check(loaded and not left and shown == ["media · sectiond", "media"],
              "?list=media: the page shows the list media (VIEW of its daemon) and says its name",
              f"{shown} {left[:3]}")
        before = context.client.request("LIST")
        header(driver, 0).click()
        opened = wait_for(lambda: client.request("LIST")[0].startswith("section 0 players open"), 3)
        check(opened and context.client.request("LIST") == before,
              "a click on ?list=media opens the section in media, the unnamed list is unchanged")
        client.close()
        load(driver, context.control.url + "?list=..%2Fx", 3)
        status = wait_for(lambda: "not answering" in page(driver)["status"] and page(driver)["status"], 5)
        check(status, "?list=../x: the bridge refuses the name and the page has no list", str(status))
    finally:
        media.close()


def interaction_checks(context, subscriber):
    driver, daemon, client = context.driver, context.daemon, context.client
    subscriber.take()
    header(driver, 1).click()
    event = subscriber.wait(r"!opened \d+ 1 today$")
    check(event is not None, "a click on a header opens the section in the daemon (a subscriber sees !opened)")
    check(not settled(driver, client), "the page follows the click (aria-expanded true, tiles shown)")

    button = header(driver, 2)
    button.send_keys(Keys.ENTER)
    check(subscriber.wait(r"!opened \d+ 2 projects$") is not None,
          "Enter on a focused header opens it in the daemon")
    header(driver, 2).send_keys(Keys.SPACE)
    check(subscriber.wait(r"!closed \d+ 2 projects$") is not None, "Space on a focused header closes it")
    ActionChains(driver).send_keys(Keys.TAB).perform()
    focused = driver.execute_script("return document.activeElement.id")
    check(focused == header(driver, 3).get_attribute("id"), "Tab moves from one header to the next",
          f"focus on {focused!r}")
    check(not settled(driver, client), "aria-expanded equals the daemon's state after keys")

    # A change made with sectionctl appears within 200 ms: a MutationObserver stamps the moment.
    driver.execute_script("""
      window.changes = [];
      new MutationObserver((records) => { for (const r of records) window.changes.push(Date.now()); })
        .observe(document.getElementById('sections'), { attributes: true, subtree: true,
                                                        attributeFilter: ['aria-expanded'] });""")
    latencies = []
    for attempt in range(6):
        driver.execute_script("window.changes = []")
        started = time.time() * 1000
        run(["--socket", daemon.socket, "toggle", "someday"])
        stamp = wait_for(lambda: driver.execute_script("return window.changes[0]"), 3)
        latencies.append(stamp - started if stamp else 9999)
    latencies.sort()
    median = latencies[len(latencies) // 2]
    check(median < 200, "a change made with sectionctl is on the page within 200 ms (median of 6, "
          "from starting sectionctl)", f"median {median:.0f} ms, worst {latencies[-1]:.0f} ms")
    print(f"FIGURE sectionctl-to-page median {median:.0f} ms, worst {latencies[-1]:.0f} ms", flush=True)

    # Exclusive mode: the page is an accordion.
    client.request("CLOSE ALL")
    client.request("MODE exclusive")
    wait_for(lambda: page(driver)["mode"] == "exclusive", 3)
    subscriber.take()
    header(driver, 0).click()
    subscriber.wait(r"!opened \d+ 0 inbox$")
    header(driver, 3).click()
    closed = subscriber.wait(r"!closed \d+ 0 inbox$")
    opened = subscriber.wait(r"!opened \d+ 3 someday$")
    left = settled(driver, client)
    expanded = [s["expanded"] for s in page(driver)["sections"]]
    check(closed and opened and not left and expanded.count("true") == 1 and expanded[3] == "true",
          "exclusive mode: opening one header closes the other, on the page as in the daemon",
          f"{closed} {opened} {left[:3]}")
    check("one open at a time" in driver.find_element(By.ID, "mode").text, "the page says which mode it is in")
    client.request("MODE multi")


def edit_checks(context):
    driver, daemon, client = context.driver, context.daemon, context.client
    edits = [
        ("insert", ["INSERT 1 news News"]),
        ("rename", ["RENAME news Latest news"]),
        ("items: insert (open section)", ["OPEN news", "ITEM INSERT news end Call Bob", "ITEM INSERT news 0 First"]),
        ("items: set", ["ITEM SET news 1 Call Alice"]),
        ("items: move", ["ITEM MOVE news 0 1"]),
        ("items: delete", ["ITEM DELETE news 0"]),
        ("items of a closed section, then opened", ["CLOSE news", "ITEM INSERT news end Later", "OPEN news"]),
        ("move", ["MOVE news 5"]),
        ("delete", ["DELETE news"]),
        ("batch", ["BATCH", "INSERT 0 a A", "INSERT 0 b B", "MOVE a 0", "ITEM INSERT b end x", "OPEN b", "END"]),
    ]
    for name, requests in edits:
        if requests[0] == "BATCH":
            replies = [batch(client, requests[1:-1])]
        else:
            replies = [client.request(line) for line in requests]
        ok = all(reply[-1].startswith("OK") for reply in replies)
        left = settled(driver, client)
        check(ok and not left, f"edit event reflected: {name}", f"{replies[-1][-1]} {'; '.join(left[:3])}")
    batch(client, ["DELETE a", "DELETE b"])

    # Reload with a changed config: !reload, and the page reads the list again.
    with open(os.path.join(daemon.dir, "sections.json")) as f:
        changed = json.load(f)
    changed["sections"].insert(2, {"id": "added", "title": "Added by reload", "items": ["one", "two"], "open": True})
    with open(os.path.join(daemon.dir, "sections.json"), "w") as f:
        json.dump(changed, f)
    reply = client.request("RELOAD")
    left = settled(driver, client)
    check(reply[-1].startswith("OK") and not left, "reload: a section the config adds appears, open",
          f"{reply} {left[:3]}")

    # Daemon text is text: titles and items that are HTML and script show as written.
    client.request(f"INSERT 0 xss {HOSTILE_TITLE}")
    client.request(f"ITEM INSERT xss end {HOSTILE_ITEM}")
    client.request("OPEN xss")
    left = settled(driver, client)
    injected = driver.execute_script(
        "return [document.querySelectorAll('#sections img, #sections script, #sections b, #sections a').length,"
        " window.pwned === undefined]")
    first = page(driver)["sections"][0]
    check(not left and injected == [0, True] and first["title"] == HOSTILE_TITLE and first["items"] == [HOSTILE_ITEM],
          "titles and items that are HTML or script are shown as text, never run",
          f"{injected} {first['title']!r} {left[:2]}")
    client.request("DELETE xss")
    settled(driver, client)


def batch(client, lines):
    client.send("BATCH\n" + "".join(line + "\n" for line in lines) + "END\n")
    return client.read_reply()


def screenshot_checks(context):
    driver, client, shots = context.driver, context.client, context.shots
    client.request("CLOSE ALL")
    for ref in ("inbox", "projects"):
        client.request(f"OPEN {ref}")
    settled(driver, client)
    driver.execute_script("window.scrollTo(0, 0); document.activeElement.blur()")
    # No hover highlight, no chevron half-turned.
    driver.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 1, "y": 700})
    time.sleep(0.4)
    paths = {}
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        paths[scheme] = os.path.join(shots, f"web-{scheme}.png")
        driver.save_screenshot(paths[scheme])
        expected = "rgb(0, 0, 0)" if scheme == "dark" else "rgb(242, 242, 247)"
        check(background == expected and os.path.getsize(paths[scheme]) > 10000,
              f"screenshot, {scheme} (prefers-color-scheme: {scheme}): {paths[scheme]}", background)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    sizes = driver.execute_script("""return [...document.querySelectorAll('button.header, li.tile')]
        .filter((e) => e.offsetParent).map((e) => e.getBoundingClientRect().height)""")
    check(sizes and min(sizes) >= 44, "headers and tiles are touch-sized (at least 44 px tall)",
          f"smallest {min(sizes) if sizes else None} px")


def restart_checks(context):
    driver, daemon, client, control = context.driver, context.daemon, context.client, context.control
    # The daemon stops (outside systemd: !bye shutdown and end of file) and comes back with a
    # changed config; the page says it is disconnected, reconnects and shows the new list.
    client.close()
    daemon.kill(signal.SIGTERM)
    disconnected = wait_for(lambda: page(driver)["connection"] == "disconnected", 5)
    status = page(driver)["status"]
    check(disconnected and "retrying" in status, "a stopped daemon: the page says so and retries", status)
    # The next attempts reach websocketd, whose pipe finds no daemon and exits at once.
    status = wait_for(lambda: "not answering" in page(driver)["status"] and page(driver)["status"], 5)
    check(status, "the page tells a bridge without its daemon from a lost connection", str(status))
    with open(os.path.join(daemon.dir, "sections.json")) as f:
        changed = json.load(f)
    changed["sections"].insert(0, {"id": "after-restart", "title": "After the restart", "items": ["new"]})
    with open(os.path.join(daemon.dir, "sections.json"), "w") as f:
        json.dump(changed, f)
    time.sleep(1)  # more attempts fail while the daemon is down
    daemon.start()
    client = daemon.connect()
    started = time.monotonic()
    left = settled(driver, client, 15)
    took = time.monotonic() - started
    check(not left, "daemon restart: the page reconnects and shows the new list", f"{took:.1f} s; {left[:3]}")
    run(["--socket", daemon.socket, "toggle", "after-restart"])
    check(not settled(driver, client), "after the daemon restart, changes reach the page again")

    # websocketd restarts (the unit restarts, say) while the list changes.
    control.stop()
    wait_for(lambda: page(driver)["connection"] == "disconnected", 5)
    client.request("TOGGLE after-restart")
    client.request("RENAME inbox Inbox (while the bridge was down)")
    control.start()
    started = time.monotonic()
    left = settled(driver, client, 15)
    check(not left, "websocketd restart: the page reconnects and catches up with what changed meanwhile",
          f"{time.monotonic() - started:.1f} s; {left[:3]}")
    caught = driver.execute_script("return window.sectiondPage.stats.catchUps")
    check(caught["replayed"] >= 1, "the page caught up with SUBSCRIBE FROM: the missed changes replayed, no snapshot",
          str(caught))
    context.client = client


def readonly_checks(context):
    driver, daemon, client, readonly = context.driver, context.daemon, context.client, context.readonly
    subscriber = Subscriber(daemon.socket)
    try:
        load(driver, readonly.url)
        left = settled(driver, client)
        shown = page(driver)
        check(not left and shown["readonlyNote"] and all(s["disabled"] == "true" for s in shown["sections"]),
              "read-only bridge: the page shows the list, says it is read-only, offers no change",
              f"{left[:2]} note {shown['readonlyNote']}")
        revision = view(client)[0]
        subscriber.take()
        header(driver, 0).click()
        header(driver, 1).send_keys(Keys.ENTER)
        time.sleep(0.5)
        shown = page(driver)
        check(view(client)[0] == revision and not [e for e in subscriber.take() if not e.startswith("!state")]
              and shown["message"] and "read-only" in shown["message"],
              "read-only bridge: a click changes nothing and the page says why", str(shown["message"]))
        reply, shown = page_request(driver, "TOGGLE 0")
        check(reply["status"].startswith("ERR READONLY") and "READONLY" in (shown["message"] or ""),
              "read-only bridge: the daemon refuses a change sent anyway, and the page shows its ERR",
              f"{reply['status']} / {shown['message']}")
        status, lines = ws_request(readonly.port, "OPEN 1")
        check(status == 101 and lines and lines[-1].startswith("ERR READONLY"),
              "read-only bridge: OPEN over a raw WebSocket gets ERR READONLY", str(lines))
    finally:
        subscriber.close()




if __name__ == "__main__":
    sys.exit(main())
