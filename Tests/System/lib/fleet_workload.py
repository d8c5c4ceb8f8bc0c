"""Clients changing a fleet's list at once, and the checks of what they were told against what
every host kept: the fault suites' workload and checker (Tests/System/suites/fleet-faults.py).

    workload = Workload(fleet, tag="a", clients_per_host=3)
    base = workload.start()          # subscribers on every host, then the clients
    time.sleep(3)                    # ... break something meanwhile ...
    workload.stop()
    verify(results, "label", fleet, workload)

Each client is a thread with a connection of its own, named with CLIENT NAME (`a0x1`: tag, host,
number), that sends one change at a time (TOGGLE, OPEN, CLOSE of the first four sections, and
with inserts=True INSERT of an id made once, never again) and records when it sent it, when the
reply came and the reply. A connection that breaks (its host killed) makes the change's outcome
unknown; the client connects again until the host is back.

verify() reads every host's HISTORY after the workload's first revision and checks, as Jepsen's
Elle checks a version order:
- every host's history is the same, and its revisions follow one another without a gap or a
  repeat; replayed from the list as it was, every event is possible (a section opens only when
  closed) and names the host its change came through;
- each acknowledged change is the history's record at its revision (its client's name, its
  section, its kind), and each reply's section line is the list as the history has it there;
- each client's records are its acknowledged changes, and only those: a record no reply claims
  is a change applied twice, or one refused as "nothing was applied" that was applied (an
  unknown outcome, a broken connection or an ERR UNAVAILABLE saying it may be applied, may
  claim one record before the client's next acknowledged change);
- real-time order: a change acknowledged before another change was sent has the lower
  revision; a request that changed nothing (OPEN of an open section) answers no revision older
  than a change its own host acknowledged before it was sent;
- every subscriber got the history's events, in order, and so the same events on every host.
Standard library only.
"""

import random
import threading
import time

from fleet_lab import FleetError, event_revision

# A reply waits at most 10 s for etcd (docs/FLEET.md, "Failures"); the margin is for a loaded machine.
REPLY_TIMEOUT = 20.0
SECTIONS = 4


class Op:
    """One request of a client: what, when sent and answered, and the reply (None: no reply)."""

    def __init__(self, client, host, line, sent):
        self.client = client
        self.host = host
        self.line = line
        self.sent = sent
        self.acked = None
        self.reply = None

    @property
    def revision(self):
        """The OK's revision, or None for a refusal or no reply."""
        if self.reply and self.reply[-1].startswith("OK "):
            return int(self.reply[-1].split()[1])
        return None

    @property
    def unknown(self):
        """No reply, or a refusal that does not say nothing was applied."""
        if self.reply is None:
            return True
        return self.reply[-1].startswith("ERR UNAVAILABLE") and "nothing was applied" not in self.reply[-1]

    def __repr__(self):
        reply = self.reply[-1] if self.reply else "no reply"
        return f"{self.client}@h{self.host} {self.line!r} -> {reply!r} (sent {self.sent:.3f}, answered {self.acked})"


class Client(threading.Thread):
    def __init__(self, workload, host, number, seed):
        super().__init__(daemon=True)
        self.workload = workload
        self.host = host
        self.name_ = f"{workload.tag}{host}x{number}"
        self.random = random.Random(seed)
        self.ops = []
        self.inserted = 0

    def next_line(self):
        roll = self.random.random()
        section = self.random.randrange(SECTIONS)
        if self.workload.inserts and roll < 0.3:
            self.inserted += 1
            return f"INSERT end {self.name_}-{self.inserted} Inserted by {self.name_}"
        if roll < 0.6:
            return f"TOGGLE {section}"
        return f"{'OPEN' if roll < 0.8 else 'CLOSE'} {section}"

    def run(self):
        host = self.workload.fleet.hosts[self.host]
        connection = None
        while not self.workload.stopping.is_set():
            if connection is None:
                try:
                    connection = host.connect(timeout=REPLY_TIMEOUT)
                    if connection.request(f"CLIENT NAME {self.name_}") != ["OK"]:
                        raise ConnectionError("CLIENT NAME refused")
                except OSError:
                    if connection is not None:
                        connection.close()
                        connection = None
                    time.sleep(0.05)
                    continue
            op = Op(self.name_, self.host, self.next_line(), time.monotonic())
            try:
                op.reply = connection.request(op.line)
                op.acked = time.monotonic()
            except OSError:
                connection.close()
                connection = None
            self.ops.append(op)
        if connection is not None:
            connection.close()


