"""What the event journal (``streamsql/engine/journal.py``) costs, beside the same workbench with
the journal switched off, in the same run:

(a) one-event ``insert`` on a durable workspace with a running query (local runtime, so the
    figure is the commit itself), median over ``--steps`` inserts, the two set-ups alternating
    in rounds so that machine noise hits both alike;
(b) ``Workbench.load`` of ``--rows`` rows with no query running (the load's own checking and
    writing, which the journal adds a column-wise file to), best of ``--rounds``.

    .venv/bin/python benchmarks/bench_journal.py [--steps 2000] [--rows 1000000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from streamsql import Workbench  # noqa: E402
from streamsql.engine.journal import Journal  # noqa: E402

BASE = 1160442000000  # 2006-10-10 01:00:00


class NoJournal(Journal):
    """The baseline: journals nothing."""

    def record(self, outcomes, catalog):
        pass

    def record_columns(self, *a, **k):
        pass


def open_wb(folder: Path, journal: bool, query: bool = True) -> Workbench:
    wb = Workbench(folder, engine="local", durable=True)
    if not journal:
        wb.journal = NoJournal(wb.path, durable=True)
    wb.execute("CREATE STREAM Orders (ticker VARCHAR(10), amount INTEGER)")
    if query:
        wb.query("SELECT STREAM ROWTIME, ticker, amount FROM Orders WHERE amount > 0")
    return wb


def insert_latency(steps: int, rounds: int, folder: Path) -> dict:
    times = {True: [], False: []}
    wbs = {j: open_wb(folder / f"ins-{j}", j) for j in (True, False)}
    per = steps // rounds
    i = 0
    for _ in range(rounds):
        for j in (True, False):
            wb = wbs[j]
            for k in range(per):
                t0 = time.perf_counter()
                wb.insert("Orders", {"ticker": "ORCL", "amount": 1 + k}, rowtime=BASE + (i + k) * 1000)
                times[j].append(time.perf_counter() - t0)
        i += per
    for wb in wbs.values():
        wb.close()
    return {j: statistics.median(t) * 1e6 for j, t in times.items()}


def load_time(rows: int, rounds: int, folder: Path) -> dict:
    out = {True: [], False: []}
    data = {"ROWTIME": BASE + np.arange(rows, dtype=np.int64), "ticker": ["ORCL"] * rows,
            "amount": np.arange(1, rows + 1, dtype=np.int32)}
    for r in range(rounds):
        for j in (False, True):
            wb = open_wb(folder / f"load-{j}-{r}", j, query=False)
            t0 = time.perf_counter()
            wb.load("Orders", data)
            out[j].append(time.perf_counter() - t0)
            wb.close()
    return {j: min(t) for j, t in out.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=1_000_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        lat = insert_latency(a.steps, a.rounds, Path(d))
        print(f"one-event insert (durable, local runtime, median of {a.steps}): "
              f"journal {lat[True]:.0f} us, no journal {lat[False]:.0f} us, ratio {lat[True] / lat[False]:.3f}")
        ld = load_time(a.rows, a.rounds, Path(d))
        print(f"load of {a.rows} rows (best of {a.rounds}): journal {ld[True]:.2f} s, no journal {ld[False]:.2f} s, "
              f"ratio {ld[True] / ld[False]:.3f}")


if __name__ == "__main__":
    main()
