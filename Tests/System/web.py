"""The web page (web/) in a real Chromium, against a real sectiond and websocketd started here
(Tests/System/web.sh runs this with /usr/bin/python3, which has Debian's python3-selenium).

websocketd runs with the command line of systemd/sectiond-web.service.in (origin list, headers,
--binary), with this checkout's page and sectionctl in place of the installed ones. Every check
is on what the page shows (the DOM: titles, counts, aria-expanded, tiles, the status line) or on
what the daemon saw (a socket subscriber's events). Also `sectionctl pipe` on its own, the origin
checks with raw HTTP handshakes, and the speed figures for docs/PERFORMANCE.md.

Screenshots (light and dark) go to $WEB_SCREENSHOTS (default build/web-screenshots/).
"""

import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdlib  # noqa: E402
from web_socket import free_port, handshake, wait_for, ws_read_lines, ws_send_text  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

ROOT = sdlib.ROOT
SECTIONCTL = os.path.join(sdlib.build_dir(), "sectionctl")
HOSTILE_TITLE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> & "quotes"'
HOSTILE_ITEM = "<b>bold</b> <a href=javascript:alert(1)>link</a> &amp;"
results = sdlib.Results()
check = results.check


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


# --- websocketd as the unit runs it --------------------------------------------------------------

def unit_command(port, socket_args):
    """The unit's ExecStart, with this checkout's page and sectionctl and the given port and socket."""
    with open(os.path.join(ROOT, "systemd", "sectiond-web.service.in")) as f:
        line = next(line for line in f if line.startswith("ExecStart="))[len("ExecStart="):].strip()
    line = line.replace("${SECTIOND_WEB_PORT}", str(port))
    words = []
    for word in shlex.split(line):
        if word == "--socket":
            continue
        if word == "${SECTIOND_WEB_SOCKET}":
            words += socket_args
            continue
        words.append(word.replace("@DATADIR@/sectiond/web", os.path.join(ROOT, "web"))
                     .replace("@BINDIR@/sectionctl", SECTIONCTL))
    return words


class Websocketd:
    def __init__(self, directory, name, socket_args, port=None):
        self.port = port or free_port()
        self.command = unit_command(self.port, socket_args)
        self.log_path = os.path.join(directory, f"{name}.log")
        self.proc = None

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.command, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        ok = wait_for(self.accepts, 10)
        if not ok:
            raise RuntimeError(f"websocketd did not listen on {self.port}: {self.log()}")
        return self

    def accepts(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-2000:]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"


# --- the page as the DOM shows it ----------------------------------------------------------------

PAGE_JS = """
const sections = [...document.querySelectorAll('#sections > section')].map((root) => {
  const heading = root.firstElementChild;
  const button = heading.querySelector('button');
  const panel = document.getElementById(button.getAttribute('aria-controls'));
  return {
    heading: heading.tagName,
    title: button.querySelector('.title').textContent,
    count: button.querySelector('.count').textContent,
    expanded: button.getAttribute('aria-expanded'),
    disabled: button.getAttribute('aria-disabled'),
    panelOk: !!panel && panel.getAttribute('role') === 'region' &&
             panel.getAttribute('aria-labelledby') === button.id && root.contains(panel),
    hidden: panel ? panel.hidden : null,
    busy: panel ? panel.getAttribute('aria-busy') : null,
    items: panel && !panel.hidden ? [...panel.querySelectorAll('li')].map((li) => li.textContent) : null,
  };
});
return {
  connection: document.body.dataset.connection,
  status: document.getElementById('connection').textContent,
  revision: document.body.dataset.revision === undefined ? null : Number(document.body.dataset.revision),
  mode: document.body.dataset.mode || null,
  readonlyNote: !document.getElementById('readonly-note').hidden,
  message: document.getElementById('message').hidden ? null : document.getElementById('message').textContent,
  sections,
};
"""


def page(driver):
    return driver.execute_script(PAGE_JS)


def view(client):
    """VIEW as the page should show it: revision, and per section title, count text, expanded, items."""
    lines = client.request("VIEW")
    sections = []
    for line in lines[:-1]:
        match = re.match(r"section (\d+) (\S+) (open|closed) (\d+) (.*)$", line)
        if match:
            count = int(match[4])
            sections.append({"id": match[2], "title": match[5], "count": "1 item" if count == 1 else f"{count} items",
                             "expanded": "true" if match[3] == "open" else "false",
                             "items": [] if match[3] == "open" else None})
        else:
            sections[-1]["items"].append(line.split(" ", 3)[3])
    return int(lines[-1].split()[1]), sections


