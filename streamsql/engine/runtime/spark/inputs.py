"""The input side of a stage (a stateful operator's bucket, or the sink): which rows it may use
at which step, in which order, and what its input clock is at every step.

A stage input is a merge (UNION ALL) of *leaves*. A leaf is a named stream (its rows are usable at
their own step; its clock is the stream's bound) or the output of an upstream stage (a candidate
stamped ``Tup`` emitted at step ``e`` is usable at the first step ``>= e`` where the upstream's
frontier ``F`` reaches ``Tup``; its clock is that frontier). Leaves with ROWTIME projections see
those clocks mapped. A merge of several leaves releases a row at the first step where every
leaf's clock has reached its stamp. The arrival keys built here are byte-for-byte the ones the
local runtime builds, which is what makes ties come out the same.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import time as T
from ...expr import rowtime_map_array
from ...operators.base import encode_ints, release_arrival
from .timeline import Timeline, union_points


@dataclass
class LeafSpec:
    stream_index: int | None          # index of the stream in the source spec, or
    stage: int | None                 # index of the upstream stage
    maps: list                        # ROWTIME expressions from the leaf's origin to the merge
    initial: int = T.NO_TIME          # the origin's clock when the query started


@dataclass
class InputSpec:
    leaves: list[LeafSpec]
    post_maps: list = field(default_factory=list)


@dataclass
class InputState:
    held: pd.DataFrame | None = None           # rows not yet usable
    raw_clocks: list[int] = field(default_factory=list)   # each leaf's origin clock, unmapped


def _map(vals: np.ndarray, maps: list) -> np.ndarray:
    for e in maps:
        vals = rowtime_map_array(e, vals)
    return vals


def _map1(v: int, maps: list) -> int:
    return int(_map(np.array([v], dtype=np.int64), maps)[0])


def resolve_input(spec: InputSpec, rows: pd.DataFrame, origin: dict, state: InputState,
                  ) -> tuple[pd.DataFrame, Timeline]:
    """``rows`` has columns ``leaf, seq, sub, T, Tup, tie, ort`` and values; ``origin`` maps
    ``("s", k)`` / ``("y", stage)`` to the raw :class:`Timeline` of that origin over this batch.
    Returns the rows usable in this batch, in order, with ``rel`` (their step) and ``arrival``,
    and the input's clock timeline. Rows not usable yet stay in ``state.held``."""
    if not state.raw_clocks:
        state.raw_clocks = [lf.initial for lf in spec.leaves]
    leaf_tl: list[Timeline] = []
    for j, lf in enumerate(spec.leaves):
        key = ("s", lf.stream_index) if lf.stage is None else ("y", lf.stage)
        raw = origin.get(key)
        if raw is None:
            raw = Timeline.constant(state.raw_clocks[j])
        else:
            raw = Timeline(raw.seqs, np.maximum(raw.vals, state.raw_clocks[j]), max(raw.initial, state.raw_clocks[j]))
        state.raw_clocks[j] = raw.last
        leaf_tl.append(raw)
    mapped = [Timeline(tl.seqs, _map(tl.vals, lf.maps), _map1(tl.initial, lf.maps))
              for tl, lf in zip(leaf_tl, spec.leaves)]

    if state.held is not None and len(state.held):
        rows = pd.concat([state.held, rows], ignore_index=True) if len(rows) else state.held.reset_index(drop=True)
    rows = rows.reset_index(drop=True)
    n = len(rows)
    # 1. when each row becomes usable at its leaf
    lrel = np.full(n, -1, dtype=np.int64)
    if n:
        leaf = rows["leaf"].to_numpy()
        seq = rows["seq"].to_numpy().astype(np.int64)
        for j, lf in enumerate(spec.leaves):
            m = leaf == j
            if not m.any():
                continue
            if lf.stage is None:
                lrel[m] = seq[m]
            else:
                tl = leaf_tl[j]
                if len(tl.seqs):
                    pts = tl.seqs
                    fr = np.maximum.accumulate(tl.vals)
                    stamps = rows["Tup"].to_numpy()[m].astype(np.int64)
                    first = np.searchsorted(fr, stamps, side="left")
                    avail = np.searchsorted(pts, seq[m], side="left")
                    pos = np.maximum(first, avail)
                    ok = pos < len(pts)
                    got = np.full(m.sum(), -1, dtype=np.int64)
                    got[ok] = pts[pos[ok]]
                    # rows whose frontier was already reached before this batch's first point
                    before = (tl.initial >= stamps) & (seq[m] < (pts[0] if len(pts) else 0))
                    got[before & ~ok] = seq[m][before & ~ok]
                    lrel[m] = got
                else:
                    stamps = rows["Tup"].to_numpy()[m].astype(np.int64)
                    lrel[m] = np.where(tl.initial >= stamps, seq[m], -1)
    # 2. the merge
    if len(spec.leaves) == 1:
        clock = Timeline(mapped[0].seqs, _map(mapped[0].vals, spec.post_maps), _map1(mapped[0].initial, spec.post_maps))
        rel = lrel
    else:
        pts = union_points(*[m.seqs for m in mapped])
        present = (np.min(np.stack([m.at(pts) for m in mapped]), axis=0) if len(pts)
                   else np.zeros(0, np.int64))
        init = min(m.initial for m in mapped)
        clock = Timeline(pts, _map(present, spec.post_maps), _map1(init, spec.post_maps))
        rel = np.full(n, -1, dtype=np.int64)
        if n:
            ok = lrel >= 0
            stamps = rows["T"].to_numpy().astype(np.int64)
            if len(pts):
                first = np.searchsorted(present, stamps, side="left")
                avail = np.searchsorted(pts, np.where(ok, lrel, 0), side="left")
                pos = np.maximum(first, avail)
                good = ok & (pos < len(pts))
                rel[good] = pts[pos[good]]
                before = ok & ~good & (init >= stamps) & (lrel < (pts[0]))
                rel[before] = lrel[before]
            else:
                good = ok & (init >= stamps)
                rel[good] = lrel[good]
    usable = rel >= 0
    state.held = rows[~usable].reset_index(drop=True) if n else None
    out = rows[usable].copy()
    out["rel"] = rel[usable]
    out["lrel"] = lrel[usable]
    out = _order(out, spec)
    return out, clock


def _order(out: pd.DataFrame, spec: InputSpec) -> pd.DataFrame:
    if not len(out):
        out["arrival"] = pd.Series([], dtype=object)
        return out
    single = len(spec.leaves) == 1
    arrivals = []
    stage_leaf = [lf.stage is not None for lf in spec.leaves]
    for leaf, seq, sub, tup, tie, lrel, t, rel in zip(out["leaf"], out["seq"], out["sub"], out["Tup"], out["tie"],
                                                      out["lrel"], out["T"], out["rel"]):
        a = (release_arrival(int(lrel), int(tup), tie) if stage_leaf[int(leaf)]
             else encode_ints(int(seq), int(sub)))
        if not single:
            a = release_arrival(int(rel), int(t), encode_ints(int(leaf)) + a)
        arrivals.append(a)
    out["arrival"] = arrivals
    if single and not stage_leaf[0]:
        return out.sort_values(["seq", "sub"], kind="stable").reset_index(drop=True)
    return out.sort_values(["arrival"], kind="stable").reset_index(drop=True)
