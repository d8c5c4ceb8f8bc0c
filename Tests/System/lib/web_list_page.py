"""The web page of one list as a browser shows it, for Tests/System/suites/lists.py (which runs
under pyenv's python3, without Debian's python3-selenium): loads URL in headless Chromium and
prints what the page shows as one JSON object, {"connected", "title", "bar", "sections":
[{"title", "expanded"}]}, after clicking the header of INDEX when given. Run with
/usr/bin/python3: web_list_page.py URL [INDEX].
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_lib import browser, header, load, page  # noqa: E402
from web_socket import wait_for  # noqa: E402


def main():
    url = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="sdlistpage.", dir="/tmp") as directory:
        driver = browser(directory)
        try:
            connected = load(driver, url, 15)
            if len(sys.argv) > 2 and connected:
                index = int(sys.argv[2])
                before = page(driver)["sections"][index]["expanded"]
                header(driver, index).click()
                wait_for(lambda: page(driver)["sections"][index]["expanded"] != before, 3)
            shown = page(driver)
            print(json.dumps({
                "connected": connected,
                "title": driver.title,
                "bar": driver.execute_script("return document.querySelector('.bar-title').textContent"),
                "sections": [{"title": s["title"], "expanded": s["expanded"]} for s in shown["sections"]],
                "status": shown["status"],
            }))
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
