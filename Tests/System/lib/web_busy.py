"""A daemon at --max-clients: its ERR BUSY reaches the page through
`sectionctl pipe`, which says it is busy rather than disconnected, and the page gets in once a
place is free. Run by Tests/System/suites/web.py with the browser the other checks use.
"""

import os

import sdlib
from web_lib import Websocketd, check, page, settled
from web_socket import wait_for


def busy_checks(context):
    driver = context.driver
    directory = os.path.join(context.directory, "busy")
    os.makedirs(directory, mode=0o755)
    daemon = sdlib.Daemon('{"sections":[{"id":"only","title":"Only"}]}', directory=directory,
                          extra_args=["--max-clients", "2"]).start()
    bridge = None
    held = []
    try:
        bridge = Websocketd(directory, "busy", ["--socket", daemon.socket]).start()
        for _ in range(2):
            client = daemon.connect()
            client.request("PING")
            held.append(client)
        driver.get(bridge.url)
        status = wait_for(lambda: "busy" in page(driver)["status"] and page(driver)["status"], 10)
        check(status and page(driver)["connection"] == "disconnected",
              "a busy daemon (--max-clients): the page says sectiond is busy, not that it is gone", str(status))
        check(not page(driver)["message"], "a busy daemon: no request shows as refused",
              str(page(driver)["message"]))
        for client in held:
            client.close()
        held = []
        client = daemon.connect()
        left = settled(driver, client, 15)
        check(not left, "once a place is free, the page gets in and shows the list", "; ".join(left[:3]))
        client.close()
    finally:
        for client in held:
            client.close()
        if bridge:
            bridge.stop()
        daemon.close()
