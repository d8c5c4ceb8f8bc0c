"""The crash-state model of crashstates.py: reads an strace of sectiond (`strace -f -ttt -xx`)
into the file-system operations it made on its state directory, and builds the states a power
cut may leave at each point of the trace under a conservative POSIX model, as ALICE's weakest
(OSDI '14):
  - a write reaches the disk in 512-byte pieces, any subset of them, in any order, until an
    fsync of its file that began after it ended; ftruncate the same;
  - a name made, renamed or removed (open with O_CREAT, rename, renameat2, unlink) is durable
    only once an fsync of the directory began after it ended; until then any subset of them;
  - an fsync counts from its entry: what ended before it began is covered.
The files are opaque bytes here: the outcome is judged through the daemon's protocol.
Standard library only; not a test itself (crashstates.py drives it).
"""

import hashlib
import itertools
import os
import random
import re

SECTOR = 512
_LINE = re.compile(r"^(\d+) +(\d+\.\d+) (.*)$")
_CALL = re.compile(r"^(\w+)\((.*)$")
_STRING = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')
_RESULT = re.compile(r"\) += (-?\d+)")


def _strings(text):
    return [bytes.fromhex(s.replace("\\x", "")) for s in _STRING.findall(text)]


def _calls(path):
    """(seq_entry, seq_exit, name, args text, result) for each finished call, in exit order."""
    pending = {}
    order = 0
    with open(path, errors="replace") as f:
        for raw in f:
            m = _LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            pid, rest = m.group(1), m.group(3)
            order += 1
            if rest.startswith("<..."):
                entry = pending.pop(pid, None)
                if entry is None:
                    continue
                seq, name, args = entry
                args += rest.split("resumed>", 1)[1]
            else:
                c = _CALL.match(rest)
                if not c:
                    continue
                seq, name, args = order, c.group(1), c.group(2)
                if rest.endswith("<unfinished ...>"):
                    pending[pid] = (seq, name, args[: -len("<unfinished ...>")])
                    continue
            r = _RESULT.search(args)
            if r:
                yield seq, order, name, args, int(r.group(1))


