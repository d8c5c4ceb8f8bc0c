#!/usr/bin/env python3
"""Access levels on the sockets, as users of their own: read < operate < edit.

A root daemon serves a list with access rules (access.conf) naming test users by uid and
group by gid; its control socket is handed to group TEAM (as the unit hands it to group
sectiond), so the kernel lets in TEAM's members only. Each test user connects from a child
process that takes the user's uid and groups before connect(2), which is when the kernel
records who is at the other end (SO_PEERCRED, SO_PEERGROUPS); the child passes the socket
back, and the suite talks through it as that user.

- every request of each level allowed or refused as PROTOCOL.md's table says, and a refused
  one changes nothing: revision, events, history, state file;
- a BATCH mixing levels refused whole;
- STATUS tells each connection its level; the denials are logged with uid, pid and name;
- the read-only socket answers as before (ERR READONLY, its three STATUS facts);
- without rules the control socket is edit for whoever the kernel lets in; a user the
  socket's mode keeps out stays out whatever the rules say.

Needs root for the users; standard library only.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sdlib  # noqa: E402

if os.geteuid() != 0:
    print("SKIP access: switching users needs root")
    print("0 passed, 0 failed")
    sys.exit(0)

TEAM = 47100  # plays the group sectiond: who may connect to the control socket
EDITORS = 47101
OPERATOR, READER, EDITOR, MEMBER, OUTSIDER = 47001, 47002, 47003, 47004, 47005
RULES = f"""# who may do what on the control socket
user {OPERATOR} operate
user {READER} read
group {EDITORS} edit
"""
# (uid, supplementary groups) of each test user.
USERS = {OPERATOR: [TEAM], READER: [TEAM], EDITOR: [TEAM, EDITORS], MEMBER: [TEAM], OUTSIDER: []}

# Every request with the level it needs (PROTOCOL.md, "Access levels"); QUIT and SUBSCRIBE,
# which end or turn the conversation, are tried apart.
TABLE = [
    ("PING", "read"), ("VERSION", "read"), ("LIST", "read"), ("VIEW", "read"), ("ITEMS a", "read"),
    ("MODE", "read"), ("HELP", "read"), ("STATUS", "read"), ("HISTORY", "read"),
    ("HISTORY FROM 0", "read"), ("CLIENT NAME tester", "read"), ("UNSUBSCRIBE", "read"),
    ("OPEN a", "operate"), ("CLOSE a", "operate"), ("TOGGLE b", "operate"), ("TOGGLE b", "operate"),
    ("OPEN ALL", "operate"), ("CLOSE ALL", "operate"),
    ("MODE exclusive", "edit"), ("MODE multi", "edit"), ("INSERT end d D", "edit"), ("RENAME d Dee", "edit"),
    ("ITEM INSERT d end x", "edit"), ("ITEM SET d 0 y", "edit"), ("ITEM MOVE a 0 1", "edit"),
    ("ITEM DELETE d 0", "edit"), ("MOVE d 0", "edit"), ("DELETE d", "edit"), ("RELOAD", "edit"),
    ("RELOAD FRESH", "edit"),
]
ORDER = ["read", "operate", "edit"]


def start(rules=RULES):
    daemon = sdlib.Daemon(config=sdlib.config_json(["a", "b", "c"]))
    os.chmod(daemon.dir, 0o755)  # traversable by the test users, as /run/sectiond is
    if rules is not None:
        daemon.args += ["--access", daemon.write("access.conf", rules)]
    daemon.start()
    os.chown(daemon.socket, 0, TEAM)
    return daemon


class Watch:
    """What a refused request must not change: the revision, the events a subscriber hears,
    the history, and the state file with its journal."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.subscriber = daemon.connect(readonly=True)
        self.subscriber.request("SUBSCRIBE")
        self.admin = daemon.connect()

    def snapshot(self):
        files = []
        for name in ("", ".journal", ".journal.next"):
            try:
                with open(self.daemon.state + name, "rb") as f:
                    files.append(f.read())
            except FileNotFoundError:
                files.append(None)
        return (self.admin.request("LIST")[-1], self.admin.request("HISTORY 1000"), files)

    def events(self):
        """Events heard since the last call: a PING's answer comes after any event sent before it."""
        self.subscriber.request("PING")
        heard, self.subscriber.events = self.subscriber.events, []
        return heard