def differences(shown, expected):
    """What differs between the page and VIEW; empty when the page shows exactly what VIEW shows."""
    revision, sections = expected
    found = []
    if shown["revision"] != revision:
        found.append(f"revision {shown['revision']} != {revision}")
    if len(shown["sections"]) != len(sections):
        found.append(f"{len(shown['sections'])} sections shown, VIEW has {len(sections)}")
    for index, (mine, theirs) in enumerate(zip(shown["sections"], sections)):
        for key in ("title", "count", "expanded", "items"):
            if mine[key] != theirs[key]:
                found.append(f"section {index} {key}: {mine[key]!r} != {theirs[key]!r}")
        if mine["heading"] != "H2" or not mine["panelOk"] or mine["hidden"] != (theirs["expanded"] == "false"):
            found.append(f"section {index}: heading {mine['heading']}, panel wiring {mine['panelOk']}, "
                         f"hidden {mine['hidden']}")
    return found


def settled(driver, client, timeout=5.0):
    """Waits until the page shows exactly what VIEW shows; returns the differences left."""
    last = ["never compared"]

    def same():
        nonlocal last
        expected = view(client)
        shown = page(driver)
        last = differences(shown, expected)
        return not last and shown["connection"] == "connected"
    wait_for(same, timeout, 0.05)
    return last


class Subscriber:
    """A socket client that SUBSCRIBEs and collects events in the background."""

    def __init__(self, path):
        self.client = sdlib.Client(path, timeout=30)
        self.client.request("SUBSCRIBE")
        self.events = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while True:
            try:
                line = self.client.readline()
            except OSError:
                return
            if line is None:
                return
            with self.lock:
                self.events.append(line)

    def take(self):
        """Every event not yet taken, oldest first."""
        with self.lock:
            events, self.events = self.events, []
        return events

    def wait(self, pattern, timeout=3.0):
        """The first event matching `pattern` (a regex), waiting for it; None if none came.
        It and the events before it are taken; later ones stay for the next wait."""
        def found():
            with self.lock:
                for index, event in enumerate(self.events):
                    if re.match(pattern, event):
                        del self.events[:index + 1]
                        return event
            return None
        return wait_for(found, timeout)

    def close(self):
        self.client.close()


