"""The crash states a conservative POSIX file system allows, from an strace of sectiond.

`parse(trace, directory)` turns `strace -f -y -xx` output into the operations sectiond made
on files under `directory` (create, write at an offset, truncate, rename, exchange, unlink,
fsync of a file or of the directory) and the revisions it acknowledged (`OK N` sent to a
socket), in the order they completed. `FileSystem` replays them. `crash_states(ops, point)`
lists the states a power cut right after operation `point` may leave, under ALICE's weakest
model (OSDI '14): an operation is on disk for sure only once an fsync of its file (for a
name: of its directory) completed after it; any other may or may not be, in any order, and a
write may be torn at 512-byte boundaries. Every subset of the pending operations is too many
to try, so the states are: each prefix of them, each prefix with one of them left out, each
prefix with its last write torn, and each single one of them alone.
"""

import random
import re

SECTOR = 512

_HEX = re.compile(r'\\x([0-9a-f]{2})')
_QUOTED = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')
_FD = re.compile(r'^(-?\d+)<((?:\\x[0-9a-f]{2})*)>')
_CALL = re.compile(r'^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$')
_OK = re.compile(rb'^OK (\d+)', re.M)
_RESULT = re.compile(r'^(.*)\)\s+=\s+(.*)$', re.S)


def _bytes(hexed):
    return bytes.fromhex(hexed.replace("\\x", ""))


def _text(hexed):
    return _bytes(hexed).decode(errors="replace")


class Op:
    """One operation: `kind` is create, write, truncate, rename, exchange, unlink, fsync or
    ack; `inode` the file's (a directory's for fsync of one), `name`/`other` names, `offset`
    and `data` a write's, `size` a truncate's, `revision` an ack's. `index` is its place in
    the trace, `line` the trace line it came from (for the report)."""

    def __init__(self, kind, **fields):
        self.kind = kind
        self.inode = fields.get("inode")
        self.name = fields.get("name")
        self.other = fields.get("other")
        self.offset = fields.get("offset", 0)
        self.data = fields.get("data", b"")
        self.size = fields.get("size", 0)
        self.revision = fields.get("revision")
        self.line = _HEX.sub(lambda m: chr(int(m.group(1), 16)), fields.get("line", ""))
        self.index = None

    def describe(self):
        if self.kind == "write":
            return f"write {len(self.data)} bytes at {self.offset} to inode {self.inode}"
        if self.kind in ("rename", "exchange"):
            return f"{self.kind} {self.name} -> {self.other}"
        if self.kind == "ack":
            return f"OK {self.revision} sent"
        return f"{self.kind} {self.name or ''} inode {self.inode}".strip()


def initial_inodes(files):
    """The inodes the files already there have: -1, -2, ... by name, in `parse` and `FileSystem` alike."""
    return {name: -number for number, name in enumerate(sorted(files), start=1)}


