"""The trace of a Spark query, from its own stages (no in-process copy of the query).

For the steps of a batch's trace window (source.py), every operator bucket and every stage input
describe what they hold, as data (JSON in the bucket's report; never prose, never pickled
records), and the sink assembles one :class:`~streamsql.engine.runtime.trace_records.StepTrace` per step,
equal to the local runtime's:

- an operator's **held rows** at step s are the candidates it produced at or before s and has not
  released after s. A candidate waits first in its bucket for the present (rule 1 of the release
  rule: ``born <= s < emitted``, the bucket reports it), then in the next stage's input (or the
  sink's) for the operator's frontier over all buckets (rule 2: ``emitted <= s < let go``, that
  input reports it, with the operator's own values, also for rows a WHERE after it drops). A
  UNION ALL's are the rows its merge holds (``let go <= s < merged``, the stage input reports it);
- **clocks** are the input timelines, an operator's **future** is the frontier over its buckets
  without their held rows (the next stage evaluates it, ``host.frontier``), its **state** is the
  sum of its buckets' state views (``Operator.state_view``, sent as changes per step);
- the sink lists the earliest :data:`TRACE_HELD` held rows by ``(stamp, tie)`` with the exact
  count, and builds the records when they are first read (:class:`TraceSegment`).
"""
from __future__ import annotations

import heapq
import json
from decimal import Decimal

import numpy as np

from ... import time as sqltime
from ...operators.release import release_arrival, stream_arrival
from ...operators.union import union_tie
from ..trace_records import TRACE_HELD, StepTrace, operator_trace
from .timeline import Timeline

INF = sqltime.END_OF_TIME


# --------------------------------------------------------------------------- values as JSON