def browser(directory):
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=900,760", "--no-first-run", "--disable-extensions",
                     f"--user-data-dir={directory}/chromium"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    service = Service("/usr/bin/chromedriver", log_path=os.path.join(directory, "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_script_timeout(30)
    return driver


def load(driver, url, timeout=10):
    driver.get(url)
    return wait_for(lambda: page(driver)["connection"] == "connected", timeout)


def header(driver, index):
    return driver.find_elements(By.CSS_SELECTOR, "#sections > section button.header")[index]


def run(args, **kwargs):
    return subprocess.run([SECTIONCTL] + args, capture_output=True, text=True, timeout=20, **kwargs)


# --- the checks ---------------------------------------------------------------------------------

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
    readonly_checks(context)
    speed_checks(context)


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
    with open(os.path.join(daemon.dir, "sections.json")) as f:
        changed = json.load(f)
    changed["sections"].insert(0, {"id": "after-restart", "title": "After the restart", "items": ["new"]})
    with open(os.path.join(daemon.dir, "sections.json"), "w") as f:
        json.dump(changed, f)
    time.sleep(1.5)  # a few attempts fail while the daemon is down
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
        reply = driver.execute_async_script(
            "const done = arguments[0]; window.sectiondPage.request('TOGGLE 0').then(done, (e) => done(String(e)))")
        shown = page(driver)
        check(reply["status"].startswith("ERR READONLY") and "READONLY" in (shown["message"] or ""),
              "read-only bridge: the daemon refuses a change sent anyway, and the page shows its ERR",
              f"{reply['status']} / {shown['message']}")
        status, sock, rest = handshake(readonly.port, f"127.0.0.1:{readonly.port}", f"http://127.0.0.1:{readonly.port}")
        ws_send_text(sock, "OPEN 1")
        lines = ws_read_lines(sock, rest, lambda lines: any(line.startswith(("OK", "ERR")) for line in lines))
        sock.close()
        check(status == 101 and lines and lines[-1].startswith("ERR READONLY"),
              "read-only bridge: OPEN over a raw WebSocket gets ERR READONLY", str(lines))
    finally:
        subscriber.close()


def speed_checks(context):
    driver, daemon, client, control = context.driver, context.daemon, context.client, context.control
    load(driver, control.url)
    settled(driver, client)
    ids = [line.split()[2] for line in client.request("LIST")[:-1]]
    # 1,000 changes a second for 3 s from another client, while the page clicks every 50 ms.
    driver.execute_script("""
      window.sectiondPage.stats.clickToOk.length = 0;
      const buttons = [...document.querySelectorAll('button.header')].slice(-5);
      let n = 0;
      window.clicker = setInterval(() => buttons[n++ % buttons.length].click(), 50);""")
    burst = daemon.connect(timeout=30)
    changes = 0
    started = time.monotonic()
    random.seed(7)
    clicking = True
    while time.monotonic() - started < 3.0:
        # Whatever the schedule of 1,000 a second is owed, pipelined, then 5 ms to breathe.
        owed = int((time.monotonic() - started) * 1000) - changes
        lines = [f"TOGGLE {random.choice(ids[:-5])}" for _ in range(max(owed, 0))]
        burst.send("".join(line + "\n" for line in lines))
        for _ in lines:
            burst.read_reply()
        changes += len(lines)
        if clicking and time.monotonic() - started > 2.8:
            driver.execute_script("clearInterval(window.clicker)")
            clicking = False
        time.sleep(0.005)
    ended = time.monotonic()
    rate = changes / (ended - started)
    driver.execute_script("clearInterval(window.clicker)")

    def equal():
        # LIST each time: a click's TOGGLE still on its way changes the daemon and the page alike.
        listed = client.request("LIST")
        expected = [(m[5], "true" if m[3] == "open" else "false")
                    for m in (re.match(r"section (\d+) (\S+) (open|closed) (\d+) (.*)$", line)
                              for line in listed[:-1])]
        shown = page(driver)
        return shown["revision"] == int(listed[-1].split()[1]) and \
            [(s["title"], s["expanded"]) for s in shown["sections"]] == expected
    caught_up = wait_for(equal, 10, 0.01)
    lag = (time.monotonic() - ended) * 1000
    check(caught_up and lag < 1500, "after 1,000 changes a second the page equals LIST soon after "
          "(issue: 500 ms; asserted with margin: 1,500 ms)", f"{rate:.0f} changes/s, equal {lag:.0f} ms after")
    latencies = driver.execute_script("return window.sectiondPage.stats.clickToOk")
    p95 = sdlib.percentile(latencies, 95)
    check(len(latencies) >= 20 and p95 < 400, "a click during the burst: p95 from click to the daemon's OK "
          "(issue: 100 ms; asserted with margin for a loaded 2-core box: 400 ms)", f"{len(latencies)} clicks, p50 "
          f"{sdlib.percentile(latencies, 50):.0f} ms, p95 {p95:.0f} ms")
    print(f"FIGURE burst {rate:.0f} changes/s; page equal to LIST {lag:.0f} ms after the burst; "
          f"click-to-OK p50 {sdlib.percentile(latencies, 50):.1f} ms p95 {p95:.1f} ms "
          f"max {max(latencies):.1f} ms over {len(latencies)} clicks", flush=True)
    burst.close()

    # The 1,000 x 100 list.
    big = {"mode": "multi", "sections": [{"id": f"b{n}", "title": f"Section {n}", "open": n % 10 == 0,
                                          "items": [f"item {n}.{i}" for i in range(100)]} for n in range(1000)]}
    large = sdlib.Daemon(json.dumps(big), directory=tempfile.mkdtemp(prefix="sdwebl.", dir="/tmp"))
    large.own_dir = True
    large.start()
    bridge = Websocketd(context.directory, "large", ["--socket", large.socket]).start()
    try:
        figures = {}
        for name, setup in (("a tenth open (10,000 tiles)", None), ("all open (100,000 tiles)", "OPEN ALL")):
            if setup:
                with large.connect() as c:
                    c.request(setup)
            times = []
            for attempt in range(3):
                load(driver, bridge.url, 20)
                wait_for(lambda: driver.execute_script(
                    "const r = window.sectiondPage.stats.renders[0]; return r && r.complete !== null"), 20)
                times.append(driver.execute_script("return window.sectiondPage.stats.renders[0]"))
            best = min(times, key=lambda r: r["total"])
            figures[name] = times
            with large.connect() as c:
                left = differences(page(driver), view(c))
            totals = ", ".join(f"{t['total']:.0f}" for t in times)
            completes = ", ".join(f"{t['complete']:.0f}" for t in times)
            print(f"FIGURE 1000x100 {name}: first screen (VIEW sent to laid out) {totals} ms; "
                  f"every tile {completes} ms", flush=True)
            check(not left and best["total"] < 1500, f"the 1,000 x 100 list, {name}: renders "
                  "(issue: 500 ms; asserted with margin: 1,500 ms for the first screen) and equals VIEW",
                  f"best {best['total']:.0f} ms, all tiles {best['complete']:.0f} ms; {left[:2]}")
    finally:
        bridge.stop()
        large.close()


if __name__ == "__main__":
    sys.exit(main())