def parse(trace_text, directory, initial=None):
    """The operations on files in `directory` (and its own fsyncs), with the acks, in order;
    `initial`: the files (name -> bytes) there before the traced run."""
    directory = directory.rstrip("/")
    initial = initial or {}
    pending = {}
    ops = []
    names = initial_inodes(initial)   # name in the directory -> inode (as the real run had it)
    sizes = {names[name]: len(data) for name, data in initial.items()}  # for O_APPEND offsets
    fds = {}         # fd -> (inode, append, position)
    next_inode = [1]
    dir_inode = 0

    def inside(path):
        return path.startswith(directory + "/") and "/" not in path[len(directory) + 1:]

    def leaf(path):
        return path[len(directory) + 1:]

    def new_inode():
        next_inode[0] += 1
        return next_inode[0]

    for raw in trace_text.splitlines():
        match = _CALL.match(raw)
        if not match:
            continue
        pid, resumed, name, rest = match.groups()
        if resumed:
            start = pending.pop((pid, resumed), None)
            if start is None:
                continue
            name, rest = resumed, start + rest
        elif rest.endswith("<unfinished ...>"):
            pending[(pid, name)] = rest[: -len("<unfinished ...>")]
            continue
        # strace pads a resumed call's ") = " with spaces to a column.
        result = _RESULT.match(rest)
        if not result:
            continue
        args, ret = result.groups()
        ret_fd = _FD.match(ret.strip())
        number = re.match(r'-?\d+', ret.strip())
        ret_value = int(number.group()) if number else -1
        if ret_value < 0:
            continue
        quoted = [_text(q) for q in _QUOTED.findall(args)]
        arg_fd = _FD.match(args)
        fd_path = _text(arg_fd.group(2)) if arg_fd else ""
        fd = int(arg_fd.group(1)) if arg_fd else None

        if name in ("openat", "open"):
            path = quoted[0] if quoted else ""
            if not ret_fd:
                continue
            new_fd = int(ret_fd.group(1))
            if path == directory and "O_DIRECTORY" in args:
                fds[new_fd] = (dir_inode, False, 0)
                continue
            if not inside(path):
                fds.pop(new_fd, None)
                continue
            entry = leaf(path)
            inode = names.get(entry)
            if inode is None:
                inode = new_inode()
                names[entry] = inode
                sizes[inode] = 0
                ops.append(Op("create", inode=inode, name=entry, line=raw))
            if "O_TRUNC" in args and sizes[inode]:
                ops.append(Op("truncate", inode=inode, size=0, line=raw))
                sizes[inode] = 0
            fds[new_fd] = (inode, "O_APPEND" in args, 0)
        elif name in ("write", "pwrite64", "writev", "pwritev", "sendto", "sendmsg"):
            data = b"".join(_bytes(q) for q in _QUOTED.findall(args))[:ret_value]
            if "socket:" in fd_path:
                for revision in _OK.findall(data):
                    ops.append(Op("ack", revision=int(revision), line=raw))
                continue
            if fd not in fds or fds[fd][0] == dir_inode:
                continue
            inode, append, position = fds[fd]
            if name in ("pwrite64", "pwritev"):
                offset = int(args.rsplit(",", 1)[1])
            else:
                offset = sizes[inode] if append else position
                fds[fd] = (inode, append, offset + len(data))
            ops.append(Op("write", inode=inode, offset=offset, data=data, line=raw))
            sizes[inode] = max(sizes[inode], offset + len(data))
        elif name == "ftruncate" and fd in fds and fds[fd][0] != dir_inode:
            inode = fds[fd][0]
            size = int(args.rsplit(",", 1)[1])
            ops.append(Op("truncate", inode=inode, size=size, line=raw))
            sizes[inode] = size
        elif name in ("fsync", "fdatasync") and fd in fds:
            ops.append(Op("fsync", inode=fds[fd][0], line=raw))
        elif name in ("rename", "renameat", "renameat2"):
            if len(quoted) < 2 or not (inside(quoted[0]) and inside(quoted[1])):
                continue
            old, new = leaf(quoted[0]), leaf(quoted[1])
            if "RENAME_EXCHANGE" in args:
                names[old], names[new] = names[new], names[old]
                ops.append(Op("exchange", name=old, other=new, line=raw))
            else:
                names[new] = names.pop(old)
                ops.append(Op("rename", name=old, other=new, line=raw))
        elif name in ("unlink", "unlinkat") and quoted and inside(quoted[0]):
            entry = leaf(quoted[0])
            names.pop(entry, None)
            ops.append(Op("unlink", name=entry, line=raw))
        elif name == "close" and fd in fds:
            del fds[fd]
    for index, op in enumerate(ops):
        op.index = index
    return ops


class FileSystem:
    """Names in the one directory, and the contents of inodes."""

    def __init__(self, files=None):
        files = files or {}
        self.names = initial_inodes(files)
        self.contents = {self.names[name]: bytearray(data) for name, data in files.items()}

    def apply(self, op, torn=None):
        if op.kind == "create":
            self.names[op.name] = op.inode
            self.contents.setdefault(op.inode, bytearray())
        elif op.kind == "write":
            data = op.data if torn is None else op.data[:torn]
            content = self.contents.setdefault(op.inode, bytearray())
            if len(content) < op.offset:
                content.extend(b"\0" * (op.offset - len(content)))
            content[op.offset:op.offset + len(data)] = data
        elif op.kind == "truncate":
            content = self.contents.setdefault(op.inode, bytearray())
            del content[op.size:]
            content.extend(b"\0" * (op.size - len(content)))
        elif op.kind == "rename":
            if op.name in self.names:
                self.names[op.other] = self.names.pop(op.name)
        elif op.kind == "exchange":
            if op.name in self.names and op.other in self.names:
                self.names[op.name], self.names[op.other] = self.names[op.other], self.names[op.name]
        elif op.kind == "unlink":
            self.names.pop(op.name, None)

    def copy(self):
        other = FileSystem()
        other.names = dict(self.names)
        other.contents = {inode: bytearray(data) for inode, data in self.contents.items()}
        return other

    def files(self):
        """name -> bytes, as a directory would list them."""
        return {name: bytes(self.contents.get(inode, b"")) for name, inode in self.names.items()}


