"""Nothing lost under kill -9 (docs/reliability.md). A child process appends events to two streams
read by a GROUP BY and a window join on Spark; the test kills it with SIGKILL at random moments
(while it appends, while Spark runs a micro-batch, while it checkpoints: the child runs all three
at once), and each time a new child reopens the workspace (taking over the dead one's lock) and
goes on from the last committed event. At the end every committed event is in the log once, each
query's rows are exactly those of an uninterrupted run (none lost, none repeated, same steps),
and the clocks are those of the uninterrupted run.

``STREAMSQL_CRASH_KILLS`` sets the number of kills (20, in CI too: each kill costs a new child
with its own Spark, about 14 s on two cores with the class-data archive; ``scripts/crash.sh N``
runs N)."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import streamsql

ROOT = Path(__file__).resolve().parent.parent
KILLS = int(os.environ.get("STREAMSQL_CRASH_KILLS", "20"))
N_EVENTS = 240
DDL = "CREATE STREAM S (k VARCHAR(3), x INTEGER); CREATE STREAM T (k VARCHAR(3), y INTEGER);"
QUERIES = {
    # 60 / x refuses the rows with x = 0 (DIVISION_BY_ZERO): on Spark they reach ERRORS in late,
    # error-only commits, which a kill can cut too
    "g": """SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS ROWTIME, k, COUNT(*) AS n, SUM(x) AS sx, SUM(60 / x) AS q
            FROM S GROUP BY FLOOR(S.ROWTIME TO MINUTE), k""",
    "j": """SELECT STREAM ROWTIME, s.k, s.x, t.y FROM S OVER (RANGE INTERVAL '2' MINUTE PRECEDING) AS s
            JOIN T OVER (RANGE INTERVAL '1' MINUTE FOLLOWING) AS t ON s.k = t.k""",
}

#: the child: opens (or reopens) the workspace, starts the queries the first time, and appends the
#: events from the last committed one on, in small appends, waiting on the queries now and then
CHILD = textwrap.dedent("""
    import json, os, signal, sys
    sys.path.insert(0, sys.argv[3])
    from test_crash import DDL, QUERIES, events, _kill_tree
    crash_at = int(sys.argv[4])
    if crash_at:      # kill -9 this process and its tree (Spark's JVM, its workers) at that replace
        real_replace, calls = os.replace, [0]
        def replace(src, dst, *a, **kw):
            calls[0] += 1
            if calls[0] == crash_at:
                print("killed before replacing", os.path.relpath(dst, sys.argv[1]), flush=True)
                _kill_tree(os.getpid())
            return real_replace(src, dst, *a, **kw)
        os.replace = replace
    from streamsql import Workbench
    wb = Workbench(sys.argv[1], engine="spark")
    if "S" not in wb.catalog.streams:
        wb.execute(DDL)
    for name, sql in QUERIES.items():
        if name not in wb.queries:
            wb.query(sql, name=name)
    evs = events()
    upto = int(sys.argv[2])
    print("open", wb.last_step, json.dumps(wb.open_warnings), flush=True)
    n = 0
    while wb.last_step < upto:
        done = wb.last_step
        wb.inject(evs[done:min(done + 4, upto)])
        n += 1
        print("appended", wb.last_step, flush=True)
        if n % 3 == 0:
            for q in wb.queries.values():
                q.wait(timeout=300)
            print("waited", wb.last_step, flush=True)
    for q in wb.queries.values():
        q.wait(timeout=300)
    print("done", wb.last_step, flush=True)
    wb.close()
""")


def events() -> list:
    """Rows on S and T one second apart in rowtime, keys a/b/c, a bound now and then: every event
    is accepted, so event i is step i + 1 of the workspace."""
    from streamsql.engine import time as T
    from streamsql.engine.catalog import Event
    rng = random.Random(13)
    t = T.parse_timestamp("2006-10-10 10:00:00")
    out = []
    for i in range(N_EVENTS):
        t += 1000 * rng.choice([1, 2, 5])
        if i % 17 == 16:
            out.append(Event(rng.choice("ST"), "bound", t))
        elif rng.random() < 0.5:
            out.append(Event("S", "row", t, {"k": rng.choice("abc"), "x": rng.randint(-5, 9)}))
        else:
            out.append(Event("T", "row", t, {"k": rng.choice("abc"), "y": rng.randint(0, 9)}))
    out += [Event("S", "bound", t + 3_600_000), Event("T", "bound", t + 3_600_000)]
    return out


def _rows(wb) -> dict:
    return {name: [(r.step, r.rowtime, r.values) for r in wb.queries[name].wait(timeout=300).rows]
            for name in QUERIES}


def _error_rows(wb) -> list:
    """ERRORS' rows (all columns but ERROR_TIME, with their step), in a canonical order."""
    from streamsql.engine.catalog import ERROR_STREAM
    from streamsql.engine.log import entry_schema
    d = wb.catalog.streams[ERROR_STREAM]
    t = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step).to_pylist()
    keep = [i for i, f in enumerate(d.fields) if f.name != "ERROR_TIME"]
    return sorted((r["step"], *(r[f"c{i}"] for i in keep)) for r in t)


def _reference() -> tuple[dict, dict, list]:
    wb = streamsql.Workbench(None, engine="local", durable=False, trace=False)
    try:
        wb.execute(DDL)
        for name, sql in QUERIES.items():
            wb.query(sql, name=name)
        wb.inject(events())
        return _rows(wb), {s: wb.clock(s) for s in "ST"}, _error_rows(wb)
    finally:
        wb.close()


