"""What Tests/System/suites/web.py's checks stand on: websocketd started with the unit's command line,
the page read from the DOM, VIEW read from the daemon and the two compared, a socket subscriber,
the browser. Also the one Results every web check counts in.
"""

import os
import re
import shlex
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdlib  # noqa: E402
from web_socket import free_port, wait_for  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

ROOT = sdlib.ROOT
SECTIONCTL = os.path.join(sdlib.build_dir(), "sectionctl")
results = sdlib.Results()
check = results.check


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


def page_request(driver, line):
    """`line` sent through the page's own connection (window.sectiondPage.request, as a console
    or a crafted page could); returns the reply and the page as it shows it after."""
    reply = driver.execute_async_script(
        f"const done = arguments[0]; window.sectiondPage.request({line!r}).then(done, (e) => done(String(e)))")
    return reply, page(driver)


def header(driver, index):
    return driver.find_elements(By.CSS_SELECTOR, "#sections > section button.header")[index]


def run(args, **kwargs):
    return subprocess.run([SECTIONCTL] + args, capture_output=True, text=True, timeout=20, **kwargs)
