#!/usr/bin/env python3
"""The daemon's bounds, end to end: each part is the reproduction of a limit that
held for its own request but not together with the others, over time, or at the next start.

  batch      one small BATCH alternating OPEN ALL / CLOSE ALL on 1,000 sections (10^7 changes)
             blocked every client for seconds and kept gigabytes: it is refused with
             ERR LIMIT and nothing applied, other clients are answered meanwhile, and the
             memory of a large accepted one is given back.
  turn       eight clients end batches of 100,000 changes in one turn: the turn does one, the
             others wait for the next turns, and a PING is answered before most are done.
  text       a list grown with the default limits to the default text bound, of items that
             JSON escapes at two bytes a character, is read back whole at the next start
             (it used to write a state file the daemon refused: every edit lost); past the
             bound an edit is ERR LIMIT.
  load       an escape in a state file costs its load a fraction of a microsecond (it cost
             0.45 us: 120 MB of `"` took half a minute, past the start timeout).
  subscribe  100 read-only clients that SUBSCRIBE to 2,003 open sections with 4,000-byte ids
             and never read share one copy of the 8 MB snapshot (it was copied for each).
  revision   a BATCH cannot take the revision past what the state file holds: refused, and
             what was acknowledged before survives a restart.
  bidi       bidirectional embedding, override and isolate controls are refused in titles
             and items, naming the character.
  history    the history at its bounds.
  long_answers  700 read-only clients sending HISTORY 100000 (9.5 MiB each) and 500 replaying
             SUBSCRIBE FROM, never reading, with --history 100000 full: RSS bounded and a PING
             answered meanwhile (4.8 GB and 5.2 s when each answer was rendered whole); a
             reader that reads gets all of it, in order.
  given_back 900 read-only clients flooding LIST, then gone: the daemon gives the memory back
             (a fresh daemon once stayed at 465 MB).

usage: bounds.py [PART ...]   (all parts by default)
Prints PASS/FAIL lines with the figures, then `N passed, N failed`.
"""

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from sdlib import Client, Daemon, config_json, run_parts  # noqa: E402

MAX_REVISION = 2**63 - 1


def batch_of(lines):
    return "BATCH\n" + "".join(line + "\n" for line in lines) + "END\n"


def ping_during(path, start_event, seconds):
    """Starts a thread that, once `start_event` is set, sends PING on its own connection and
    records how long the answer took (None: no answer within `seconds`)."""
    result = {}

    def run():
        with Client(path, timeout=seconds) as client:
            client.request("PING")
            start_event.wait()
            begun = time.monotonic()
            try:
                client.request("PING")
                result["waited"] = time.monotonic() - begun
            except OSError:
                result["waited"] = None

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


# ---------------------------------------------------------------- changes per request and turn

def batch(results):
    ids = [f"s{n}" for n in range(1000)]
    with Daemon(config=config_json(ids)) as daemon:
        daemon.start(timeout=30)
        with daemon.connect(timeout=120) as client:
            before_list = client.request("LIST")
            before_rss = daemon.rss_kib()
            flip = batch_of(["OPEN ALL" if n % 2 == 0 else "CLOSE ALL" for n in range(10_000)])
            client.send(flip[:-4])
            time.sleep(0.2)
            go = threading.Event()
            thread, pinged = ping_during(daemon.readonly_socket, go, 60)
            time.sleep(0.2)
            begun = time.monotonic()
            client.send("END\n")
            go.set()
            reply = client.read_reply()
            took = time.monotonic() - begun
            thread.join(60)
            results.check(
                reply[-1].startswith("ERR LIMIT line ") and "changes: at most 100000 in one request" in reply[-1],
                "a BATCH of 10,000 OPEN ALL / CLOSE ALL on 1,000 sections is refused",
                f"{reply[-1][:90]} after {took:.2f} s (10^7 changes took 7.5 s of the release daemon)")
            waited = pinged.get("waited")
            results.check(waited is not None and waited < 5,
                          "another client's PING is answered while it is refused",
                          "no answer" if waited is None else f"{waited * 1000:.0f} ms")
            results.check(client.request("LIST") == before_list, "nothing of the refused batch was applied")
            grown = (daemon.rss_kib() - before_rss) / 1024
            results.check(grown < 64, "the refused batch left the daemon's memory as it was",
                          f"RSS grew {grown:.1f} MiB (2.4 GB before the bound)")

            # The largest accepted: 100 lines of OPEN ALL / CLOSE ALL, 100,000 changes.
            reply = client.request(batch_of(["OPEN ALL" if n % 2 == 0 else "CLOSE ALL"
                                              for n in range(100)]).rstrip("\n"))
            results.check(reply[-1].startswith("OK "), "a BATCH of 100,000 changes is accepted", reply[-1])
            client.request("PING")
            after = (daemon.rss_kib() - before_rss) / 1024
            results.check(after < 48, "the memory of that large turn is given back",
                          f"RSS {after:.1f} MiB above the start after it")