def _run_child(ws: Path, upto: int, kill_after: float | None, log: list, crash_at: int = 0) -> int | None:
    """Runs a child until ``upto`` events are committed; with ``kill_after``, SIGKILLs it that many
    seconds after it has opened the workspace; with ``crash_at``, the child kills itself just
    before its ``crash_at``-th file replace (a log segment, the catalog, HEAD, a late error
    segment, the sink's output and state: every durable write goes through one). Returns the
    exit status (``-9`` when killed)."""
    err_path = ws.parent / f"child-{len(log)}.err"
    with open(err_path, "w") as err_file:
        p = subprocess.Popen([sys.executable, "-c", CHILD, str(ws), str(upto), str(Path(__file__).parent),
                              str(crash_at)],
                             stdout=subprocess.PIPE, stderr=err_file, text=True, cwd=ws.parent, start_new_session=True)
    t0 = time.monotonic()
    try:
        first = p.stdout.readline()
        opened = time.monotonic() - t0
        at_open = []
        if first.startswith("killed"):         # at a write of the opening itself (repair, resume)
            first, at_open = "open ? []", [first.strip() + " (while opening)"]
        assert first.startswith("open"), first + err_path.read_text()[-3000:]
        if kill_after is not None:
            time.sleep(kill_after)
            _kill_tree(p.pid)                  # Spark's JVM and its Python workers die with it
        out, _ = p.communicate(timeout=600)
        log.append((first.strip(), kill_after, out.strip().splitlines()[-1:] if out.strip() else at_open))
        print(f"child {len(log)}: opened in {opened:.1f} s, ended after {time.monotonic() - t0:.1f} s", flush=True)
        if p.returncode not in (0, -9):
            raise AssertionError(f"child failed ({p.returncode}):\n{err_path.read_text()[-3000:]}")
        return p.returncode
    finally:
        if p.poll() is None:
            _kill_tree(p.pid)
            p.wait()


def _kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it (the descendants first: none is reparented)."""
    for p in _descendants(pid) + [pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid,ppid"], capture_output=True, text=True).stdout.split("\n")[1:]
    children: dict[int, list[int]] = {}
    for line in out:
        if line.strip():
            c, par = map(int, line.split())
            children.setdefault(par, []).append(c)
    todo, seen = [pid], []
    while todo:
        for c in children.get(todo.pop(), []):
            seen.append(c)
            todo.append(c)
    return seen


@pytest.mark.timeout(1800)
def test_sigkill_at_random_moments_loses_and_repeats_nothing(tmp_path, spark):
    expected_rows, expected_clocks, expected_errors = _reference()
    assert sum(len(v) for v in expected_rows.values()) > 40
    assert 5 < len(expected_errors) < 40, expected_errors
    ws = tmp_path / "ws"
    rng = random.Random(int(os.environ.get("STREAMSQL_CRASH_SEED", "20261125")))
    log: list = []
    total = len(events())
    killed = 0
    while killed < KILLS:
        # half the kills at a random moment, half at a random durable write of the child
        if killed % 2:
            status = _run_child(ws, total, None, log, crash_at=rng.randint(1, 40))
        else:
            status = _run_child(ws, total, rng.uniform(0.3, 4.0), log)
        killed += status == -9
        if status == 0:       # it finished before the kill: start over on a new workspace part
            break
    assert killed == KILLS or log[-1][2] == [f"done {total}"], log
    print(f"{killed} kills; where each child was when killed (opened at, last line): "
          f"{[(first.split(' [')[0], last) for first, _k, last in log]}")
    repaired = [w for first, _k, _l in log for w in json.loads(first.split(" ", 2)[2])]
    print(f"warnings of the reopenings ({len(repaired)}): {repaired}")
    # a last child finishes the input (if it was not finished) and closes cleanly
    assert _run_child(ws, total, None, log) == 0, log

    wb = streamsql.Workbench(ws, engine="spark")
    try:
        assert wb.last_step == total
        assert not wb.open_warnings, wb.open_warnings     # the last child closed cleanly
        got = _rows(wb)
        for name in QUERIES:
            assert got[name] == expected_rows[name], f"query {name} after {killed} kills: {log}"
        assert {s: wb.clock(s) for s in "ST"} == expected_clocks
        # every refused row in ERRORS once, at its step (a late commit a kill cut is torn and redone)
        assert _error_rows(wb) == expected_errors
        # the log: every event once, at its step, with its values
        from streamsql.engine.log import entry_schema
        logged = {}
        for s in "ST":
            d = wb.catalog.streams[s]
            t = wb.log.read(d.uid, entry_schema(d.fields), 0, total).to_pydict()
            for i, step in enumerate(t["step"]):
                assert step not in logged, f"step {step} logged twice"
                logged[step] = (s, t["rowtime"][i], tuple(t[f"c{c}"][i] for c in range(len(d.fields))))
        evs = events()
        assert sorted(logged) == list(range(1, total + 1))
        rows = {step: v for step, v in logged.items() if evs[step - 1].kind == "row"}
        assert rows == {i + 1: (e.stream, e.rowtime, tuple(e.values.values())) for i, e in enumerate(evs)
                        if e.kind == "row"}
    finally:
        wb.close()
