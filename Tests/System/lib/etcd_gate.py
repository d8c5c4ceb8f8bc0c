"""A gate in front of one etcd member, for a fleet test that must hold a host's requests back: a
TCP forwarder on a free loopback port whose way to etcd can be shut for a moment (the answers
and the watch's stream keep flowing back).

    with EtcdGate(etcd.urls[0]) as gate:    # FleetLab(..., urls={1: [gate.url]})
        gate.shut()                         # what the host sends from now on is held here
        gate.wait_for(b"/v3/kv/txn")        # ... until a txn of its is held
        ...                                 # another host commits meanwhile
        gate.open()                         # the held bytes go on, in order: the txn compares
                                            # a head that has moved, its compare fails

So a test makes a host's commit lose its compare for certain, instead of hoping two hosts
collide. `gate.hold_only(b"request_range")` lets everything pass again but what contains the
needle (a catch-up's txn), held until open(). `gate.hold_answers(b'"succeeded":true')` holds
instead what etcd sends back with the needle in it (a committed txn's answer; the watch's
stream, on a connection of its own, keeps flowing), also until open(). Everything the host sends while the gate is shut is held (its txn, a poll of the head),
on every connection, and goes on in order when it opens; keep it shut well under the host's 2 s
an attempt (Fleet.attemptTimeout).

As a program, for a test in another language:

    etcd_gate.py serve MEMBER_URL   # prints "ready GATE_URL", then reads commands on stdin, one
                                    # line each, answering "ok" (held: "ok" or "no"): "shut",
                                    # "open", "hold_only NEEDLE", "hold_answers NEEDLE", "held
                                    # NEEDLE" (wait_for without the wait: the test's own loop
                                    # must run for its client to send); closes at end of input
Standard library only.
"""

import socket
import sys
import threading
import time


class EtcdGate:
    def __init__(self, member_url):
        host, port = member_url.split("//", 1)[1].rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Condition()
        self.shut_for = None  # None: open; b"": everything held; else what a held piece contains
        self.held = b""  # what was held since the last shut()
        self.answers_for = None  # None: answers flow; else what a held answer contains
        self.held_answers = 0  # answers held since the last hold_answers()
        self.sockets = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def shut(self):
        with self.lock:
            self.held = b""
            self.shut_for = b""

    def hold_only(self, needle):
        """What is held goes on, and from now on only a piece sent with `needle` in it is held."""
        with self.lock:
            self.shut_for = needle
            self.lock.notify_all()

    def hold_answers(self, needle):
        """From now on a piece etcd sends back with `needle` in it is held until open()."""
        with self.lock:
            self.held_answers = 0
            self.answers_for = needle

    def open(self):
        with self.lock:
            self.shut_for = None
            self.answers_for = None
            self.lock.notify_all()

    def _holds(self, data, gated):
        if not gated:
            return self.answers_for is not None and self.answers_for in data
        return self.shut_for is not None and self.shut_for in data

    def wait_for(self, needle, timeout=5.0):
        """Whether `needle` was among the bytes held since shut() within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while needle not in self.held:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(left)
            return True

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self.lock:
                if self.closed:
                    client.close()
                    server.close()
                    return
                self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source, sink, gated):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                with self.lock:
                    if self._holds(data, gated):
                        if gated:
                            self.held += data
                        else:
                            self.held_answers += 1
                        self.lock.notify_all()
                        while self._holds(data, gated):
                            self.lock.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self):
        with self.lock:
            self.closed = True
            self.shut_for = None
            self.answers_for = None
            self.lock.notify_all()
            sockets, self.sockets = self.sockets, []
        self.listener.close()
        for s in sockets:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()


def serve(member_url):
    with EtcdGate(member_url) as gate:
        print("ready " + gate.url, flush=True)
        takes_needle = {"hold_only": gate.hold_only, "hold_answers": gate.hold_answers}
        for line in sys.stdin:
            words = line.split(" ", 1)
            command, needle = words[0].strip(), words[1].rstrip("\n").encode() if len(words) == 2 else b""
            if command in ("shut", "open") and not needle:
                getattr(gate, command)()
                print("ok", flush=True)
            elif command in takes_needle and needle:
                takes_needle[command](needle)
                print("ok", flush=True)
            elif command == "held" and needle:
                print("ok" if gate.wait_for(needle, timeout=0) else "no", flush=True)
            else:
                print(f"error: unknown command {line.strip()!r} (shut, open, hold_only N, hold_answers N, held N)",
                      flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["serve"] or len(sys.argv) != 3:
        sys.exit("usage: etcd_gate.py serve MEMBER_URL")
    sys.exit(serve(sys.argv[2]))