def turn(results):
    # Eight control clients end a BATCH of 100,000 changes each in the same turn: the turn
    # does one of them and the rest wait for the next turns, so a PING sent with them waits
    # a turn or two, not for all eight in one (before: every one in that turn).
    ids = [f"s{n}" for n in range(1000)]
    with Daemon(config=config_json(ids)) as daemon:
        daemon.start(timeout=30)
        body = "".join("OPEN ALL\n" if n % 2 == 0 else "CLOSE ALL\n" for n in range(100))
        clients = [daemon.connect(timeout=120) for _ in range(8)]
        with daemon.connect(timeout=120) as alone:
            alone.request("PING")
            begun = time.monotonic()
            alone.request("BATCH\n" + body + "END")
            one = time.monotonic() - begun
            for client in clients:
                client.send("BATCH\n" + body)
            time.sleep(0.5)
            go = threading.Event()
            thread, pinged = ping_during(daemon.readonly_socket, go, 120)
            time.sleep(0.2)
            begun = time.monotonic()
            for client in clients:
                client.send("END\n")
            go.set()
            replies = [client.read_reply()[-1] for client in clients]
            took = time.monotonic() - begun
            thread.join(120)
        for client in clients:
            client.close()
        waited = pinged.get("waited")
        results.check(all(r.startswith("OK ") for r in replies), "eight batches of 100,000 changes are all applied",
                      f"in {took:.2f} s; one alone took {one:.2f} s")
        # Before, the eight went in one turn and the PING was answered at its end, with them all.
        results.check(waited is not None and waited < took / 2,
                      "a PING sent with them is answered before most of them are done",
                      "no answer" if waited is None else
                      f"{waited * 1000:.0f} ms, all eight {took * 1000:.0f} ms (one alone: {one * 1000:.0f} ms)")


# ---------------------------------------------------------------- the list's text

def text(results):
    # Items of 4,000 `"`: two bytes each in JSON, the worst the state file can make of text.
    item = '"' * 4000
    with Daemon(config=config_json(["a"])) as daemon:
        daemon.start()
        with daemon.connect(timeout=120) as client:
            added = 0
            refused = None
            while refused is None:
                reply = client.request(batch_of([f"ITEM INSERT a end {item}"] * 250).rstrip("\n"))
                if reply[-1].startswith("OK "):
                    added += 250
                else:
                    refused = reply[-1]
            if not results.check("--max-text-bytes" in refused and refused.startswith("ERR LIMIT"),
                                 "past the default text bound a batch of items is ERR LIMIT",
                                 f"after {added} items of 4,000 bytes: {refused[:100]}"):
                return
            # Fill up to the bound exactly, one item at a time.
            single = None
            while single is None or single[-1].startswith("OK "):
                single = client.request(f"ITEM INSERT a end {item}")
                added += single[-1].startswith("OK ")
            items_before = len(client.request("ITEMS a")) - 1
            revision = client.request("TOGGLE a")[-1]
        daemon.kill()
        size = os.path.getsize(daemon.state) + (os.path.getsize(daemon.state + ".journal")
                                                if os.path.exists(daemon.state + ".journal") else 0)
        begun = time.monotonic()
        try:
            daemon.start(timeout=120)
        except RuntimeError as error:
            results.check(False, "the list at the text bound is read back at the next start", str(error)[-200:])
            return
        took = time.monotonic() - begun
        with daemon.connect(timeout=60) as client:
            items_after = len(client.request("ITEMS a")) - 1
            status = client.request("PING")
            revision_after = client.request("MODE")[-1]
        aside = [f for f in os.listdir(daemon.dir) if ".corrupt-" in f]
        results.check(items_after == items_before == added + 3 and not aside and revision_after == revision,
                      "the list at the text bound is read back whole at the next start",
                      f"{added} items ({items_before} before, {items_after} after), {size / 1e6:.1f} MB of state file and journal, ready after "
                      f"{took:.1f} s; {revision} before, {revision_after} after; set aside: {aside}")
        results.check(status == ["OK"], "and the daemon serves")