class Collector(threading.Thread):
    """Reads a subscription's events as they come, so that it never falls behind (a subscriber
    that does gets `!state`, which is not what is checked)."""

    def __init__(self, subscription):
        super().__init__(daemon=True)
        self.subscription = subscription
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                self.subscription.next_event(0.2)
            except Exception:  # a broken subscription: its events stop, which verify() reports
                return

    def stop(self):
        self.stopping.set()
        self.join()


class Workload:
    def __init__(self, fleet, tag, clients_per_host=3, inserts=False, hosts=None):
        self.fleet = fleet
        self.tag = tag
        self.inserts = inserts
        self.hosts = list(range(len(fleet.hosts))) if hosts is None else hosts
        self.stopping = threading.Event()
        self.clients = [
            Client(self, host, number, seed=hash((tag, host, number)))
            for host in self.hosts
            for number in range(clients_per_host)
        ]
        self.collectors = {}
        self.base = None
        self.initial = None

    def start(self):
        """Waits for the hosts to agree, subscribes on each, starts the clients; returns the
        revision they started from."""
        self.base = self.fleet.converged()
        self.initial = list_state(self.fleet.hosts[0])
        if self.initial[0] != self.base:
            raise RuntimeError(f"host 0 moved from {self.base} to {self.initial[0]} with no client")
        for index in self.hosts:
            collector = Collector(self.fleet.hosts[index].subscribe())
            collector.start()
            self.collectors[index] = collector
        for client in self.clients:
            client.start()
        return self.base

    def stop(self):
        """Stops the clients (each after its request under way is answered) and the collectors."""
        self.stopping.set()
        for client in self.clients:
            client.join(REPLY_TIMEOUT + 5)
        for collector in self.collectors.values():
            collector.stop()

    def ops(self):
        return [op for client in self.clients for op in client.ops]

    def host_ops(self, host):
        return [op for op in self.ops() if op.host == host]


def list_state(host):
    """(revision, [section ids], {open ids}) as LIST on `host` says."""
    reply = host.request("LIST")
    ids, opened = [], set()
    for line in reply[:-1]:
        words = line.split(" ")
        ids.append(words[2])
        if words[3] == "open":
            opened.add(words[2])
    return int(reply[-1].split()[1]), ids, opened


def parse_history(lines):
    """{revision: (name, event words)} of HISTORY's lines, and the revisions in their order."""
    records, order = {}, []
    for line in lines:
        words = line.split(" ")
        revision = int(words[1])
        order.append(revision)
        records[revision] = (words[6], words[7:])
    return records, order


class Replay:
    """The list as the history has it after each revision, from the list at the base revision."""

    def __init__(self, initial, records, first, last):
        self.ids = list(initial[1])
        self.first_ids = list(initial[1])
        opened = set(initial[2])
        self.opened = {first - 1: frozenset(opened)}
        self.problems = []
        for revision in range(first, last + 1):
            name, event = records[revision]
            kind, index, section = event[0], int(event[2]), event[3]
            if int(event[1]) != revision:
                self.problems.append(f"the record at {revision} holds the event of {event[1]}")
            if kind == "inserted":
                if section in self.ids:
                    self.problems.append(f"{revision}: {section} inserted twice")
                self.ids.insert(index, section)
            elif kind in ("opened", "closed"):
                if index >= len(self.ids) or self.ids[index] != section:
                    self.problems.append(f"{revision}: section {index} is not {section}")
                if (section in opened) == (kind == "opened"):
                    self.problems.append(f"{revision}: {kind} {section}, which already was")
                (opened.add if kind == "opened" else opened.discard)(section)
            else:
                self.problems.append(f"{revision}: an event no client asked for: {' '.join(event)}")
            self.opened[revision] = frozenset(opened)

    def is_open(self, revision, index):
        return self.first_ids[index] in self.opened[revision]