def durable(ops, point, dir_inode=0):
    """The indices of operations up to `point` that an fsync completed after (and up to `point`)
    makes sure of: a file's data and size by an fsync of that file, names by an fsync of the
    directory (a new file's name too: the weakest model does not let a file's fsync carry it)."""
    sure = set()
    for op in ops[: point + 1]:
        if op.kind != "fsync":
            continue
        for earlier in ops[: op.index]:
            if op.inode == dir_inode and earlier.kind in ("create", "rename", "exchange", "unlink"):
                sure.add(earlier.index)
            elif op.inode != dir_inode and earlier.kind in ("write", "truncate") and earlier.inode == op.inode:
                sure.add(earlier.index)
    return sure


def _sure_and_pending(ops, point, initial):
    """The files as the durable operations up to ops[point] leave them, and the operations
    that may or may not have reached the disk. A file's sure operations all precede its
    pending ones (an fsync covers everything before it), and so do the directory's: applying
    the sure ones first keeps every file's order."""
    sure = durable(ops, point)
    changing = [op for op in ops[: point + 1] if op.kind not in ("fsync", "ack")]
    base = FileSystem(initial)
    for op in changing:
        if op.index in sure:
            base.apply(op)
    return base, [op for op in changing if op.index not in sure]


def minimal_state(ops, point, initial):
    """The files a power cut after ops[point] leaves for sure: only what fsyncs made durable."""
    return _sure_and_pending(ops, point, initial)[0].files()


def crash_states(ops, point, initial, limit=300):
    """(description, files) for the states a power cut right after ops[point] may leave,
    starting from the durable `initial` files; past `limit` choices, a sample (seeded by
    `point`, so a run is repeatable)."""
    base, pending = _sure_and_pending(ops, point, initial)
    # A choice: how many of the pending operations, in order, reached the disk; one of them
    # that did not (left out), or the last one torn at a byte count; or one of them alone.
    prefixes = [(length, None, None, None) for length in range(len(pending) + 1)]
    others = []
    for length in range(1, len(pending) + 1):
        last = pending[length - 1]
        if last.kind == "write":
            others += [(length, None, cut, None) for cut in range(SECTOR, len(last.data), SECTOR)]
        others += [(length, left_out, None, None) for left_out in range(length - 1)]
    others += [(0, None, None, alone) for alone in range(len(pending))]
    if len(prefixes) + len(others) > limit:
        # Every prefix while they fit in half the limit, else evenly spaced ones (the empty
        # and the whole always), then a sample of the rest.
        if len(prefixes) > limit // 2:
            step = (len(prefixes) - 1) / (limit // 2 - 1)
            prefixes = [prefixes[round(k * step)] for k in range(limit // 2)]
        others = random.Random(point).sample(others, min(len(others), limit - len(prefixes)))
    states = []
    for length, left_out, cut, alone in prefixes + others:
        fs = base.copy()
        if alone is not None:
            fs.apply(pending[alone])
            description = f"only {pending[alone].describe()} of the pending"
        else:
            for position, op in enumerate(pending[:length]):
                if position != left_out:
                    fs.apply(op, cut if cut is not None and position == length - 1 else None)
            description = f"the first {length} of {len(pending)} pending"
            if left_out is not None:
                description += f", without {pending[left_out].describe()}"
            if cut is not None:
                description += f", {pending[length - 1].describe()} torn at {cut}"
        states.append((description, fs.files()))
    return states
