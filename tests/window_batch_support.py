"""Helpers for the tests of the batch path of OVER windows (no tests here): the operator of a
query, its state as plain data, row batches with their clock, and the two ways to run them.

The batch path (``WindowOp.on_rows``) must leave exactly the outputs and the state that the row
path (``on_row`` then ``on_clocks`` at every step) leaves, so both are compared value for value:
floats by their bits (``float.hex``), decimals by value.
"""
from __future__ import annotations

import decimal

import numpy as np

from streamsql.engine.operators.base import encode_ints
from streamsql.engine.operators.scalar import RowFunction
from streamsql.engine.operators.window import WindowOp
from streamsql.engine.operators.rowbatch import STATS, RowBatch, step_rows
from streamsql.engine.plan import Project, Window


def plan_nodes(root):
    """(the Window node, the projection right above it or None)."""
    def walk(n, parent):
        if isinstance(n, Window):
            return n, parent
        for c in n.inputs():
            r = walk(c, n)
            if r is not None:
                return r
        return None
    return walk(root, None)


def window_op(wb, query: str) -> tuple[WindowOp, RowFunction | None]:
    """The operator of ``query``'s OVER node (and the projection above it), from ``wb``'s catalog."""
    from streamsql.engine.sql import analyze
    node, parent = plan_nodes(analyze(query, wb.catalog).query.root)
    return WindowOp(node), (RowFunction(parent) if isinstance(parent, Project) else None)


def norm(v):
    if isinstance(v, float):
        return ("f", v.hex())
    if isinstance(v, decimal.Decimal):
        return ("d", v.normalize() if v else decimal.Decimal(0))
    return v


def candidates(cands) -> list:
    return [(c.stamp, c.tie, tuple(norm(v) for v in c.row)) for c in cands]


def state(op: WindowOp) -> dict:
    """Everything the operator keeps and shows: per window its partitions in order (serial,
    rows kept, frame ends, running aggregates), the expiry heap, the wake-up, the counters."""
    def acc(a):
        return (a.n, a.nn, norm(a.sum), [(i, norm(v)) for i, v in a.minq], [(i, norm(v)) for i, v in a.maxq],
                [(i, norm(v)) for i, v in a.firstq], None if a.last is None else (a.last[0], norm(a.last[1])))
    groups = []
    for g in op.groups:
        runs = [(part, r.serial, r.base, r.lo, r.hi, list(r.o), [tuple(norm(v) for v in t) for t in r.vals],
                 [acc(a) for a in r.acc]) for part, r in g.runs.items()]
        groups.append((runs, sorted(g.expiry)))
    return {"serial": op.serial, "wakeups": tuple(op.wakeups()), "state_size": op.state_size(),
            "describe": op.trace_state([op.state_view()]), "bound_params": op.bound_params(), "groups": groups}


def make_batch(steps: list[tuple[int, list[tuple[int, tuple]]]]) -> RowBatch:
    """``steps``: ``(clock after the step, [(rowtime, row), ...])`` per step, numbered 1, 2, ..."""
    st, rts, rows, arr, pts, clk = [], [], [], [], [], []
    for s, (clock, rs) in enumerate(steps, start=1):
        for i, (t, row) in enumerate(rs):
            st.append(s)
            rts.append(t)
            rows.append(row)
            arr.append(encode_ints(s, i))
        pts.append(s)
        clk.append(clock)
    return RowBatch(np.array(st, np.int64), np.array(rts, np.int64), rows, arr, np.array(pts, np.int64),
                    np.array(clk, np.int64))


def pieces(batch: RowBatch, cuts: list[int]) -> list[RowBatch]:
    """``batch`` cut before each point index in ``cuts``."""
    out, rest = [], batch
    for c in sorted(set(cuts)):
        if 0 < c < len(batch.points):
            head, rest = rest.cut(int(batch.points[c]))
            out.append(head)
    out.append(rest)
    return out


def cuts_every(batch: RowBatch, k: int) -> list[int]:
    return list(range(k, len(batch.points), k))


def assert_batch_path_equals_row_path(make, batch: RowBatch, cuts: list[int], stepped=frozenset(),
                                      vectorised: bool = False):
    """Run ``batch`` cut at ``cuts`` through a fresh operator ``make()`` twice: row by row, and
    with the batch path (pieces whose index is in ``stepped`` row by row, to mix both); the
    outputs and the state after every piece must be equal. With ``vectorised``, every piece
    given to the batch path must have been computed by its vectorised part."""
    ref, got = make(), make()
    for i, piece in enumerate(pieces(batch, cuts)):
        want = candidates(step_rows(ref, piece))
        before = STATS["vectorised"]
        have = candidates(step_rows(got, piece) if i in stepped else got.on_rows(piece))
        if vectorised and i not in stepped and len(piece):
            assert STATS["vectorised"] - before == len(piece), f"piece {i} went row by row"
        assert have == want, f"piece {i}: outputs differ"
        sw, sh = state(ref), state(got)
        for k in sw:
            assert sh[k] == sw[k], f"piece {i}: {k} differs:\n batch {sh[k]}\n rows  {sw[k]}"