def histories_agree(results, label, fleet, base):
    """Every host's HISTORY FROM base, the same on all: returns (records, last revision) or None."""
    try:
        last = fleet.converged(timeout=30)
    except FleetError as error:
        results.check(False, f"{label}: the hosts agree on a revision", str(error)[:1500])
        return None
    histories = [host.request(f"HISTORY FROM {base}", timeout=30) for host in fleet.hosts]
    same = all(history == histories[0] for history in histories)
    detail = f"{len(histories[0]) - 1} records, revisions {base + 1}-{last}"
    if not same:
        first = next(
            (i for i in range(max(map(len, histories))) if len({tuple(h[i : i + 1]) for h in histories}) > 1), 0
        )
        detail = "first difference: " + " | ".join(f"h{n}: {h[first : first + 1]}" for n, h in enumerate(histories))
    if not results.check(same and histories[0][-1] == f"OK {last}", f"{label}: HISTORY is the same on every host",
                         detail):  # fmt: skip
        return None
    records, order = parse_history(histories[0][:-1])
    results.check(order == list(range(base + 1, last + 1)), f"{label}: revisions {base + 1}-{last} without a gap or a repeat",
                  f"{len(order)} records; first out of line: "
                  + str(next((r for i, r in enumerate(order) if r != base + 1 + i), None)))  # fmt: skip
    return (records, last) if order == list(range(base + 1, last + 1)) else None


def claims(ops, records):
    """Each op with an OK: (op, whether it changed something). A change's revision is one the
    history gives to its client and no earlier op of the client answered."""
    claimed = []
    previous = None
    for op in ops:
        revision = op.revision
        if revision is None:
            continue
        changed = revision != previous and revision in records and records[revision][0].split("@")[0] == op.client
        claimed.append((op, changed))
        previous = revision
    return claimed


def check_replies(results, label, fleet, workload, records, replay):
    """Acknowledged changes against the records, one record per change, replies against the list."""
    wrong, twice, missing = [], [], []
    for client in workload.clients:
        ops = client.ops
        mine = sorted(r for r, (name, _) in records.items() if name.split("@")[0] == client.name_)
        acked = {op.revision: op for op, changed in claims(ops, records) if changed}
        for op, changed in claims(ops, records):
            verb, argument = op.line.split(" ", 2)[:2]
            revision = op.revision
            name, event = records.get(revision, ("-", ["-"] * 4))
            host = fleet.hosts[op.host].name
            if verb in ("TOGGLE", "INSERT") and not changed:
                wrong.append(f"{op}: the history gives {revision} to {name} ({' '.join(event)})")
            elif changed:
                expected = {"TOGGLE": ("opened", "closed"), "OPEN": ("opened",), "CLOSE": ("closed",),
                            "INSERT": ("inserted",)}[verb]  # fmt: skip
                target = argument if verb != "INSERT" else op.line.split(" ")[2]
                place = event[3] if verb == "INSERT" else event[2]
                if event[0] not in expected or place != target or name != f"{op.client}@{host}":
                    wrong.append(f"{op}: the record at {revision} is {name} {' '.join(event)}")
            if verb != "INSERT":
                line = op.reply[0].split(" ") if len(op.reply) == 2 else ["?"] * 4
                shown = "open" if replay.is_open(revision, int(argument)) else "closed"
                if line[3] != shown:
                    wrong.append(f"{op}: says {op.reply[0]!r}, the history has it {shown} at {revision}")
        # The client's records in order against its ops in order: an unknown outcome may claim
        # one record before the next acknowledged change, nothing else may.
        records_left = list(mine)
        maybe = 0
        for op in ops:
            if op.unknown:
                maybe += 1
                continue
            if op.revision is None or op.revision not in acked or acked[op.revision] is not op:
                continue
            while records_left and records_left[0] < op.revision:
                extra = records_left.pop(0)
                if maybe:
                    maybe -= 1
                else:
                    twice.append(f"{client.name_}: record {extra} ({' '.join(records[extra][1])}) answered by no OK")
            if records_left and records_left[0] == op.revision:
                records_left.pop(0)
            else:
                missing.append(f"{op}: not in the history")
            maybe = 0
        for extra in records_left[maybe:]:
            twice.append(f"{client.name_}: record {extra} ({' '.join(records[extra][1])}) answered by no OK")
        exists = [op for op in ops if op.reply and op.reply[-1].startswith("ERR EXISTS")]
        twice += [f"{op}: an id sent once, refused as existing: the insert was run twice" for op in exists]
    changes = sum(changed for client in workload.clients for _, changed in claims(client.ops, records))
    results.check(not missing, f"{label}: every acknowledged change is in every host's history",
                  f"{changes} changes acknowledged" if not missing else f"{len(missing)} missing: {missing[:3]}")  # fmt: skip
    results.check(not twice, f"{label}: nothing applied twice, nothing refused applied",
                  f"each client's records are its OKs" if not twice else f"{len(twice)}: {twice[:3]}")  # fmt: skip
    results.check(not wrong, f"{label}: each reply is the history's record and the list at its revision",
                  f"{len(workload.ops())} requests" if not wrong else f"{len(wrong)} wrong: {wrong[:3]}")  # fmt: skip