# ---------------------------------------------------------------- loading

def write_state(path, item, count):
    with open(path, "w") as f:
        f.write('{"format":2,"revision":1,"mode":"multi","sections":{"a":null},\n"list":[\n')
        f.write('{"id":"a","title":"A","origin":"config","items":[')
        f.write(",".join([json.dumps(item)] * count))
        f.write(']}],\n"deleted":[],"edited":["a"]}\n')


def ready_after(daemon):
    begun = time.monotonic()
    daemon.start(timeout=120)
    took = time.monotonic() - begun
    daemon.kill()
    return took


def load(results):
    # A state file of 2,000 items of 4,000 `"` (16 MB of JSON, 8 million escapes) against one
    # of the same size without escapes. At 0.45 us an escape the first took seconds more than
    # the second (the 120 MB took 31.8 s, past the start timeout). The faster of two
    # starts of each, alternated.
    with Daemon(config=config_json(["a"])) as daemon:
        times = {"escaped": [], "plain": []}
        for _ in range(2):
            for kind, item in (("escaped", '"' * 4000), ("plain", "x" * 8000)):
                write_state(daemon.state, item, 2000 if kind == "escaped" else 1000)
                try:
                    times[kind].append(ready_after(daemon))
                except (RuntimeError, OSError) as error:
                    results.check(False, f"a 16 MB state file ({kind}) loads", str(error)[-200:])
                    return
        escaped, plain = min(times["escaped"]), min(times["plain"])
        per_escape = (escaped - plain) / 8e6 * 1e6
        results.check(per_escape < 0.3, "an escape costs a state file's load a fraction of a microsecond",
                      f"16 MB: {escaped:.2f} s with 8 million escapes, {plain:.2f} s without: "
                      f"{per_escape:.2f} us an escape (0.45 us before, release build; this is debug)")


# ---------------------------------------------------------------- shared snapshots

def subscribe(results):
    with Daemon(config=config_json(["a"])) as daemon:
        daemon.start()
        with daemon.connect(timeout=120) as client:
            ids = [f"s{n:04d}" + "x" * 3995 for n in range(2002)]
            for start in range(0, len(ids), 200):
                reply = client.request(batch_of([f"INSERT end {i} T" for i in ids[start:start + 200]]).rstrip("\n"))
                if not reply[-1].startswith("OK "):
                    results.check(False, "2,002 sections with 4,000-byte ids inserted", reply[-1])
                    return
            client.request("OPEN ALL")
        before = daemon.rss_kib()
        clients = []
        for _ in range(100):
            subscriber = Client(daemon.readonly_socket)
            subscriber.send("SUBSCRIBE\n")
            clients.append(subscriber)
        time.sleep(1.0)
        with daemon.connect() as client:
            client.request("PING")
        grown = (daemon.rss_kib() - before) / 1024
        snapshot = 2003 * 4001 / 2**20
        results.check(grown < 3 * snapshot, "100 subscribers that never read share one 8 MB snapshot",
                      f"RSS grew {grown:.1f} MiB (a copy each would be {100 * snapshot:.0f} MiB)")
        for subscriber in clients:
            subscriber.close()


# ---------------------------------------------------------------- the history

