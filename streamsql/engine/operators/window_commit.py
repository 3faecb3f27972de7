"""The commit step of an OVER window's batch path: the plans of all its window specifications,
computed without touching the operator, become its state in one go: every surviving partition's
run (the rows it keeps, its frame and accumulators), new runs with their serial numbers (created
in row order, windows in order within a row), the expiry heaps and the next wake-up."""
from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from .arrays import ranges
from .base import INF
from .window_plan import GroupPlan
from .window_runs import Run, SlidingAcc


def commit(op, plans: list[GroupPlan]) -> list[list]:
    """Write the plans' final state into the operator (runs, expiry heaps, serials, wake-up) and
    return every call's values, in row order."""
    # serial numbers: runs are created in row order, windows in order within a row
    created = sorted((int(pl.perm[j]), pl.gi, int(pl.bpid[j])) for pl in plans
                     for j in np.flatnonzero(pl.newlife).tolist())
    serial_of = {(gi, p, r): op.serial + 1 + i for i, (r, gi, p) in enumerate(created)}
    op.serial += len(created)
    last_life = {}
    for r, gi, p in created:
        last_life[(gi, p)] = r
    for pl in plans:
        g = pl.g
        touched = {part: p for p, part in enumerate(pl.parts)}
        nth = {p: i for i, p in enumerate(pl.alive_ids.tolist())}
        kept = kept_rows(pl)
        new_runs: dict = {}
        heap: list = []
        for part, run in g.runs.items():
            p = touched.get(part)
            if p is None:
                new_runs[part] = run
                continue
            if pl.continuing[p] and pl.alive[p]:
                new_runs[part] = fill_run(pl, nth[p], run, kept)
        fresh = sorted((last_life[(pl.gi, p)], p) for p in np.flatnonzero(pl.alive & ~pl.continuing).tolist())
        for r, p in fresh:
            run = Run(len(g.calls), serial_of[(pl.gi, p, r)])
            new_runs[pl.parts[p]] = fill_run(pl, nth[p], run, kept)
        keep = {id(run) for part, run in new_runs.items() if part not in touched}
        for when, serial, part in g.expiry:
            run = g.runs.get(part)
            if run is not None and run.serial == serial and id(run) in keep:
                heap.append((when, serial, part))
        if pl.kind != "plain":
            for p, w in zip(pl.alive_ids.tolist(), pl.when[pl.alive_ids].tolist()):
                part = pl.parts[p]
                heap.append((w, new_runs[part].serial, part))
        heapq.heapify(heap)
        g.runs = new_runs
        g.expiry = heap
    op.next_wake = min((g.expiry[0][0] for g in op.groups if g.expiry), default=INF)
    # the values, per call in row order
    res = [None] * len(op.node.calls)
    for pl in plans:
        for k, c in enumerate(pl.g.calls):
            res[c] = pl.results[k]["values"].tolist()
    return res


def fill_run(plan: GroupPlan, i: int, run: Run, kept) -> Run:
    """Fill ``run`` (kept or new) with the final state of the ``i``-th surviving partition;
    ``kept`` holds the order values and argument tuples of the rows all surviving partitions
    keep, one partition after another, where each begins, and their frames' indices."""
    o_all, v_all, starts, base, lo, hi = kept
    a, b = starts[i], starts[i + 1]
    run.o = deque(o_all[a:b])
    run.vals = deque(v_all[a:b])
    run.base, run.lo, run.hi = base[i], lo[i], hi[i]
    accs = []
    for res in plan.results:
        st = res["final"]
        acc = SlidingAcc.__new__(SlidingAcc)
        acc.n, acc.nn = st["n"][i], st["nn"][i]
        acc.sum = st["sum"][i] if "sum" in st else None
        acc.minq = deque(st["minq"][i]) if "minq" in st else deque()
        acc.maxq = deque(st["maxq"][i]) if "maxq" in st else deque()
        acc.firstq = deque(st["firstq"][i]) if "firstq" in st else deque()
        acc.last = st["last"][i]
        accs.append(acc)
    run.acc = accs
    return run


def kept_rows(plan: GroupPlan):
    """The rows the surviving partitions keep (order values, argument tuples: all partitions in
    one list each, and where each partition's begin), and their runs' base, lo and hi."""
    A = plan.alive_ids
    pos, seg = ranges(plan.base_f[A], plan.seg_end[A] - 1)
    o_all = plan.comb_o[pos].tolist()
    cols = [v.pick(pos) for v in plan.vals]
    v_all = list(zip(*cols)) if cols else [()] * len(pos)
    starts = [0] + np.cumsum(np.bincount(seg, minlength=len(A))).tolist()
    off = plan.fa_off
    if plan.sliding:
        lo = (plan.lo_f[A] + off).tolist()
    else:   # a cumulative frame's start stays where the run had it (0 for a new one)
        lo = np.where(plan.continuing, plan.lo_state - plan.seg_start + plan.idx0, 0)[A].tolist()
    return o_all, v_all, starts, (plan.base_f[A] + off).tolist(), lo, (plan.hi_f[A] + off).tolist()