class Trace:
    """The operations on `directory` (one directory: the state's) from an strace file, and the
    revisions acknowledged ("OK <rev>" sent to a client), each with its place in the trace."""

    def __init__(self, path, directory, initial):
        self.directory = os.path.abspath(directory)
        self.initial = dict(initial)  # name -> bytes, taken to be on disk
        self.ops = []  # dicts: kind, seq (entry), end (exit), ...
        self.acks = []  # (exit seq, revision)
        self.syncs = []  # (entry seq, exit seq, inode or "dir")
        self._replay(path)

    def _replay(self, path):
        names = {}  # name -> inode
        inode_count = 0
        for name in self.initial:
            inode_count += 1
            names[name] = inode_count
        self.initial_names = dict(names)
        fds = {}  # fd -> (inode or "dir", append)
        position = {}
        size = {n: len(self.initial[k]) for k, n in names.items()}
        for seq, end, call, args, result in _calls(path):
            if result < 0:
                continue
            paths = _strings(args)
            if call == "openat":
                full = paths[0].decode(errors="replace")
                if full == self.directory and "O_DIRECTORY" in args:
                    fds[result] = ("dir", False)
                    continue
                if os.path.dirname(full) != self.directory:
                    fds.pop(result, None)
                    continue
                name = os.path.basename(full)
                if name not in names:
                    if "O_CREAT" not in args:
                        continue
                    inode_count += 1
                    names[name] = inode_count
                    size[inode_count] = 0
                    self.ops.append(dict(kind="create", seq=seq, end=end, name=name, inode=inode_count))
                inode = names[name]
                fds[result] = (inode, "O_APPEND" in args)
                position[result] = 0
                if "O_TRUNC" in args:
                    self._data(seq, end, inode, "truncate", 0)
                    size[inode] = 0
            elif call == "close":
                fds.pop(int(args.split(")")[0]), None)
            elif call in ("write", "pwrite64") and int(args.split(",")[0]) in fds:
                fd = int(args.split(",")[0])
                inode, append = fds[fd]
                data = paths[0][:result]
                if call == "pwrite64":
                    offset = int(args.rsplit(",", 1)[1].split(")")[0])
                else:
                    offset = size[inode] if append else position[fd]
                    position[fd] = offset + len(data)
                self._write(seq, end, inode, offset, data)
                size[inode] = max(size[inode], offset + len(data))
            elif call == "ftruncate" and int(args.split(",")[0]) in fds:
                inode = fds[int(args.split(",")[0])][0]
                length = int(args.split(",")[1].split(")")[0])
                self._data(seq, end, inode, "truncate", length)
                size[inode] = length
            elif call in ("fsync", "fdatasync") and int(args.split(")")[0]) in fds:
                self.syncs.append((seq, end, fds[int(args.split(")")[0])][0]))
            elif call in ("rename", "renameat", "renameat2"):
                old, new = (p.decode(errors="replace") for p in paths[:2])
                if os.path.dirname(old) != self.directory:
                    continue
                old, new = os.path.basename(old), os.path.basename(new)
                if "RENAME_EXCHANGE" in args:
                    names[old], names[new] = names[new], names[old]
                    self.ops.append(dict(kind="exchange", seq=seq, end=end, old=old, new=new))
                else:
                    names[new] = names.pop(old)
                    self.ops.append(dict(kind="rename", seq=seq, end=end, old=old, new=new))
            elif call in ("unlink", "unlinkat"):
                full = paths[0].decode(errors="replace")
                if os.path.dirname(full) == self.directory and os.path.basename(full) in names:
                    names.pop(os.path.basename(full))
                    self.ops.append(dict(kind="unlink", seq=seq, end=end, name=os.path.basename(full)))
            elif call in ("sendto", "write", "writev") and paths:
                for match in re.finditer(rb"(?:^|\n)OK (\d+)\n", b"".join(paths)):
                    self.acks.append((end, int(match.group(1))))

    def _data(self, seq, end, inode, kind, value, data=b""):
        self.ops.append(dict(kind=kind, seq=seq, end=end, inode=inode, offset=value, data=data))

    def _write(self, seq, end, inode, offset, data):
        """A write, as the 512-byte-aligned pieces that may reach the disk apart."""
        start = offset
        while start < offset + len(data):
            stop = min((start // SECTOR + 1) * SECTOR, offset + len(data))
            self._data(seq, end, inode, "write", start, data[start - offset:stop - offset])
            start = stop

    def points(self):
        """The crash points: after each operation, as the exit seq the point follows."""
        return sorted({op["end"] for op in self.ops} | {s[1] for s in self.syncs})

    def durable_from(self):
        """For each operation, the exit of the first fsync that makes it durable: of its file
        (of the directory, for a name), begun after it ended; infinity when none did."""
        first = []
        for op in self.ops:
            target = "dir" if op["kind"] in ("create", "rename", "exchange", "unlink") else op["inode"]
            first.append(min((end for entry, end, t in self.syncs if t == target and entry > op["end"]),
                             default=float("inf")))
        return first

    def state(self, chosen):
        """The files a crash leaves when exactly the operations `chosen` (a set of indices into
        `ops`) reached the disk, besides what was there: name -> bytes."""
        names = dict(self.initial_names)
        contents = {n: bytearray(self.initial[k]) for k, n in names.items()}
        for index, op in enumerate(self.ops):
            if index not in chosen:
                continue
            kind = op["kind"]
            if kind == "create":
                names[op["name"]] = op["inode"]
            elif kind == "rename":
                if op["old"] in names:
                    names[op["new"]] = names.pop(op["old"])
            elif kind == "exchange":
                if op["old"] in names and op["new"] in names:
                    names[op["old"]], names[op["new"]] = names[op["new"]], names[op["old"]]
            elif kind == "unlink":
                names.pop(op["name"], None)
            else:
                data = contents.setdefault(op["inode"], bytearray())
                if kind == "truncate":
                    del data[op["offset"]:]
                    data.extend(bytes(op["offset"] - len(data)))
                else:
                    if len(data) < op["offset"]:
                        data.extend(bytes(op["offset"] - len(data)))
                    data[op["offset"]:op["offset"] + len(op["data"])] = op["data"]
        return {name: bytes(contents.get(inode, b"")) for name, inode in names.items()}

    def crash_states(self, rng, exhaustive=8, samples=24, max_points=60):
        """(point, chosen, files) at each crash point (at most `max_points`, chosen at random,
        the last always among them): every subset of the operations not yet durable when at
        most `exhaustive` are pending; otherwise none, all, prefixes, all but one, and
        `samples` random subsets (16 of each kind at most). `files` repeats where subsets agree."""
        durable_from = self.durable_from()
        points = self.points()
        if len(points) > max_points:
            points = sorted(rng.sample(points[:-1], max_points - 1)) + points[-1:]
        for point in points:
            done = [i for i, op in enumerate(self.ops) if op["end"] <= point]
            fixed = {i for i in done if durable_from[i] <= point}
            pending = [i for i in done if i not in fixed]
            if len(pending) <= exhaustive:
                subsets = itertools.chain.from_iterable(
                    itertools.combinations(pending, k) for k in range(len(pending) + 1))
            else:
                cuts = sorted({0, len(pending)} | {rng.randrange(len(pending)) for _ in range(16)})
                subsets = [pending[:k] for k in cuts]
                subsets += [[p for p in pending if p != skip] for skip in rng.sample(pending, min(16, len(pending)))]
                subsets += [[p for p in pending if rng.random() < 0.5] for _ in range(samples)]
            for subset in subsets:
                chosen = fixed | set(subset)
                yield point, chosen, self.state(chosen)

    def acknowledged_before(self, point):
        """The newest revision a reply showed before `point` (0 when none)."""
        return max((rev for end, rev in self.acks if end <= point), default=0)

    def synced_before(self, point):
        """The newest revision a reply showed before an fsync began that ended by `point`:
        what the default mode promises at `point` (every fsync covers what came before it)."""
        ends = [entry for entry, end, _ in self.syncs if end <= point]
        if not ends:
            return 0
        last = max(ends)
        return max((rev for end, rev in self.acks if end < last), default=0)


def digest(files):
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + str(len(files[name])).encode() + b"\0" + files[name])
    return h.hexdigest()


def write_state(directory, files):
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
        os.chmod(os.path.join(directory, name), 0o600)


def read_state(directory):
    files = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files[name] = f.read()
    return files


def describe(op):
    if "inode" in op and op["kind"] in ("write", "truncate"):
        return f"{op['kind']} inode {op['inode']} at {op['offset']} ({len(op['data'])} bytes)"
    return " ".join(f"{k}={v}" for k, v in op.items() if k not in ("seq", "end"))


__all__ = ["Trace", "digest", "write_state", "read_state", "describe", "random"]
