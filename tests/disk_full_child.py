"""Child process of tests/test_disk_full.py: appends to a workspace on a file system that runs out
of space (``tmpfs``: a tmpfs of a few MB, kept full by a filler file with a little space freed
before each operation) or under a file size limit (``rlimit``: RLIMIT_FSIZE, SIGXFSZ ignored,
so an oversized write fails with EFBIG). Some operations fail while writing a log segment, some
while writing catalog.json. After every operation the workbench must be exactly as before a
failed one (steps, clocks, rows, tables, pending rows) or include a successful one; a read-only
opener must see the last commit; at the end, with space back, the workspace is reopened and the
log, the resumed queries and the catalog must hold exactly what was committed.

Usage: python disk_full_child.py MODE WORKSPACE COPY_TO SEED; prints one JSON summary line.
"""
from __future__ import annotations

import errno
import json
import os
import random
import resource
import shutil
import signal
import sys

from streamsql.engine.catalog import Event
from streamsql.engine.errors import WorkspaceError
from streamsql.engine.log import entry_schema
from streamsql.engine.workbench import Workbench

T0 = 1577872800000          # 2020-01-01 10:00:00
ROUNDS = 40
LIMIT = 64 * 1024           # rlimit mode: the largest file the process may write


def fill(path: str) -> None:
    """Grow the filler file until the file system is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            while True:
                try:
                    if os.write(fd, b"\0" * size) < size:
                        break
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)


def state(wb, queries) -> tuple:
    return (wb.last_step, wb.clock("S"), wb.clock("P"), [len(q.rows) for q in queries],
            len(wb.catalog.tables["R"].rows), wb.streams()[2]["pending"])


def main(mode: str, ws: str, copy_to: str, seed: int) -> None:
    rng = random.Random(seed)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    filler = os.path.join(os.path.dirname(ws), "filler")
    wb = Workbench(ws, engine="local")
    wb.execute("CREATE STREAM S (k INTEGER, v VARCHAR(200)); CREATE STREAM P (k INTEGER, v VARCHAR(200));"
               "CREATE TABLE R (x VARCHAR)")
    rows = wb.query("SELECT STREAM ROWTIME, k, v FROM S", name="rows")
    agg = wb.query("SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS m, COUNT(*) AS n, SUM(k) AS total FROM S "
                   "GROUP BY FLOOR(S.ROWTIME TO MINUTE)", name="agg")
    wb.punctuate("P", T0, producer="slow")          # P's rows wait for producer slow: they pile up in catalog.json
    queries = [rows, agg]
    if mode == "rlimit":
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.RLIM_INFINITY))
    committed_s: list[tuple[int, int]] = []         # (rowtime, k) of committed rows of S
    committed_p = 0
    table_rows = 0
    t, k = T0, 0
    ops, failed, messages = 0, 0, {}

    def rows_for(n: int, size: int) -> list[tuple[int, int, str]]:
        nonlocal t, k
        out = []
        for _ in range(n):
            t += 1000
            k += 1
            out.append((t, k, "x" * size))
        return out

    for rnd in range(ROUNDS):
        if mode == "tmpfs":
            fill(filler)
            with open(filler, "r+b") as f:      # free a little: sometimes enough, sometimes not
                f.truncate(max(0, os.path.getsize(filler) - rng.choice([0, 4096, 16384, 65536, 262144])))
        op = rng.choice(["inject", "inject", "load", "table", "pending", "small"])
        before = state(wb, queries)
        step0 = wb.last_step
        try:
            ops += 1
            if op in ("inject", "small"):
                batch = rows_for(1 if op == "small" else rng.choice([10, 100, 600]), rng.choice([10, 150]))
                outs = wb.inject([Event("S", "row", rt, {"k": kk, "v": v}) for rt, kk, v in batch])
                assert all(o.status == "ok" for o in outs)
                committed_s += [(rt, kk) for rt, kk, _ in batch]
            elif op == "load":
                batch = rows_for(rng.choice([100, 600]), 150)
                wb.load("S", {"ROWTIME": [b[0] for b in batch], "k": [b[1] for b in batch], "v": [b[2] for b in batch]})
                committed_s += [(rt, kk) for rt, kk, _ in batch]
            elif op == "table":
                size = rng.choice([100, 100_000])
                wb.execute(f"INSERT INTO R VALUES ('{'y' * size}')")
                table_rows += 1
            else:   # rows of P held for the slow producer: they live in catalog.json
                n = rng.choice([5, 600])
                batch = rows_for(n, 150)
                wb.inject([Event("P", "row", rt, {"k": kk, "v": v}, producer="fast") for rt, kk, v in batch])
                committed_p += n
        except WorkspaceError as e:
            failed += 1
            msg = str(e)
            assert "\n" not in msg and "was undone" in msg, msg
            key = f"{op}: {msg.split(': ')[1].split(';')[0]}"      # e.g. "load: No space left on device"
            messages[key] = messages.get(key, 0) + 1
            assert state(wb, queries) == before, (op, state(wb, queries), before)
            assert not list((wb.path / "log").glob("*/*.tmp"))
        else:
            assert wb.last_step > step0 or op == "table"
        if rnd % 10 == 9:   # a reader sees exactly the last commit, even on a full disk
            ro = Workbench(ws, engine="local", read_only=True)
            assert ro.last_step == wb.last_step and ro.open_warnings == [], ro.open_warnings
            d = ro.catalog.streams["S"]
            assert ro.log.read(d.uid, entry_schema(d.fields), 0, ro.last_step).num_rows >= len(committed_s)
            ro.close()

    # space back: the session goes on
    if mode == "tmpfs":
        os.unlink(filler)
    else:
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    batch = rows_for(3, 10)
    wb.inject([Event("S", "row", rt, {"k": kk, "v": v}) for rt, kk, v in batch])
    committed_s += [(rt, kk) for rt, kk, _ in batch]
    live = [(r.rowtime, r.values[0]) for r in rows.rows]
    live_agg = [r.values for r in agg.rows]
    last_step = wb.last_step
    wb.close()

    wb = Workbench(ws, engine="local")          # reopened: exactly what was committed
    assert wb.open_warnings == [], wb.open_warnings
    assert wb.last_step == last_step
    d = wb.catalog.streams["S"]
    log_rows = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step).to_pydict()
    logged = [(rt, kk) for rt, kk, kind in zip(log_rows["rowtime"], log_rows["c0"], log_rows["kind"]) if kind == 0]
    assert logged == committed_s, (len(logged), len(committed_s))
    assert [(r.rowtime, r.values[0]) for r in wb.queries["rows"].rows] == committed_s == live
    assert [r.values for r in wb.queries["agg"].rows] == live_agg
    minutes: dict[int, list[int]] = {}
    for rt, kk in committed_s:
        minutes.setdefault(rt // 60000 * 60000, []).append(kk)
    closed = sorted(minutes)[:-1]           # the last minute is still open
    assert live_agg == [(m, len(minutes[m]), sum(minutes[m])) for m in closed]
    assert len(wb.catalog.tables["R"].rows) == table_rows
    assert wb.streams()[2]["pending"] == committed_p
    wb.close()
    shutil.copytree(ws, copy_to)
    print(json.dumps({"ops": ops, "failed": failed, "messages": messages, "events": last_step,
                      "rows": len(committed_s), "pending": committed_p, "table_rows": table_rows}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