def check_real_time(results, label, workload, records):
    """A change acknowledged before another change was sent has the lower revision; a request
    that changed nothing answers no older revision than a change its host acknowledged before."""
    changes, unchanged = [], []
    for client in workload.clients:
        for op, changed in claims(client.ops, records):
            (changes if changed else unchanged).append(op)
    # One sweep in the order requests were sent, taking in the changes answered before each.
    by_answer = sorted(changes, key=lambda op: op.acked)
    newest, newest_here = None, {}
    taken = 0
    inversions, stale_here, stale_elsewhere = [], [], 0
    changed = set(map(id, changes))
    for later in sorted(changes + unchanged, key=lambda op: op.sent):
        while taken < len(by_answer) and by_answer[taken].acked < later.sent:
            op = by_answer[taken]
            taken += 1
            if newest is None or op.revision > newest.revision:
                newest = op
            if op.host not in newest_here or op.revision > newest_here[op.host].revision:
                newest_here[op.host] = op
        if newest is None:
            continue
        here = newest_here.get(later.host)
        if id(later) in changed:
            if later.revision <= newest.revision:
                inversions.append(f"{newest} answered before {later} was sent")
        elif here is not None and later.revision < here.revision:
            stale_here.append(f"{here} answered before {later} was sent")
        elif later.revision < newest.revision:
            stale_elsewhere += 1  # a read from the host's applied state, as FLEET.md says
    results.check(not inversions, f"{label}: real-time order: a change answered before another was sent has the lower revision",
                  f"{len(changes)} changes" if not inversions else f"{len(inversions)}: {inversions[:2]}")  # fmt: skip
    results.check(not stale_here, f"{label}: a request that changed nothing answers no revision older than its host acknowledged",
                  f"{len(unchanged)} such requests, {stale_elsewhere} behind another host's change (served from the "
                  f"host's applied state)" if not stale_here else f"{len(stale_here)}: {stale_here[:2]}")  # fmt: skip


def check_streams(results, label, fleet, workload, records, last, hosts=None):
    """Every subscriber (of `hosts`, all by default) got the history's events in order."""
    expected = [f"!{' '.join(records[revision][1])}" for revision in range(workload.base + 1, last + 1)]
    for index in workload.hosts if hosts is None else hosts:
        subscription = workload.collectors[index].subscription
        try:
            events = subscription.events_until(last, timeout=10) if last > workload.base else subscription.events
        except Exception as error:  # FleetError, or the stream broke
            events = [f"({error})"]
        events = [e for e in events if event_revision(e) is None or workload.base < event_revision(e) <= last]
        difference = next((i for i, (a, b) in enumerate(zip(events, expected)) if a != b), min(len(events), len(expected)))
        results.check(events == expected, f"{label}: {fleet.hosts[index].name}'s subscriber got the history's {len(expected)} events in order",
                      f"first difference at {difference}: {events[difference : difference + 1]} against "
                      f"{expected[difference : difference + 1]}" if events != expected else "")  # fmt: skip


def verify(results, label, fleet, workload, streams=None):
    """All of the module's checks on a stopped workload; returns the last revision (or None)."""
    agreed = histories_agree(results, label, fleet, workload.base)
    if agreed is None:
        return None
    records, last = agreed
    replay = Replay(workload.initial, records, workload.base + 1, last)
    names = [records[r][0] for r in records if "@" not in records[r][0]]
    results.check(not replay.problems and not names,
                  f"{label}: the history replays from the list as it was, each record naming its host",
                  "; ".join(replay.problems[:3] + names[:3]))  # fmt: skip
    check_replies(results, label, fleet, workload, records, replay)
    check_real_time(results, label, workload, records)
    check_streams(results, label, fleet, workload, records, last, hosts=streams)
    final = [list_state(host) for host in fleet.hosts]
    expected = (last, replay.ids, set(replay.opened[last]))
    results.check(all(state == expected for state in final), f"{label}: every host's list is the history's end",
                  "" if all(state == expected for state in final) else f"{final} against {expected}")  # fmt: skip
    return last