def history(results):
    """The history at its bounds: a thousand changes of a section with a 4,000-byte
    id (4 MB of events, the byte bound) cost the daemon at most about twice that, HISTORY of all
    of them answers, and a flood of HISTORY requests gets its turns like any other client."""
    long_id = "h" + "x" * 3999
    with Daemon(config=config_json(["a"])) as daemon:
        daemon.start()
        with daemon.connect(timeout=60) as client:
            client.request(f"INSERT end {long_id} T")
            before = daemon.rss_kib()
            for _ in range(1500):
                client.request(f"TOGGLE {long_id}")
            grown = (daemon.rss_kib() - before) / 1024
            started = time.monotonic()
            listed = client.request("HISTORY 100000")
            took = (time.monotonic() - started) * 1000
        results.check(grown < 12, "1,500 changes with 4,000-byte ids: the history holds at most 4 MiB of events, "
                      "about twice that in memory", f"RSS grew {grown:.1f} MiB, {len(listed) - 1} changes kept")
        results.check(800 <= len(listed) - 1 <= 1000 and took < 1000,
                      "HISTORY lists what is kept (up to 1,000, within 4 MiB)",
                      f"{len(listed) - 1} lines, {sum(map(len, listed)) / 2**20:.1f} MiB in {took:.0f} ms (debug build)")
        stop = threading.Event()

        def flood():
            with daemon.connect(timeout=60) as flooder:
                while not stop.is_set():
                    flooder.send("HISTORY 1000\n" * 4)
                    for _ in range(4):
                        flooder.read_reply()
        threads = [threading.Thread(target=flood) for _ in range(2)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        with daemon.connect(timeout=60) as client:
            started = time.monotonic()
            reply = client.request("TOGGLE a")
            waited = (time.monotonic() - started) * 1000
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        results.check(reply[-1].startswith("OK ") and waited < 2000,
                      "two clients flooding HISTORY of 4 MB: a change still goes through",
                      f"TOGGLE answered in {waited:.0f} ms (debug build)")


# ---------------------------------------------------------------- long answers and floods

def read_until_status(sock, limit):
    """Reads one reply whole without the line client's per-line copies: (bytes, seconds)."""
    chunks, tail, total = [], b"", 0
    begun = time.monotonic()
    while total < limit:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        tail = (tail + chunk)[-64:]
        last = tail.rsplit(b"\n", 2)
        if tail.endswith(b"\n") and len(last) >= 2 and (last[-2].startswith(b"OK") or last[-2].startswith(b"ERR")):
            break
    return b"".join(chunks), time.monotonic() - begun


def pinger(path, stop):
    """A thread that PINGs every 20 ms until `stop` is set; its result holds the slowest answer
    (seconds) and how many were sent."""
    result = {"slowest": 0.0, "count": 0}

    def run():
        with Client(path, timeout=30) as client:
            while not stop.is_set():
                begun = time.monotonic()
                try:
                    client.request("PING")
                except OSError:
                    result["slowest"] = float("inf")
                    return
                result["slowest"] = max(result["slowest"], time.monotonic() - begun)
                result["count"] += 1
                time.sleep(0.02)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def flood(daemon, request, count):
    """`count` read-only clients that each send `request` and never read, with a PING every
    20 ms meanwhile: (clients, RSS growth in MiB, the slowest PING in ms)."""
    before = daemon.rss_kib()
    stop = threading.Event()
    thread, pinged = pinger(daemon.socket, stop)
    clients = []
    for _ in range(count):
        client = Client(daemon.readonly_socket, timeout=30)
        client.send(request + "\n")
        clients.append(client)
    # Until the daemon has taken every one of them (and the pinger and this one).
    try:
        with daemon.connect(timeout=30) as client:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if f"status clients {count + 2}" in client.request("STATUS"):
                    break
                time.sleep(0.1)
    except OSError:
        pinged["slowest"] = float("inf")
    time.sleep(0.5)
    stop.set()
    thread.join(30)
    return clients, (daemon.rss_kib() - before) / 1024, pinged["slowest"] * 1000, daemon.rss_kib() / 1024


def close_all(clients):
    for client in clients:
        client.close()


def long_answers(results):
    """HISTORY and SUBSCRIBE FROM were rendered whole into each connection's output:
    700 read-only clients asking for 100,000 changes and never reading took the daemon from
    56 MB to 4.8 GB and held a PING for 5.2 s. The worst the limits allow: --history 100000,
    100,000 changes whose events fill the 4 MiB the history keeps (ids of 20 bytes), a
    `HISTORY 100000` of about 9 MB each. Now each answer is made as the client reads: one that
    does not read holds one part (48 KiB), under the 1 MiB + 64 KiB a connection may hold."""
    ids = [f"s{n:03d}" + "x" * 16 for n in range(1000)]
    with Daemon(config=config_json(ids), extra_args=["--history", "100000"]) as daemon:
        daemon.start(timeout=30)
        with daemon.connect(timeout=120) as client:
            reply = client.request(batch_of(["OPEN ALL" if n % 2 == 0 else "CLOSE ALL"
                                              for n in range(100)]).rstrip("\n"))
            newest = int(reply[-1].split()[1])
            client.send("HISTORY 100000\n")
            whole, took = read_until_status(client.sock, 64 << 20)
        lines = whole.split(b"\n")[:-1]
        revisions = [int(line.split()[1]) for line in lines[:-1]]
        oldest = revisions[0] if revisions else 0
        results.check(len(revisions) > 50_000 and revisions == list(range(oldest, newest + 1))
                      and lines[-1] == f"OK {newest}".encode(),
                      "HISTORY 100000 read as it is sent is whole, in order, then OK",
                      f"{len(revisions)} changes ({oldest} to {newest}), {len(whole) / 2**20:.1f} MiB "
                      f"in {took * 1000:.0f} ms (debug build)")
        size = len(whole)

        count = 700
        clients, grown, slowest, rss = flood(daemon, "HISTORY 100000", count)
        results.check(grown < count * 128 / 1024 and slowest < 2000,
                      f"{count} read-only clients sending HISTORY 100000 and never reading",
                      f"RSS grew {grown:.1f} MiB to {rss:.1f} MiB (a copy each: {count * size / 2**20:.0f} MiB; "
                      f"4.8 GB before), the slowest PING meanwhile {slowest:.0f} ms (5.2 s before)")
        close_all(clients)
        time.sleep(2.0)

        clients, grown, slowest, rss = flood(daemon, f"SUBSCRIBE FROM {oldest - 1}", 500)
        with daemon.connect(timeout=30) as client:
            reply = client.request("TOGGLE 0")
        results.check(grown < 500 * 128 / 1024 and slowest < 2000,
                      "500 read-only clients replaying SUBSCRIBE FROM the oldest and never reading",
                      f"RSS grew {grown:.1f} MiB to {rss:.1f} MiB (963 MB before), the slowest PING meanwhile {slowest:.0f} ms "
                      f"(1.36 s before)")
        close_all(clients)

        # A replay read as it comes has every change once, in order, then the live ones (the
        # oldest kept moved on with the changes since: ERR GONE names it).
        with daemon.connect(timeout=30) as client:
            oldest = int(client.request("HISTORY FROM 0")[-1].split()[2])
        start = oldest + 1000
        with Client(daemon.readonly_socket, timeout=60) as subscriber:
            subscriber.send(f"SUBSCRIBE FROM {start}\n")
            with daemon.connect(timeout=30) as client:
                toggled = int(client.request("TOGGLE 1")[-1].split()[1])
            seen, data = [], b""
            while not seen or seen[-1] < toggled:
                chunk = subscriber.sock.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
                *complete, data = data.split(b"\n")
                seen += [int(line.split()[1]) for line in complete if line.startswith(b"!")]
        results.check(seen == list(range(start + 1, toggled + 1)),
                      "a replay read as it comes: every change once, in order, then the live ones",
                      f"{len(seen)} events, {seen[:1]} to {seen[-1:]}; live change {toggled}")


def given_back(results):
    """900 read-only clients flooding LIST without reading left a fresh 8 MB
    daemon at 465 MB after they were gone: their output buffers, freed, stayed with the
    process. After a burst of closed connections the daemon gives free memory back."""
    # 20 sections: a LIST of about 2.5 KB, copied into each connection's own buffer (shared
    # only past 32 KiB), 400 of them to the megabyte a connection may hold.
    with Daemon(config=config_json([f"section-{n:03d}-" + "x" * 40 for n in range(20)])) as daemon:
        daemon.start()
        fresh = daemon.rss_kib() / 1024
        # One client that reads a megabyte of them: freeing its buffer raises glibc's
        # threshold for giving large blocks their own mapping, as any busy daemon has.
        with daemon.connect(timeout=30) as client:
            client.send("LIST\n" * 500)
            for _ in range(500):
                client.read_reply()
        count = 900
        clients, grown, slowest, peak = flood(daemon, "LIST\n" * 500, count)
        close_all(clients)
        # Until the daemon has seen them go.
        with daemon.connect(timeout=30) as client:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and "status clients 1" not in client.request("STATUS"):
                time.sleep(0.1)
        time.sleep(3.0)
        after = daemon.rss_kib() / 1024
        results.check(after < fresh + 32, f"{count} read-only clients flooding LIST, then gone: the memory is given back",
                      f"RSS {fresh:.1f} MiB fresh, {peak:.1f} MiB with them, {after:.1f} MiB 3 s after they left "
                      f"(465 MB before)")


# ---------------------------------------------------------------- the revision limit

def revision(results):
    top = MAX_REVISION - 17
    with Daemon(config=config_json(["a", "b", "c"])) as daemon:
        with open(daemon.state, "w") as f:
            json.dump({"format": 2, "revision": top, "mode": "multi",
                       "sections": {"a": None, "b": None, "c": None},
                       "list": [{"id": s, "title": s.capitalize(), "items": [f"{s}-{n}" for n in range(3)],
                                 "origin": "config"} for s in "abc"],
                       "deleted": [], "edited": []}, f)
        daemon.start()
        with daemon.connect() as client:
            reply = client.request(batch_of(["INSERT 0 precious Precious"] + ["TOGGLE 1"] * 30).rstrip("\n"))
            results.check(reply[-1].startswith("ERR INTERNAL line ") and "revision is at its limit" in reply[-1],
                          "a BATCH that would pass the highest revision is refused", reply[-1][:100])
            results.check(client.request("MODE")[-1] == f"OK {top}", "and nothing of it was applied")
            reply = client.request(batch_of(["INSERT 0 precious Precious"] + ["TOGGLE 1"] * 5).rstrip("\n"))
            results.check(reply == [f"OK {top + 6}"], "a BATCH that fits is acknowledged", str(reply))
        daemon.kill()
        daemon.start()
        with daemon.connect() as client:
            listed = client.request("LIST")
        aside = [f for f in os.listdir(daemon.dir) if ".corrupt-" in f]
        results.check(listed[-1] == f"OK {top + 6}" and "precious" in listed[0] and not aside,
                      "what was acknowledged survives the restart", f"{listed[0][:40]}... {listed[-1]}; set aside: {aside}")


# ---------------------------------------------------------------- bidirectional controls

def bidi(results):
    with Daemon(config=config_json(["a"])) as daemon:
        daemon.start()
        with daemon.connect() as client:
            for request, code in [("INSERT 0 x \u202egnp.exe", "U+202E"), ("RENAME a A\u2066b", "U+2066"),
                                  ("ITEM INSERT a end \u202atext", "U+202A"), ("ITEM SET a 0 x\u2069", "U+2069")]:
                reply = client.request(request)
                results.check(reply[-1].startswith("ERR SYNTAX") and code in reply[-1],
                              f"{request.split()[0]} with {code} is refused, naming it", reply[-1])
            reply = client.request("ITEM INSERT a end caf\u00e9 \u05e9\u05dc\u05d5\u05dd")
            results.check(reply[-1].startswith("OK "), "text in other scripts is still accepted", reply[-1])


PARTS = {"batch": batch, "turn": turn, "text": text, "load": load, "subscribe": subscribe, "revision": revision,
         "bidi": bidi, "history": history, "long_answers": long_answers,
         "given_back": given_back}


def main(argv):
    return run_parts(PARTS, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
