#!/usr/bin/env python3
"""Every crash state loads: each scenario runs a real sectiond under strace, which records the
operations on its state directory and the replies it sent; crashmodel.py builds the states a
power cut may leave at every point of that trace (ALICE's weakest model: see there), and each
distinct state is started with the real sectiond, which must serve a list that is exactly the
list at one revision the scenario committed (as its subscriber saw it), not older than the
newest revision that was durable at that point (--sync: the last reply; the default: the last
reply before an fsync). Then, for a sample, the recovery itself is traced and its crash states
checked the same way: recovery leaves a state that survives the next crash.

A failure is saved as a directory (the state's files, the trace, what was expected) under
$CRASHSTATES_KEEP (default /tmp/crashstates-failures): start sectiond on it to replay.
Prints per scenario: states built, distinct, checked, distinct outcomes.
usage: crashstates.py [scenario ...]    (BUILD_DIR names the build; CRASHSTATES_SEED repeats)
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashmodel import Trace, describe, digest, read_state, write_state  # noqa: E402
from powerloss import Follower, Writer, parse_list  # noqa: E402
from sdlib import Client, Results, config_json, sectiond_path  # noqa: E402

SEED = os.environ.get("CRASHSTATES_SEED", str(int(time.time())))
# Distinct states started with the real binary, per scenario; the rest are counted, not run.
CHECK_LIMIT = int(os.environ.get("CRASHSTATES_LIMIT", "120"))
# Recoveries traced and crashed again, per scenario.
SECOND_LEVEL = 3
KEEP = os.environ.get("CRASHSTATES_KEEP", "/tmp/crashstates-failures")
TRACED = ("openat,write,pwrite64,writev,sendto,fsync,fdatasync,ftruncate,rename,renameat,"
          "renameat2,unlink,unlinkat,close")
IDS = [f"s{i}" for i in range(6)]


class Run:
    """sectiond on `state` (a directory), optionally under strace, sockets in `base`."""

    def __init__(self, base, state, config, extra, trace=None):
        self.socket = os.path.join(base, "c.sock")
        self.readonly = os.path.join(base, "r.sock")
        self.config_path = os.path.join(base, "c.json")
        with open(self.config_path, "w") as f:
            f.write(config)
        self.log_path = os.path.join(base, "log")
        command = [sectiond_path(), "--socket", self.socket, "--readonly-socket", self.readonly,
                   "--config", self.config_path, "--state", os.path.join(state, "state.json"), *extra]
        if trace:
            command = ["strace", "-f", "-qq", "-ttt", "-xx", "-s", "16777216", "-e", f"trace={TRACED}",
                       "-o", trace, *command]
        for path in (self.socket, self.readonly):
            if os.path.exists(path):
                os.remove(path)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sectiond exited with {self.proc.returncode}: {self.log()[-600:]}")
            try:
                with Client(self.socket, timeout=5) as c:
                    if c.request("PING") == ["OK"]:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"sectiond did not answer within 20 s: {self.log()[-600:]}")
            time.sleep(0.005)

    def listing(self):
        with Client(self.socket, timeout=10) as c:
            return parse_list(c.request("LIST"))

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, kill=True):
        """SIGKILL (a crash; strace passes it on), or SIGTERM; waits, by its PID."""
        if self.proc.poll() is None:
            (self.proc.kill if kill else self.proc.terminate)()
        self.proc.wait(timeout=30)


class Scenario:
    def __init__(self, name, extra, drive, config=None, prepare=None, durable="reply", share=1.0):
        self.name, self.extra, self.drive, self.prepare = name, extra, drive, prepare
        # The part of CHECK_LIMIT this scenario starts: its states are large and slow to load.
        self.limit = max(1, int(CHECK_LIMIT * share))
        self.config = config or config_json(IDS)
        self.durable = durable  # "reply" (--sync) or "fsync" (the default)


def serial(requests):
    """One client, one request at a time, the list read after each: the history from LISTs."""
    def drive(run, history):
        with Client(run.socket, timeout=30) as c:
            for request in requests:
                reply = c.request(request.replace("\\n", "\n")) if "\\n" not in request else None
                if reply is None:
                    c.send(request.replace("\\n", "\n") + "\n")
                    reply = c.read_reply()
                if not reply[-1].startswith("OK"):
                    raise RuntimeError(f"{request!r}: {reply}")
                revision, picture = parse_list(c.request("LIST"))
                history[revision] = picture
    return drive


def pipelined(clients, seconds):
    """`clients` writers pipelining changes (powerloss.py's mix) while a subscriber records
    every revision."""
    def drive(run, history):
        follower = Follower(run.readonly)
        follower.start()
        writers = [Writer(run.socket, f"w{k}", IDS, depth=4) for k in range(clients)]
        for w in writers:
            w.start()
        time.sleep(seconds)
        for w in writers:
            w.number = 10 ** 9  # no effect; they end with the daemon
        revision, picture = run.listing()
        deadline = time.monotonic() + 10
        while follower.revision < revision and time.monotonic() < deadline:
            time.sleep(0.01)
        # Ends the writers: the daemon is killed right after; the follower's record is complete
        # up to the last revision it saw, and LIST's answer is kept too.
        history.update(follower.history)
        history[revision] = picture
        if follower.error or follower.gaps:
            raise RuntimeError(f"the subscriber lost track: {follower.error or 'gaps'}")
        return [w.acked for w in writers]
    return drive


def compaction_config():
    """Six sections and 60 of 4 KiB items (a state file of ~250 KB): the journal passes
    1 MiB (the compaction threshold) after ~260 item inserts of 4 KiB."""
    big = '"' + "y" * 4000 + '"'
    extra = ",".join(f'{{"id":"b{i}","title":"B{i}","items":[{big}]}}' for i in range(60))
    return ('{"mode":"multi","sections":[' + ",".join(f'{{"id":"{i}","title":"{i}"}}' for i in IDS)
            + "," + extra + "]}")


def compaction_requests():
    return [f"ITEM INSERT s{i % 6} end {'z' * 4000}" for i in range(300)] + ["TOGGLE s1", "TOGGLE s2"]


SCENARIOS = [
    Scenario("toggles --sync", ["--sync"], serial([f"TOGGLE s{i % 4}" for i in range(8)])),
    Scenario("toggles default", [], serial([f"TOGGLE s{i % 4}" for i in range(8)]), durable="fsync"),
    Scenario("batch --sync", ["--sync"], serial([
        "TOGGLE s0", "BATCH\\nINSERT 0 n1 New\\nITEM INSERT n1 end hello\\nTOGGLE n1\\nTOGGLE s2\\nEND",
        "BATCH\\nDELETE n1\\nMOVE s3 0\\nEND", "TOGGLE s5"])),
    Scenario("edits --sync", ["--sync"], serial([
        "INSERT end e1 Edit one", "ITEM INSERT e1 end first", "RENAME e1 Renamed", "MOVE e1 0",
        "ITEM INSERT s2 end second", "DELETE s4", "INSERT 1 e2 Two", "DELETE e1"])),
    Scenario("first save after a start --sync", ["--sync"], serial(["TOGGLE s1", "TOGGLE s2"]),
             prepare=["INSERT end p1 Prepared", "TOGGLE s0", "ITEM INSERT p1 end kept"]),
    Scenario("RELOAD FRESH --sync", ["--sync"], serial(["INSERT end r1 Runtime", "TOGGLE r1", "RELOAD FRESH",
                                                        "TOGGLE s3"]),
             prepare=["INSERT end p1 Prepared"]),
    Scenario("pipelined 3 clients --sync", ["--sync"], pipelined(3, 0.6)),
    Scenario("pipelined 3 clients default", [], pipelined(3, 0.6), durable="fsync"),
    Scenario("compaction --sync", ["--sync"], serial(compaction_requests()), config=compaction_config(),
             share=0.4),
    Scenario("compaction default", [], serial(compaction_requests()), config=compaction_config(),
             durable="fsync", share=0.4),
]


def check_state(files, config, history, required, base):
    """Starts sectiond (--sync) on `files`; the problem, or None, and the outcome."""
    state = os.path.join(base, "st")
    shutil.rmtree(state, ignore_errors=True)
    write_state(state, files)
    try:
        run = Run(base, state, config, ["--sync"])
    except RuntimeError as error:
        return f"does not start: {error}", None
    try:
        revision, picture = run.listing()
    except (OSError, ConnectionError) as error:
        return f"does not serve LIST: {error}", None
    finally:
        run.stop()
    if revision not in history:
        return f"revision {revision} is none the scenario committed ({sorted(history)[:3]}...)", revision
    if history[revision] != picture:
        return f"the list at revision {revision} is not the one committed: {picture} != {history[revision]}", revision
    if revision < required:
        return f"revision {revision} is older than {required}, durable at this point", revision
    return None, revision


def keep_failure(scenario, files, point, chosen, trace, problem, trace_path):
    """Saves what replays the failure: the state's files, the trace, the operations."""
    where = os.path.join(KEEP, f"{scenario.name.replace(' ', '_')}-{digest(files)[:12]}")
    write_state(os.path.join(where, "state"), files)
    shutil.copy(trace_path, os.path.join(where, "strace.txt"))
    with open(os.path.join(where, "README"), "w") as f:
        f.write(f"scenario: {scenario.name}\nproblem: {problem}\ncrash after trace line {point}\n"
                f"config: {scenario.config[:2000]}\noperations on disk:\n")
        for i, op in enumerate(trace.ops):
            if op["end"] <= point:
                f.write(f"  {'+' if i in chosen else '-'} {describe(op)}\n")
    return where


def run_scenario(scenario, results, rng):
    base = tempfile.mkdtemp(prefix="s36.", dir="/tmp")
    try:
        state = os.path.join(base, "state")
        os.mkdir(state, 0o700)
        history = {}
        if scenario.prepare:
            run = Run(base, state, scenario.config, ["--sync"])
            serial(scenario.prepare)(run, {})
            run.stop(kill=False)
        initial = read_state(state)
        trace_path = os.path.join(base, "strace.txt")
        run = Run(base, state, scenario.config, scenario.extra, trace=trace_path)
        try:
            history[run.listing()[0]] = run.listing()[1]
            scenario.drive(run, history)
        finally:
            run.stop()
        trace = Trace(trace_path, state, initial)
        required = trace.acknowledged_before if scenario.durable == "reply" else trace.synced_before
        distinct = {}
        built = 0
        for point, chosen, files in trace.crash_states(rng):
            built += 1
            key = digest(files)
            need = required(point)
            if key not in distinct or need > distinct[key][0]:
                distinct[key] = (need, point, chosen, files)
        keys = list(distinct)
        rng.shuffle(keys)
        checked = keys[:scenario.limit]
        problems, outcomes = [], set()
        check_dir = os.path.join(base, "chk")
        os.mkdir(check_dir)
        for key in checked:
            need, point, chosen, files = distinct[key]
            problem, revision = check_state(files, scenario.config, history, need, check_dir)
            outcomes.add(revision)
            if problem:
                problems.append(f"{problem}; kept in "
                                + keep_failure(scenario, files, point, chosen, trace, problem, trace_path))
        second = second_level(scenario, [distinct[k] for k in checked[:SECOND_LEVEL]], history, base, rng)
        renames = sum(op["kind"] in ("rename", "exchange") for op in trace.ops)
        print(f"   {scenario.name}: {len(trace.ops)} operations ({renames} renames), "
              f"{len(trace.points())} crash points, "
              f"{built} states built, {len(distinct)} distinct, {len(checked)} started "
              f"({100 * len(checked) // max(1, len(distinct))}%), {len(outcomes)} distinct outcomes "
              f"(revisions {min(outcomes, default=0)}..{max(outcomes, default=0)} of "
              f"{min(history)}..{max(history)}); recoveries crashed again: {second[0]} states", flush=True)
        results.check(not problems and not second[1], f"{scenario.name}: every crash state checked loads an "
                      "acknowledged list, nothing durable lost", "; ".join((problems + second[1])[:3])
                      or f"{len(checked)} states")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def second_level(scenario, samples, history, base, rng):
    """Traces the recovery from each sampled state and checks its own crash states: each loads
    a list the first check accepts, and once recovered, the recovered one."""
    states, problems = 0, []
    for need, point, chosen, files in samples:
        state = os.path.join(base, "again")
        shutil.rmtree(state, ignore_errors=True)
        write_state(state, files)
        trace_path = os.path.join(base, "again.strace")
        run = Run(base, state, scenario.config, scenario.extra, trace=trace_path)
        try:
            recovered = run.listing()
        finally:
            run.stop()
        trace = Trace(trace_path, state, files)
        last = max(trace.points(), default=0)
        seen = set()
        for at, again_chosen, again in trace.crash_states(rng, exhaustive=6, samples=8):
            key = digest(again)
            if key in seen or len(seen) >= 25:
                continue
            seen.add(key)
            states += 1
            require = recovered[0] if at == last else need
            problem, revision = check_state(again, scenario.config, history, require, os.path.join(base, "chk"))
            if not problem and at == last and revision != recovered[0]:
                problem = f"recovered revision {recovered[0]}, but a crash after it loads {revision}"
            if problem:
                problems.append("after recovery: " + problem + "; kept in "
                                + keep_failure(scenario, again, at, again_chosen, trace, problem, trace_path))
    return states, problems


REGRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crashstates")


def run_regressions(results, rng):
    """The crash states that showed a defect, kept in Tests/System/crashstates/<name>/ (state/,
    and expect.json: the revision that was durable, the sections open at it): each must load
    that revision, and so must every crash state of its recovery."""
    for name in sorted(os.listdir(REGRESSIONS)):
        with open(os.path.join(REGRESSIONS, name, "expect.json")) as f:
            expect = json.load(f)
        files = read_state(os.path.join(REGRESSIONS, name, "state"))
        scenario = Scenario(f"regression {name}", ["--sync"], None)
        picture = (tuple(IDS), frozenset(expect["open"]), (expect["items"],) * len(IDS))
        history = {expect["revision"]: picture}
        base = tempfile.mkdtemp(prefix="s36.", dir="/tmp")
        try:
            os.mkdir(os.path.join(base, "chk"))
            problem, _ = check_state(files, scenario.config, history, expect["revision"], os.path.join(base, "chk"))
            states, problems = second_level(scenario, [(expect["revision"], 0, set(), files)], history, base, rng)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        results.check(not problem and not problems, f"{scenario.name}: loads revision {expect['revision']}, "
                      "and so does every crash state of its recovery",
                      "; ".join(([problem] if problem else []) + problems[:2]) or f"{states} states")


def main():
    names = sys.argv[1:]
    if shutil.which("strace") is None:
        print("SKIP crashstates: strace is missing (scripts/deps.sh --test installs it)")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    print(f"seed {SEED} (CRASHSTATES_SEED repeats it); at most {CHECK_LIMIT} distinct states started "
          f"per scenario (CRASHSTATES_LIMIT)", flush=True)
    rng = random.Random(SEED)
    results = Results()
    for scenario in SCENARIOS:
        if names and scenario.name.split()[0] not in names:
            continue
        began = time.monotonic()
        try:
            run_scenario(scenario, results, rng)
        except (RuntimeError, OSError) as error:
            results.check(False, scenario.name, str(error))
        print(f"   ({time.monotonic() - began:.0f} s)", flush=True)
    if not names or "regression" in names:
        run_regressions(results, rng)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