def levels(results):
    daemon = start()
    try:
        watch = Watch(daemon)
        for uid, level in ((READER, "read"), (OPERATOR, "operate"), (EDITOR, "edit")):
            client = sdlib.connect_as(daemon.socket, uid, USERS[uid])
            status = client.request("STATUS")
            results.check(status[0] == f"status access {level}",
                          f"STATUS tells uid {uid} its level {level}", status[0])
            wrong = []
            for line, needs in TABLE:
                watch.events()
                before = watch.snapshot()
                reply = client.request(line)[-1]
                allowed = ORDER.index(needs) <= ORDER.index(level)
                if allowed and reply.startswith("ERR DENIED"):
                    wrong.append(f"{line}: {reply}")
                if not allowed:
                    if not reply.startswith(f"ERR DENIED {needs} {level} "):
                        wrong.append(f"{line}: {reply}")
                    heard = watch.events()
                    if heard or watch.snapshot() != before:
                        wrong.append(f"{line} refused but changed something ({heard})")
            results.check(not wrong, f"uid {uid} at {level}: every request allowed or refused as the table says,"
                          " and the refused change nothing", "; ".join(wrong[:5]))
            client.close()
        log = daemon.log()
        results.check(f"refused a request of uid {READER}, pid " in log
                      and "name tester: DENIED operate read OPEN needs the operate level" in log,
                      "each denial is logged with uid, pid, name and the refusal",
                      [line for line in log.splitlines() if "refused" in line][:2])
        # Ten a second at most: the rest of the second's are counted when the next comes.
        time.sleep(1.1)
        operator = sdlib.connect_as(daemon.socket, OPERATOR, USERS[OPERATOR])
        operator.request("DELETE a")
        log = daemon.log()
        results.check("more refusals of requests above their level in the last second, not logged" in log
                      and f"refused a request of uid {OPERATOR}" in log,
                      "the denials are rate-limited, and the ones not logged counted",
                      [line for line in log.splitlines() if "not logged" in line])
    finally:
        daemon.close()


def batch(results):
    daemon = start()
    try:
        watch = Watch(daemon)
        operator = sdlib.connect_as(daemon.socket, OPERATOR, USERS[OPERATOR])
        before = watch.snapshot()
        reply = operator.request("BATCH", "OPEN a", "TOGGLE c", "DELETE b", "OPEN b", "END")
        results.check(reply == [reply[-1]] and reply[-1].startswith("ERR DENIED edit operate line 3 of the batch, DELETE"),
                      "a BATCH mixing levels is refused whole at END, naming the line", reply)
        results.check(not watch.events() and watch.snapshot() == before,
                      "nothing of the refused batch was applied: no event, revision, history or state")
        reply = operator.request("BATCH", "OPEN a", "TOGGLE c", "END")
        results.check(reply[-1] == "OK 2" and len(watch.events()) == 2,
                      "a BATCH of operate's requests goes through", reply)
    finally:
        daemon.close()


def readonly_socket(results):
    daemon = start()
    try:
        viewer = sdlib.connect_as(daemon.readonly_socket, OUTSIDER, USERS[OUTSIDER])
        reply = viewer.request("TOGGLE a")
        results.check(reply == ["ERR READONLY TOGGLE changes state; use the control socket"],
                      "the read-only socket still answers ERR READONLY, whoever connects", reply)
        status = viewer.request("STATUS")
        results.check([line.split()[1] for line in status[:-1]] == ["list", "systemd", "uptime"],
                      "the read-only socket's STATUS tells the same three facts", status)
    finally:
        daemon.close()


def defaults(results):
    daemon = start(rules=None)
    try:
        member = sdlib.connect_as(daemon.socket, MEMBER, USERS[MEMBER])
        results.check(member.request("STATUS")[0] == "status access edit",
                      "without rules a member of the socket's group is edit, as before")
        results.check(member.request("DELETE c")[-1].startswith("OK "), "and may edit")
    finally:
        daemon.close()
    daemon = start(rules=f"user {OUTSIDER} edit\n")
    try:
        try:
            sdlib.connect_as(daemon.socket, OUTSIDER, USERS[OUTSIDER])
            results.check(False, "a user the socket's mode keeps out stays out whatever the rules say")
        except PermissionError as error:
            results.check(error.errno == 13, "a user the socket's mode keeps out stays out whatever the rules say",
                          os.strerror(error.errno))
        member = sdlib.connect_as(daemon.socket, MEMBER, USERS[MEMBER])
        results.check(member.request("STATUS")[0] == "status access edit",
                      "a user no rule names is edit (no others rule)")
    finally:
        daemon.close()


PARTS = {"levels": levels, "batch": batch, "readonly-socket": readonly_socket, "defaults": defaults}

if __name__ == "__main__":
    sdlib.known_parts(PARTS, sys.argv[1:])
    sys.exit(sdlib.run_parts(PARTS, sys.argv[1:]))
