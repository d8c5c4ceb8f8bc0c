"""The page under the operate option (sectiond-web.service's operate drop-in and rule, make web's
WEB_OPERATE=1): its bridge's connection to the control socket has the operate level, granted by
the daemon's access rules (--access), so a click on a header toggles its section and an edit sent
through the page's WebSocket anyway is refused with ERR DENIED, changing nothing; the origin
checks stay. A bridge at the read level shows the page read-only. Run by
Tests/System/suites/web.py with the browser the other checks use; the daemons are its own.
"""

import os
import shutil

import sdlib
from web_lib import ROOT, SECTIONCTL, Websocketd, check, header, load, page, page_request, settled, Subscriber
from web_socket import handshake, ws_request

CONFIG = '{"sections":[{"id":"one","title":"One","items":["a"]},{"id":"two","title":"Two","items":["b"]}]}'


# Root always edits (an access rule cannot lower it), so run as root the bridge runs as nobody,
# as sectiond-web.service runs it as a user of its own; as another user, as that user.
BRIDGE_UID = 65534 if os.getuid() == 0 else os.getuid()


def leveled_daemon(directory, level):
    """A daemon whose control socket gives the bridge's user `level`."""
    os.makedirs(directory, mode=0o755)
    daemon = sdlib.Daemon(CONFIG, directory=directory)
    daemon.args += ["--access", daemon.write("access.conf", f"user {BRIDGE_UID} {level}\n")]
    daemon.start()
    if BRIDGE_UID != os.getuid():
        # The kernel's check of who may connect is not what these checks are about: nobody may.
        os.chmod(daemon.socket, 0o666)
    return daemon


def bridge_for(directory, name, daemon):
    """websocketd as the unit runs it, on `daemon`'s control socket, as BRIDGE_UID: from copies of
    the page and sectionctl in `directory` when that is another user, who may not reach the
    checkout's."""
    bridge = Websocketd(directory, name, ["--socket", daemon.socket])
    if BRIDGE_UID != os.getuid():
        web, sectionctl = os.path.join(directory, "web"), os.path.join(directory, "sectionctl")
        if not os.path.exists(web):
            shutil.copytree(os.path.join(ROOT, "web"), web)
            shutil.copy2(SECTIONCTL, sectionctl)
            os.chmod(directory, 0o755)
        bridge.command = ["setpriv", f"--reuid={BRIDGE_UID}", f"--regid={BRIDGE_UID}", "--clear-groups", "--"] + [
            {SECTIONCTL: sectionctl}.get(word, word.replace(os.path.join(ROOT, "web"), web))
            for word in bridge.command]
    return bridge.start()


def operate_checks(context):
    driver = context.driver
    daemon = leveled_daemon(os.path.join(context.directory, "operate"), "operate")
    bridge = None
    reader = sdlib.Client(daemon.readonly_socket, timeout=10)
    subscriber = Subscriber(daemon.readonly_socket)
    try:
        bridge = bridge_for(context.directory, "operate", daemon)
        loaded = load(driver, bridge.url, 15)
        shown = page(driver)
        check(loaded and not settled(driver, reader) and not shown["readonlyNote"]
              and all(s["disabled"] != "true" for s in shown["sections"]),
              "operate bridge: the page shows the list and offers its headers", str(shown["readonlyNote"]))
        subscriber.take()
        header(driver, 1).click()
        check(subscriber.wait(r"!opened 1 1 two$") is not None and not settled(driver, reader),
              "operate bridge: a click on a header opens its section in the daemon, and the page follows")

        revision = reader.request("VIEW")[-1]
        reply, shown = page_request(driver, "DELETE one")
        check(reply["status"].startswith("ERR DENIED edit operate") and "DENIED" in (shown["message"] or ""),
              "operate bridge: an edit the page is made to send is refused (ERR DENIED edit operate), and shown",
              f"{reply['status']} / {shown['message']}")
        answers = {line: ws_request(bridge.port, line) for line in ("INSERT 0 x X", "RELOAD FRESH", "MODE exclusive",
                                                                "BATCH\nOPEN one\nDELETE two\nEND")}
        check(all(status == 101 and lines and lines[-1].startswith("ERR DENIED edit operate")
                  for status, lines in answers.values()),
              "operate bridge: edits, RELOAD FRESH, MODE and a batch with an edit, sent over a raw WebSocket of"
              " the page's origin, are refused with ERR DENIED", str(answers))
        check(reader.request("VIEW")[-1] == revision and not subscriber.take(),
              "... and change nothing (the revision stays, no event)", revision)
        status, sock, _ = handshake(bridge.port, f"127.0.0.1:{bridge.port}", f"http://evil.example:{bridge.port}")
        sock.close()
        check(status == 403, "operate bridge: a cross-site Origin still gets 403", str(status))
    finally:
        subscriber.close()
        reader.close()
        if bridge:
            bridge.stop()
        daemon.close()

    daemon = leveled_daemon(os.path.join(context.directory, "read-level"), "read")
    bridge = None
    reader = sdlib.Client(daemon.readonly_socket, timeout=10)
    try:
        bridge = bridge_for(context.directory, "read-level", daemon)
        loaded = load(driver, bridge.url, 15)
        settled(driver, reader)
        shown = page(driver)
        check(loaded and shown["readonlyNote"] and all(s["disabled"] == "true" for s in shown["sections"]),
              "a bridge at the read level on the control socket: the page says it is read-only, offers no change",
              str(shown["readonlyNote"]))
    finally:
        reader.close()
        if bridge:
            bridge.stop()
        daemon.close()
