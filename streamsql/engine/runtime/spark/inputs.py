"""The input side of a stage (a stateful operator's bucket, or the sink): which rows it may use
at which step, in which order, and what its input clock is at every step.

A stage input is a merge (UNION ALL) of *leaves*. A leaf is a named stream (its rows are usable at
their own step; its clock is the stream's bound) or the output of an upstream stage (a candidate
stamped ``Tup`` emitted at step ``e`` is usable at the first step ``>= e`` where the upstream's
frontier ``F`` reaches ``Tup``; its clock is that frontier). Leaves with ROWTIME projections see
those clocks mapped. A merge of several leaves releases a row at the first step where every
leaf's clock has reached its stamp. The order, and the arrival keys built here, are the ones the
local runtime produces, which is what makes ties come out the same.

Everything works on column arrays (``keys``: ``leaf, step, sub, T, Tup, tie``); callers keep the
row values in their own form (Arrow in the sink, pandas in operator buckets) and take rows by
the indices returned.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import time as sqltime
from ...expr import rowtime_map_array
from ...operators.release import first_reach, release_arrival, stream_arrival
from ...operators.union import union_tie
from .timeline import Timeline, union_points


@dataclass
class LeafSpec:
    stream_index: int | None          # index of the stream in the source spec, or
    stage: int | None                 # index of the upstream stage
    maps: list                        # ROWTIME expressions from the leaf's origin to the merge
    initial: int = sqltime.NO_TIME          # the origin's clock when the query started


@dataclass
class InputSpec:
    leaves: list[LeafSpec]
    post_maps: list = field(default_factory=list)

    @property
    def all_streams(self) -> bool:
        return all(lf.stage is None for lf in self.leaves)


@dataclass
class InputState:
    raw_clocks: list[int] = field(default_factory=list)   # each leaf's origin clock, unmapped


@dataclass
class Resolved:
    order: np.ndarray            # indices of usable rows, in release order
    rel: np.ndarray              # their steps
    held: np.ndarray             # indices of rows still waiting
    clock: Timeline              # the input's clock over the batch
    arrival: list | None = None  # arrival keys of the usable rows (when asked for)
    # for the trace: per row, the step its leaf let it go (upstream operator's release) and the
    # step the merge released it (-1: not yet); each leaf's clock as the merge sees it
    lrel: np.ndarray | None = None
    mrel: np.ndarray | None = None
    leaves: list | None = None
    # rows that fail (``keys["fail"]``) and fail in this batch: their indices and steps, in order
    failed: np.ndarray | None = None
    fail_steps: np.ndarray | None = None


def _map(vals: np.ndarray, maps: list) -> np.ndarray:
    for e in maps:
        vals = rowtime_map_array(e, vals)
    return vals


def _map1(v: int, maps: list) -> int:
    return int(_map(np.array([v], dtype=np.int64), maps)[0])


def resolve_input(spec: InputSpec, keys: dict, origin: dict, state: InputState,
                  need_arrival: bool = False) -> Resolved:
    """``keys`` holds the rows' columns (held rows first, then this batch's); ``origin`` maps
    ``("s", k)`` / ``("y", stage)`` to the raw :class:`Timeline` of that origin over the batch.

    With the trace on, ``keys["drop"]`` marks rows a leaf's WHERE dropped (1: they only wait for
    their upstream operator to let them go) or the post-merge WHERE dropped (2: they also wait for
    the merge), so that the trace sees what each operator holds; they are never usable.

    ``keys["fail"]`` marks rows a leaf's WHERE or projections cannot compute (``failures.py``):
    1, they fail where their leaf lets them go; 2, where the merge releases them (stamped ``T``).
    They wait like rows dropped at the same place, are never usable, and come back in
    ``Resolved.failed`` at the step they fail."""
    if not state.raw_clocks:
        state.raw_clocks = [lf.initial for lf in spec.leaves]
    leaf_tl: list[Timeline] = []
    for j, lf in enumerate(spec.leaves):
        raw = origin.get(("s", lf.stream_index) if lf.stage is None else ("y", lf.stage))
        prev = state.raw_clocks[j]
        raw = (Timeline.constant(prev) if raw is None else
               Timeline(raw.steps, np.maximum(raw.vals, prev), max(raw.initial, prev)))
        state.raw_clocks[j] = raw.last
        leaf_tl.append(raw)
    mapped = [Timeline(tl.steps, _map(tl.vals, lf.maps), _map1(tl.initial, lf.maps))
              for tl, lf in zip(leaf_tl, spec.leaves)]

    n = len(keys["step"])
    leaf = np.asarray(keys["leaf"], dtype=np.int64)
    step = np.asarray(keys["step"], dtype=np.int64)
    lrel = np.full(n, -1, dtype=np.int64)
    for j, lf in enumerate(spec.leaves):
        m = leaf == j
        if not m.any():
            continue
        if lf.stage is None:
            lrel[m] = step[m]
        else:
            tl = leaf_tl[j]
            lrel[m] = first_reach(tl.steps, np.maximum.accumulate(tl.vals) if len(tl.vals) else tl.vals,
                                   tl.initial, np.asarray(keys["Tup"], dtype=np.int64)[m], step[m])
    if len(spec.leaves) == 1:
        clock = Timeline(mapped[0].steps, _map(mapped[0].vals, spec.post_maps), _map1(mapped[0].initial, spec.post_maps))
        rel = lrel
    else:
        pts = union_points(*[m.steps for m in mapped])
        present = np.min(np.stack([m.at(pts) for m in mapped]), axis=0) if len(pts) else np.zeros(0, np.int64)
        init = min(m.initial for m in mapped)
        clock = Timeline(pts, _map(present, spec.post_maps), _map1(init, spec.post_maps))
        rel = np.full(n, -1, dtype=np.int64)
        ok = lrel >= 0
        if ok.any():
            stamps = np.asarray(keys["T"], dtype=np.int64)[ok]
            rel[ok] = first_reach(pts, present, init, stamps, lrel[ok])
    drop = keys.get("drop")
    fail = keys.get("fail")
    failed = fail_steps = None
    if fail is not None:
        fail = np.asarray(fail, dtype=np.int64)
        fstep = np.where(fail == 1, lrel, np.where(fail == 2, rel, -1))
        failed = np.nonzero((fail != 0) & (fstep >= 0))[0]
        fail_steps = fstep[failed]
        # a failing row waits as a row dropped at the same place would
        base = np.zeros(n, dtype=np.int64) if drop is None else np.asarray(drop, dtype=np.int64)
        drop = np.where(fail != 0, fail, base)
    mrel = rel
    if drop is not None:
        drop = np.asarray(drop, dtype=np.int64)
        mrel = np.where(drop == 1, -1, rel)
        if len(spec.leaves) == 1:
            mrel = np.where(drop != 0, -1, mrel)
        gone = ((drop == 1) & (lrel >= 0)) | ((drop == 2) & (rel >= 0))
        usable = np.nonzero((rel >= 0) & (drop == 0))[0]
        held = np.nonzero((mrel < 0) & ~gone)[0]
    else:
        usable = np.nonzero(rel >= 0)[0]
        held = np.nonzero(rel < 0)[0]
    order = usable[_sort(spec, keys, usable, rel, lrel)]
    arrival = _arrivals(spec, keys, order, rel, lrel) if need_arrival else None
    return Resolved(order, rel[order], held, clock, arrival, lrel, mrel, mapped, failed, fail_steps)


def _sort(spec: InputSpec, keys: dict, idx: np.ndarray, rel: np.ndarray, lrel: np.ndarray) -> np.ndarray:
    if not len(idx):
        return idx
    step = np.asarray(keys["step"], dtype=np.int64)[idx]
    sub = np.asarray(keys["sub"], dtype=np.int64)[idx]
    if spec.all_streams:
        if len(spec.leaves) == 1:
            return np.lexsort((sub, step))
        leaf = np.asarray(keys["leaf"], dtype=np.int64)[idx]
        t = np.asarray(keys["T"], dtype=np.int64)[idx]
        return np.lexsort((sub, step, leaf, t, rel[idx]))
    leaf = np.asarray(keys["leaf"], dtype=np.int64)[idx]
    t = np.asarray(keys["T"], dtype=np.int64)[idx]
    tup = np.asarray(keys["Tup"], dtype=np.int64)[idx]
    tie = keys["tie"]
    stage = [lf.stage is not None for lf in spec.leaves]
    single = len(spec.leaves) == 1

    def key(k):
        i = idx[k]
        lf = int(leaf[k])
        la = (int(lrel[i]), int(tup[k]), tie[i] or b"") if stage[lf] else (int(step[k]), int(sub[k]), b"")
        return la if single else (int(rel[i]), int(t[k]), lf) + la
    return np.array(sorted(range(len(idx)), key=key), dtype=np.int64)


def _arrivals(spec: InputSpec, keys: dict, order: np.ndarray, rel: np.ndarray, lrel: np.ndarray) -> list:
    stage = [lf.stage is not None for lf in spec.leaves]
    single = len(spec.leaves) == 1
    leaf = np.asarray(keys["leaf"], dtype=np.int64)
    out = []
    for i in order:
        lf = int(leaf[i])
        if stage[lf]:
            a = release_arrival(int(lrel[i]), int(keys["Tup"][i]), keys["tie"][i] or b"")
        else:
            a = stream_arrival(int(keys["step"][i]), int(keys["sub"][i]))
        if not single:
            a = release_arrival(int(rel[i]), int(keys["T"][i]), union_tie(lf, a))
        out.append(a)
    return out