def enc(v):
    """A value (or tuple of them, keys and items of state views) as JSON data."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, Decimal):
        return {"$d": str(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$b": bytes(v).hex()}
    if isinstance(v, (tuple, list)):
        return [enc(x) for x in v]
    return {"$s": str(v)}


def dec(v):
    """The value of :func:`enc` (sequences as tuples)."""
    if isinstance(v, list):
        return tuple(dec(x) for x in v)
    if isinstance(v, dict):
        if "$d" in v:
            return Decimal(v["$d"])
        if "$b" in v:
            return bytes.fromhex(v["$b"])
        return v.get("$s")
    return v


def _dumps(d) -> bytes:
    return json.dumps(d, separators=(",", ":")).encode()


def tl_slice(tl: Timeline, start: int) -> list:
    """A timeline from step ``start`` on: ``[value before start, steps, values]``."""
    before = int(tl.at(np.array([start - 1], np.int64))[0])
    keep = tl.steps >= start
    return [before, tl.steps[keep].tolist(), tl.vals[keep].tolist()]


def tl_of(x: list) -> Timeline:
    return Timeline(np.array(x[1], np.int64), np.array(x[2], np.int64), int(x[0]))


# --------------------------------------------------------------------------- what a stage input holds

def input_trace(spec, keys: dict, r, start: int, raw_of, merged_of, bucket0: bool) -> dict:
    """What one stage input (an operator's bucket, or the sink) holds for the trace window from
    ``start``: ``r2``, rows upstream operators still hold (``[stage, emitted, let go or -1,
    stamp, tie, values]``) and ``mh``, rows its merge holds (``[let go, merged or -1, stamp, tie,
    values]``). ``raw_of(indices, stage)`` and ``merged_of(indices)`` give those rows' values as
    that operator and the merge hold them; ``r`` is the input's ``Resolved``."""
    leaf = np.asarray(keys["leaf"], dtype=np.int64)
    step = np.asarray(keys["step"], dtype=np.int64)
    tup = np.asarray(keys["Tup"], dtype=np.int64)
    lrel, mrel = r.lrel, r.mrel
    ties = keys.get("tie")
    r2 = []
    for j, lf in enumerate(spec.leaves):
        if lf.stage is None:
            continue
        idx = np.nonzero((leaf == j) & ((lrel < 0) | (lrel > start)))[0]
        if not len(idx):
            continue
        for k, v in zip(idx.tolist(), raw_of(idx, lf.stage)):
            r2.append([lf.stage, int(step[k]), int(lrel[k]), int(tup[k]), (ties[k] or b"").hex(), enc(v)])
    out = {"r2": r2}
    if len(spec.leaves) > 1:
        drop = keys.get("drop")
        ok = (lrel >= 0) & ((mrel < 0) | (mrel > start))
        if drop is not None:
            ok &= np.asarray(drop, dtype=np.int64) != 1
        idx = np.nonzero(ok)[0]
        t = np.asarray(keys["T"], dtype=np.int64)
        sub = np.asarray(keys["sub"], dtype=np.int64)
        mh = []
        for k, v in zip(idx.tolist(), merged_of(idx)):
            j = int(leaf[k])
            a = (release_arrival(int(lrel[k]), int(tup[k]), ties[k] or b"") if spec.leaves[j].stage is not None
                 else stream_arrival(int(step[k]), int(sub[k])))
            mh.append([int(lrel[k]), int(mrel[k]), int(t[k]), union_tie(j, a).hex(), enc(v)])
        out["mh"] = mh
        if bucket0:
            out["leaves"] = [tl_slice(tl, start) for tl in r.leaves]
    return out


def bucket_trace(stage: int, bucket: int, bt, inputs: list, clocks: list | None, futures: dict) -> bytes:
    """One bucket's trace report (JSON): its rule-1 held candidates, its state views over the
    window (the one before it, then changes), its inputs' holdings; bucket 0 adds the operator's
    input clocks and the ``future`` of the stages feeding it."""
    views = []
    prev_items, prev_tot = bt.base
    for s, (items, tot) in bt.views:
        up = [[enc(k), enc(v)] for k, v in items.items() if prev_items.get(k, _MISSING) != v]
        gone = [enc(k) for k in prev_items if k not in items]
        views.append([s, up, gone, None if tot == prev_tot else enc_totals(tot)])
        prev_items, prev_tot = items, tot
    d = {"stage": stage, "bucket": bucket,
         "held": [[b, e, c.stamp, c.tie.hex(), enc(tuple(c.row))] for b, e, c in bt.held],
         "base": [[[enc(k), enc(v)] for k, v in bt.base[0].items()], enc_totals(bt.base[1])],
         "views": views, "inputs": inputs}
    if clocks is not None:
        d["clocks"] = [tl_slice(tl, bt.start) for tl in clocks]
        d["fut"] = {str(y): tl_slice(tl, bt.start) for y, tl in futures.items()}
    return _dumps(d)


def sink_trace(stage: int, start: int, inputs: list, futures: dict) -> bytes:
    return _dumps({"stage": stage, "bucket": 0, "held": [], "base": [[], {}], "views": [], "inputs": inputs,
                   "fut": {str(y): tl_slice(tl, start) for y, tl in futures.items()}})


_MISSING = object()


def enc_totals(t: dict) -> dict:
    return {k: enc(v) for k, v in t.items()}


def dec_totals(t: dict) -> dict:
    return {k: dec(v) for k, v in t.items()}


# --------------------------------------------------------------------------- the sink's side

class TraceAssembler:
    """Turns a batch's reports into the query's step records (in the driver, by the sink).
    ``hosts``: the trace's operators (``plans.trace_hosts``); ``ops``: an operator instance per
    stage (for its state record and frontier reasons); ``consumer``: which stage reads each
    stage's output."""

    def __init__(self, hosts: list, ops: dict, consumer: dict):
        self.hosts = hosts
        self.ops = ops
        self.consumer = consumer

    def segment(self, steps: np.ndarray, reports: list[bytes], released: dict, bound: Timeline) -> "TraceSegment":
        by: dict[int, list] = {}
        for b in reports:
            d = json.loads(b)
            by.setdefault(int(d["stage"]), []).append(d)
        for ds in by.values():
            ds.sort(key=lambda d: d["bucket"])
        hosts = []
        for h in self.hosts:
            if h.input is None:
                hosts.append(self._op_host(h, by))
            else:
                hosts.append(self._merge_host(h, by))
        return TraceSegment([int(s) for s in steps], hosts, released, bound)

    def _op_host(self, h, by) -> dict:
        y = h.stage
        mine = by.get(y, [])
        b0 = mine[0] if mine else {}
        clocks = [tl_of(x) for x in b0.get("clocks", [])] or [Timeline.constant(sqltime.NO_TIME)] * len(h.inputs)
        z = self.consumer[y]
        cons = by.get(z, [])
        fut = cons[0].get("fut", {}).get(str(y)) if cons else None
        rows = [(b, e, stamp, tie, vals) for d in mine for b, e, stamp, tie, vals in d["held"]]
        rows += [(e, lr, stamp, tie, vals) for d in cons for inp in d["inputs"]
                 for st, e, lr, stamp, tie, vals in inp.get("r2", ()) if st == y]
        views = [([(dec(k), dec(v)) for k, v in d["base"][0]], dec_totals(d["base"][1]),
                  [(s, [(dec(k), dec(v)) for k, v in up], [dec(k) for k in gone],
                    None if tot is None else dec_totals(tot)) for s, up, gone, tot in d["views"]])
                 for d in mine]
        return {"host": h, "op": self.ops[y], "clocks": clocks,
                "future": tl_of(fut) if fut is not None else None, "held": _Held(rows), "views": views}

    def _merge_host(self, h, by) -> dict:
        mine = by.get(h.stage, [])
        rows = [tuple(x) for d in mine for x in d["inputs"][h.input].get("mh", ())]
        b0 = mine[0]["inputs"][h.input] if mine else {}
        clocks = [tl_of(x) for x in b0.get("leaves", [])] or [Timeline.constant(sqltime.NO_TIME)] * len(h.inputs)
        return {"host": h, "op": None, "clocks": clocks, "future": None, "held": _Held(rows), "views": None}


class _Held:
    """Rows an operator holds over the window, as intervals of steps ``[start, end)``."""

    def __init__(self, rows: list):
        self.start = np.array([r[0] for r in rows], np.int64)
        end = np.array([r[1] for r in rows], np.int64)
        self.end = np.where(end < 0, INF, end)
        self.stamp = np.array([r[2] for r in rows], np.int64)
        self.tie = [bytes.fromhex(r[3]) for r in rows]
        self.values = [dec(r[4]) for r in rows]

    def at(self, s: int) -> tuple[list, int]:
        """``(earliest held rows as (stamp, values), how many)`` after step ``s``."""
        idx = np.nonzero((self.start <= s) & (s < self.end))[0]
        n = len(idx)
        if n > TRACE_HELD:
            idx = heapq.nsmallest(TRACE_HELD, idx.tolist(), key=lambda i: (int(self.stamp[i]), self.tie[i]))
        else:
            idx = sorted(idx.tolist(), key=lambda i: (int(self.stamp[i]), self.tie[i]))
        return [(int(self.stamp[i]), self.values[i]) for i in idx], n


class TraceSegment:
    """The step records of one batch's trace window, built when first read (in step order, one
    pass over the state changes; reading them backwards starts over)."""

    def __init__(self, steps: list[int], hosts: list[dict], released: dict, bound: Timeline):
        self.steps = steps
        self.hosts = hosts
        self.released = released
        self.bound = bound
        self._reset()

    def _reset(self) -> None:
        self._at = -1
        self._cur = []
        for h in self.hosts:
            if h["views"] is None:
                self._cur.append(None)
                continue
            self._cur.append([[dict(items), dict(tot), 0] for items, tot, _ch in h["views"]])
        self._states: list = [None] * len(self.hosts)

    def entries(self) -> list:
        return [_LazyStep(self, k) for k in range(len(self.steps))]

    def record(self, k: int) -> StepTrace:
        if k < self._at:
            self._reset()
        s = self.steps[k]
        ops = []
        for n, h in enumerate(self.hosts):
            host = h["host"]
            clocks = [int(tl.at(np.array([s], np.int64))[0]) for tl in h["clocks"]]
            if h["future"] is not None:
                future = int(h["future"].at(np.array([s], np.int64))[0])
            else:
                future = min(clocks) if clocks else sqltime.NO_TIME
            state = None
            if h["views"] is not None:
                changed = self._states[n] is None
                for cur, (_b, _t, changes) in zip(self._cur[n], h["views"]):
                    while cur[2] < len(changes) and changes[cur[2]][0] <= s:
                        _s, up, gone, tot = changes[cur[2]]
                        for key in gone:
                            cur[0].pop(key, None)
                        cur[0].update(up)
                        if tot is not None:
                            cur[1] = tot
                        cur[2] += 1
                        changed = True
                if changed:
                    self._states[n] = h["op"].trace_state([(items, tot) for items, tot, _i in self._cur[n]])
                state = self._states[n]
            held, count = h["held"].at(s)
            ops.append(operator_trace(h["op"], host.name, host.inputs, clocks, future, held, count, state))
        self._at = k
        return StepTrace(s, tuple(ops), int(self.released.get(s, 0)),
                         int(self.bound.at(np.array([s], np.int64))[0]))


class _LazyStep:
    __slots__ = ("segment", "k", "step")

    def __init__(self, segment: TraceSegment, k: int):
        self.segment, self.k = segment, k
        self.step = segment.steps[k]

    def build(self) -> StepTrace:
        return self.segment.record(self.k)
