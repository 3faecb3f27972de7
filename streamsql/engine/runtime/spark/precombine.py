"""Pre-combining a streaming GROUP BY before the state store.

A group only ever accumulates rows until an input clock passes its period's end, and a row of a
period can never arrive after that (it would be late). So the rows of one micro-batch can be
summed up per (bucket, period end, key) before they reach ``transformWithStateInPandas``, whose
cost is per input row: one partial per group instead of one row per event. The partial enters
the operator at the step of its group's first row, which changes nothing (the group completes
later, and a GROUP BY's frontier does not depend on what its groups hold).

The combining is Arrow's hash aggregation (``mapInArrow``: no pandas, no Python per row). It is
used when the aggregate reads one stream directly and every aggregate combines exactly in any
order: COUNT, MIN, MAX, FIRST/LAST_VALUE, SUM/AVG of exact numbers, and SUM/AVG of doubles, which
the operator sums exactly (operators/exactsum.py): here each double is split into its mantissa
and exponent and the mantissas are summed per (group, exponent) in int64 (:func:`float_sums`),
so that only a few Python big-int operations per group remain. Queries where a row could be
refused for a calculator error (the semantics, section 1), which only the operator decides row by row,
take the row-by-row path: keys or arguments that can fail, and sums that can leave their type (of
BIGINT, or of DECIMALs wider than 28 digits: a sum of narrower values needs 2**32 or 10**10 rows
in one group to overflow, more than any batch and any stream here).

A float SUM can leave DOUBLE's range, so its rows are pre-combined only where no row can be
refused: a value at least 2**960 in magnitude, an infinity or a NaN (*big*) is not combined but
travels as the row it is (:attr:`Partial.row`, which the operator steps as a row, refusing it
or not), and the rows of a group after it make a new partial, so that partials and big rows
reach the operator in row order. Fewer than 2**62 values below 2**960 cannot overflow a sum
below 2**1022; only a group that big rows made bigger can, so a partial also carries a bound of
the sum of its values' magnitudes (``reach``), and a partial that could take such a group out of
range stops the query with :class:`PrecombineReach`
instead of giving another answer. ``STREAMSQL_PRECOMBINE=0`` in the environment turns
pre-combining off (queries started afterwards step every GROUP BY row by row).

A window aggregation is pre-combined the same way per window (see the window section below);
a session aggregation per *run* of a session key's rows (:func:`session_partials`), the frontier
inside a run then reported as the rows stepped one by one give it
(:meth:`PrecombinedWindowAggregate.exact_changes`), since a session's end moves with its rows.

When the query is just that GROUP BY over one stream (keys: columns and functions of ROWTIME;
arguments: columns), as it is or behind WHERE clauses and projections that cannot fail and that
Arrow's kernels compute exactly as the row evaluator does (:func:`chain_fn`), the log source,
which reads the log in Python anyway, filters and combines the rows itself
(:class:`ScanCombiner`): no row crosses from Spark to Python and back, only partials and the
timeline.
"""
from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ... import environment
from ...expr import NOT_MONOTONIC, Col, Rowtime, is_time_key, monotonicity, rowtime_map_array
from ...functions import can_fail
from ...operators import exactsum
from ...errors import StreamSqlError
from ...functions.errors import show_value
from ...operators.aggregate import AggregateOp, sum_kind
from ...operators.windowshape import normalized, windows_array
from ...operators.base import INF, encode_ints
from ...plan import Aggregate, WindowAggregate
from ...types import DOUBLE
from .statecodec import dumps as dump_state, loads as load_state
from .framecode import FrameCode
from .timeline import NO_TRACE, Timeline, union_points, unpack_timeline
from .wire import pack, restore_value, unpack


class PrecombineReach(StreamSqlError):
    """A pre-combined partial of a float SUM met a group whose sum is within its reach of
    DOUBLE's range: whether one of its rows must be refused (the semantics, section 1) can only be decided
    row by row, so the query stops rather than give another answer."""

    def __init__(self, text: str, so_far: float):
        super().__init__(
            f"{text}: the sum so far ({show_value(so_far, DOUBLE)}) came within reach of DOUBLE's range, "
            "where a pre-combined batch of rows cannot tell which row a SUM would have to refuse; run the "
            f"query with pre-combining off (environment variable {environment.PRECOMBINE}=0 where it starts) to step "
            "this GROUP BY row by row")


def check_reach(accs, states, reach) -> None:
    """Raise :class:`PrecombineReach` where a float SUM's group state ``states[c]`` could leave
    DOUBLE's range by adding, one by one, values whose magnitudes sum to at most ``reach[c]``."""
    for acc, st, r in zip(accs, states, reach):
        if r is not None and not exactsum.fits(st, r):
            raise PrecombineReach(acc.text, exactsum.value(st))


def eligible(node: Aggregate, stage) -> bool:
    if not environment.precombine():
        return False
    if isinstance(node, WindowAggregate):       # a window aggregation: see the window section below
        if not window_eligible(node):
            return False
        node = Aggregate(node.input, group_keys(node), None, node.aggs, [])
    if node.distinct_rows or len(stage.inputs) != 1 or len(stage.inputs[0].leaves) != 1:
        return False
    if stage.inputs[0].leaves[0].stream is None:
        return False
    for a in node.aggs:
        if a.distinct:
            return False
        if a.fn in ("SUM", "AVG") and a.arg is not None and not _sums_safely(a.arg.type):
            return False
    exprs = [k for k in node.keys if not is_time_key(k)] + [a.arg for a in node.aggs if a.arg is not None]
    return not any(can_fail(e) for e in exprs)


def _sums_safely(t) -> bool:
    """No sum of fewer than 2**32 values of it leaves the SUM's type unseen: doubles are summed
    exactly, their big values stepped as rows (see the module doc)."""
    if t.name == "BIGINT":
        return False
    return t.name != "DECIMAL" or t.precision <= 28


def float_calls(node: Aggregate) -> list[int]:
    """The SUM/AVG calls of doubles (summed exactly, their big values stepped as rows)."""
    return [c for c, a in enumerate(node.aggs) if sum_kind(a) == "float"]


def big_sql(node: Aggregate, arg_sql) -> str | None:
    """A Spark SQL condition true for the rows with a big float SUM/AVG argument (as
    :func:`partials` decides it), from the arguments' SQL ``arg_sql(c)``."""
    calls = float_calls(node)
    if not calls:
        return None
    lim = f"CAST('{exactsum.BIG!r}' AS DOUBLE)"
    return " OR ".join(f"NOT (abs(CAST({arg_sql(c)} AS DOUBLE)) < {lim})" for c in calls)


# the stage-input columns the combiner needs, and the others restored after it (a pre-combined
# stage reads one stream through one leaf, and has no upstream stage)
COLUMNS = ["ev", "bucket", "step", "sub", "T", "ort", "blob"]
RESTORED = ["0 AS inp", "0 AS leaf", "T AS Tup", "CAST(NULL AS BINARY) AS tie", "-1 AS up"]


class Partial:
    """What a pre-combined row means to the operator: add these partials to this group (with,
    per call, a bound of a float SUM's magnitudes, ``reach``); or, where ``row`` is not None,
    step this row (a big float value, see the module doc). A session's partial may carry the
    steps and rowtimes of its run's rows (``rows``: see :func:`session_partials`)."""
    __slots__ = ("end", "keys", "states", "reach", "row", "rows")

    def __init__(self, end, keys, states, reach=None, row=None, rows=None):
        self.end, self.keys, self.states, self.reach, self.row = end, keys, states, reach, row
        self.rows = rows


def precombined(op):
    """The adapter the bucket host steps when the operator's rows are partials."""
    from ...operators.windowagg import WindowAggOp
    if isinstance(op, WindowAggOp):
        return PrecombinedWindowAggregate(op)
    return PrecombinedAggregate(op)


def combine_rows(node, op, rows: pa.Table, solo_from: int):
    """Partials of ``rows`` for a GROUP BY or a window aggregation (``pk<m>``: the keys' values,
    for a window aggregation the keys that are not window columns)."""
    if isinstance(node, WindowAggregate):
        if node.shape.is_session:
            return session_partials(node, rows, solo_from)
        return window_partials(node, rows, solo_from)
    return partials(node, op, rows, solo_from)


def group_keys(node) -> list:
    """The keys a combiner reads values of (``pk<m>``): a window aggregation's without its window
    (a session's: its session keys first)."""
    if isinstance(node, WindowAggregate):
        return (list(node.partition) if node.shape.is_session else []) + row_keys(node)
    return list(node.keys)


class PrecombinedAggregate:
    """Adapter the bucket host steps instead of the operator when its rows are partials."""

    def __init__(self, op):
        self.op = op

    def __getattr__(self, name):
        return getattr(self.op, name)

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        if isinstance(row, Partial):
            if row.row is None:
                cur = self.op.groups.get((row.end, row.keys))
                if cur is not None and row.reach:
                    check_reach(self.op.accs, cur, row.reach)
                self.op.add_partial(row.end, row.keys, row.states)
                return []
            row = row.row
        return self.op.on_row(ch, step, rowtime, row, clocks, arrival)


def partials(node: Aggregate, op: AggregateOp, rows: pa.Table, solo_from: int = NO_TRACE) -> tuple[pa.Table, list[tuple]]:
    """One partial per (bucket, period end, keys) of ``rows`` (columns ``bucket``, ``step``,
    ``sub``, ``T``, ``ort``, ``pk<m>`` key values, ``pa<c>`` aggregate arguments, and with float
    sums ``rv<j>`` the operator's input row, at least where an argument is big): a table of
    ``bucket``, ``step``/``sub``/``T``/``ort`` (of the group's first row) and ``part``; and the
    groups' keys. Rows at or after step ``solo_from`` (the trace window) each make a partial of
    their own, as do rows with a big float argument (the row itself), after which their group
    starts a new partial."""
    nk = len(node.keys)
    fcalls = float_calls(node)
    keys = ["bucket", "_end"] + [f"pk{m}" for m in range(nk)] + ["_solo"]
    # the input rows (``rv<j>``) are only read for big values: kept aside, not copied by the sort
    rv = [name for name in rows.column_names if name.startswith("rv")]
    raw, rows = rows.select(rv), rows.drop_columns(rv)
    order = pc.sort_indices(rows, sort_keys=[("step", "ascending"), ("sub", "ascending")])
    rows = rows.take(order)
    n = rows.num_rows
    end = op.period_end_array(rows.column("ort").to_numpy(zero_copy_only=False).astype(np.int64))
    rows = rows.append_column("_end", pa.array(end, pa.int64()))
    step = rows.column("step").to_numpy(zero_copy_only=False).astype(np.int64)
    solo = step >= solo_from
    big = np.zeros(n, dtype=bool)
    fvals = {}
    for c in fcalls:
        col = rows.column(f"pa{c}").cast(pa.float64())
        valid = col.is_valid().to_numpy(zero_copy_only=False)
        v = col.fill_null(0.0).to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            b = valid & ~(np.abs(v) < exactsum.BIG)
        big |= b
        fvals[c] = (valid, v)
    if big.any():
        keys.append("_seg")       # the rows of a group after a big row make a new partial
        rows = rows.append_column("_seg", pa.array(np.cumsum(big), pa.int64()))
    rows = rows.append_column("_solo", pa.array(np.where(solo | big, np.arange(n), -1), pa.int64()))
    aggs = [("step", "first"), ("sub", "first"), ("T", "min"), ("ort", "min")]
    for c, (valid, v) in fvals.items():
        ok = valid & ~big
        v = np.where(ok, v, 0.0)
        hi, lo, shift = exactsum.split(v)
        rows = rows.append_column(f"_h{c}", pa.array(hi, pa.int64())).append_column(f"_l{c}", pa.array(lo, pa.int64()))
        rows = rows.append_column(f"_s{c}", pa.array(shift, pa.int64()))
        rows = rows.append_column(f"_z{c}", pa.array(exactsum.not_neg_zero(v).astype(np.int8), mask=~ok))
        aggs.append((f"_z{c}", "max"))
        if node.aggs[c].fn == "SUM":          # its reach (AVG never refuses)
            rows = rows.append_column(f"_a{c}", pa.array(np.abs(v)))
            aggs.append((f"_a{c}", "sum"))
    for c, a in enumerate(node.aggs):
        col = f"pa{c}"
        if a.fn == "COUNT":
            aggs.append(([], "count_all") if a.arg is None else (col, "count"))
        elif a.fn in ("SUM", "AVG"):
            if c not in fvals:
                aggs.append((col, "sum", pc.ScalarAggregateOptions(min_count=1)))
            aggs.append((col, "count"))
        elif a.fn in ("MIN", "MAX"):
            aggs.append((col, a.fn.lower()))
    g = rows.group_by(keys, use_threads=False).aggregate(aggs)
    cols = {name: g.column(name).to_pylist() for name in g.column_names}
    fsums = {c: float_sums(rows, keys, c) for c in fvals}
    ordered: dict = {}
    for c, a in enumerate(node.aggs):   # first/last non-null value, in arrival order
        if a.fn in ("FIRST_VALUE", "LAST_VALUE"):
            part = rows.select(keys + ["step", "sub", f"pa{c}"])
            nn = part.filter(pc.is_valid(part.column(f"pa{c}")))
            how = "first" if a.fn == "FIRST_VALUE" else "last"
            h = nn.group_by(keys, use_threads=False).aggregate([("step", how), ("sub", how), (f"pa{c}", how)])
            hk = [h.column(k).to_pylist() for k in keys]
            ordered[c] = {tuple(k): (s, b, v) for k, s, b, v in
                          zip(zip(*hk), h.column(f"step_{how}").to_pylist(), h.column(f"sub_{how}").to_pylist(),
                              h.column(f"pa{c}_{how}").to_pylist())}
    # the input rows of big values, stepped as rows
    raws = {}
    if big.any():
        idx = np.nonzero(big)[0]
        taken = raw.take(order.take(pa.array(idx)))
        rcols = [[restore_value(v, f.type) for v in taken.column(f"rv{j}").to_pylist()]
                 for j, f in enumerate(node.input.fields)]
        raws = {int(i): tuple(r) for i, r in zip(idx, zip(*rcols) if rcols else [()] * len(idx))}
    ik = keys.index("_solo")
    parts, gks = [], []
    for i in range(g.num_rows):
        gk = tuple(cols[k][i] for k in keys)
        ks = gk[2:2 + nk]
        raw = raws.get(gk[ik]) if raws else None
        if raw is not None:
            parts.append(pack((gk[1], ks, None, None, raw)))
            gks.append(ks)
            continue
        states, reach = [], None
        for c, a in enumerate(node.aggs):
            col = f"pa{c}"
            if c in fvals:
                cnt = cols[f"{col}_count"][i]
                st = None if not cnt else (fsums[c].get(gk, 0), exactsum.NOT_NEG_ZERO if cols[f"_z{c}_max"][i] else 0)
                if a.fn == "SUM":
                    states.append(st)
                    if cnt:
                        reach = reach or [None] * len(node.aggs)
                        reach[c] = exactsum.reach_bound(cols[f"_a{c}_sum"][i], cnt)
                else:
                    states.append([st, cnt])
            elif a.fn == "COUNT":
                states.append(cols["count_all" if a.arg is None else f"{col}_count"][i])
            elif a.fn == "SUM":
                states.append(cols[f"{col}_sum"][i])
            elif a.fn == "AVG":
                states.append([cols[f"{col}_sum"][i], cols[f"{col}_count"][i]])
            elif a.fn in ("MIN", "MAX"):
                states.append(cols[f"{col}_{a.fn.lower()}"][i])
            else:
                hit = ordered[c].get(gk)
                states.append([None, None] if hit is None else [encode_ints(hit[0], hit[1]), hit[2]])
        parts.append(pack((gk[1], ks, states, reach, None)))
        gks.append(ks)
    out = pa.table({"bucket": g.column("bucket").cast(pa.int32()), "step": g.column("step_first"),
                    "sub": g.column("sub_first"), "T": g.column("T_min"), "ort": g.column("ort_min"),
                    "part": pa.array(parts, pa.binary())})
    return out, gks


def float_sums(rows: pa.Table, keys: list[str], c: int) -> dict[tuple, int]:
    """Per group of ``rows`` (by ``keys``), the exact sum of call ``c``'s doubles scaled by
    2**1074 (exactsum.py), from their mantissa halves ``_h<c>``/``_l<c>`` and exponents
    ``_s<c>``: int64 sums per (group, exponent) (a batch holds fewer than 2**36 rows), then one
    shift and add per (group, exponent) in Python."""
    g = rows.group_by(keys + [f"_s{c}"], use_threads=False).aggregate([(f"_h{c}", "sum"), (f"_l{c}", "sum")])
    out: dict[tuple, int] = {}
    ks = [g.column(k).to_pylist() for k in keys]
    for gk, sh, hi, lo in zip(zip(*ks), g.column(f"_s{c}").to_pylist(), g.column(f"_h{c}_sum").to_pylist(),
                              g.column(f"_l{c}_sum").to_pylist()):
        if hi or lo:
            out[gk] = out.get(gk, 0) + (((hi << 26) + lo) << sh)
    return out


def combiner(node: Aggregate, schema: pa.Schema):
    """The ``mapInArrow`` function: rows -> one partial per (bucket, period end, keys)."""
    # its period ends (several monotonic keys, sub-query columns); a window aggregation's: its windows
    op = None if isinstance(node, WindowAggregate) else AggregateOp(node)

    def fn(batches):
        t = pa.Table.from_batches(list(batches))
        if not t.num_rows:
            return
        ev = t.column("ev")
        rest = t.filter(pc.not_equal(ev, FrameCode.ROW))
        rows = t.filter(pc.equal(ev, FrameCode.ROW))
        if rest.num_rows:
            yield from rest.append_column("part", pa.nulls(rest.num_rows, pa.binary())).cast(schema).to_batches()
        if rows.num_rows:
            # the trace window, from the timeline records of this partition (each carries it)
            tls = rest.filter(pc.equal(rest.column("ev"), FrameCode.TIMELINE)).column("blob").to_pylist()
            solo = min((unpack_timeline(b)[3] for b in tls), default=NO_TRACE)
            g, _keys = combine_rows(node, op, rows, solo)
            n = g.num_rows
            out = {}
            for f in schema:
                if f.name in g.column_names:
                    out[f.name] = g.column(f.name).cast(f.type)
                elif f.name == "ev":
                    out[f.name] = pa.array(np.full(n, FrameCode.ROW, dtype=np.int64)).cast(f.type)
                else:
                    out[f.name] = pa.nulls(n, f.type)
            yield from pa.table(out, schema=schema).to_batches()
    return fn


# --------------------------------------------------------------------------- in the scan

def scan_eligible(node: Aggregate, stage, n_stages: int, n_streams: int) -> bool:
    """Whether the log source itself can pre-combine: the query is this one aggregate over one
    stream, behind WHERE clauses and projections the source can evaluate over Arrow columns
    (:func:`chain_fn`), grouped by functions of ROWTIME and plain columns, aggregating plain
    columns. Then no row crosses from Spark to Python at all (the source reads the log in Python
    already): only partials and the timeline do."""
    if n_stages != 2 or n_streams != 1 or not eligible(node, stage):
        return False
    inp = stage.inputs[0]
    if inp.post or chain_fn(inp.leaves[0].chain) is None:
        return False
    if not all(isinstance(k, Col) or is_time_key(k) for k in group_keys(node)):
        return False
    return all(a.arg is None or isinstance(a.arg, Col) for a in node.aggs)


def chain_fn(chain: list):
    """The leaf's WHERE clauses and projections (innermost first) as one function of a batch's
    Arrow columns and rowtimes, giving the rows' positions kept and the projected columns; None
    when one of them cannot be evaluated exactly over Arrow (:func:`expr.arrow_expr`: it could
    fail, or it has no exact Arrow form) or changes ROWTIME. A row a WHERE drops here is one the
    Spark path leaves out at the source too (a stream leaf's own WHERE), trace or not."""
    from ...expr import arrow_expr
    from ...plan import Filter
    from ...types import arrow_type
    steps = []
    for node in chain:
        if isinstance(node, Filter):
            f = arrow_expr(node.cond)
            if f is None:
                return None
            steps.append((f, None))
            continue
        if node.rowtime is not None and not isinstance(node.rowtime, Rowtime):
            return None
        fs = [arrow_expr(e) for e in node.exprs]
        if any(f is None for f in fs):
            return None
        steps.append((None, [(f, arrow_type(fl.type)) for f, fl in zip(fs, node.fields)]))

    def run(cols: list, rowtime: np.ndarray) -> tuple[np.ndarray | None, list]:
        keep = None                       # positions of the batch kept so far (None: all)
        cols = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in cols]
        for cond, items in steps:
            rts = pa.array(rowtime if keep is None else rowtime[keep], pa.int64())
            if cond is not None:
                m = cond(cols, rts)
                m = (pa.array(np.full(len(rts), m.as_py() is True)) if isinstance(m, pa.Scalar)
                     else pc.fill_null(m, False))
                at = np.flatnonzero(m.to_numpy(zero_copy_only=False))
                keep = at if keep is None else keep[at]
                cols = [c.take(pa.array(at)) for c in cols]
            else:
                cols = [_full(f(cols, rts), t, len(rts)) for f, t in items]
        return keep, cols
    return run


def _full(v, t, n: int):
    """An Arrow array of type ``t``: a scalar (a literal in a select list) repeated ``n`` times."""
    if isinstance(v, pa.Scalar):
        return pa.repeat(v, n).cast(t)
    return v.cast(t) if v.type != t else v


def scan_spec(node: Aggregate, buckets: int, chain: list | None = None) -> dict:
    return {"node": dump_state(node).decode(), "buckets": buckets, "chain": dump_state(list(chain or [])).decode()}


class ScanCombiner:
    """Pre-combines one stream's rows as the log source reads them (see :func:`scan_eligible`)."""

    def __init__(self, spec: dict):
        self.node: Aggregate = load_state(spec["node"].encode(), "the pre-combined scan's plan")
        self.buckets = int(spec["buckets"])
        chain = load_state(spec["chain"].encode(), "the pre-combined scan's WHERE") if spec.get("chain") else []
        self.chain = chain_fn(chain) if chain else None
        self.width = len(chain[0].input.fields) if chain else 0     # the stream's columns, read by the chain
        self.windows = isinstance(self.node, WindowAggregate)
        self.op = None if self.windows else AggregateOp(self.node)
        self.floats = bool(float_calls(self.node))
        self.keys = group_keys(self.node)
        # the keys that pick a bucket (the others are functions of ROWTIME; a partial of a window
        # aggregation has the window's start first)
        self.hashed = [m + self.windows for m, k in enumerate(self.keys) if monotonicity(k) == NOT_MONOTONIC]
        if self.windows and self.node.shape.is_session:       # a session's rows by its keys alone
            self.hashed = [1 + m for m in range(len(self.node.partition))]

    def combine(self, step: np.ndarray, sub: np.ndarray, rowtime: np.ndarray, values: pa.Table,
                solo_from: int = NO_TRACE) -> pa.Table:
        """``values``: the stream's columns ``c<i>`` of these rows; ``solo_from``: the trace window."""
        if self.chain is not None:
            keep, cols = self.chain([values.column(f"c{i}") for i in range(self.width)], rowtime)
            if keep is not None:
                step, sub, rowtime = step[keep], sub[keep], rowtime[keep]
            values = pa.table({f"c{i}": c for i, c in enumerate(cols)})
        cols = {"bucket": pa.array(np.zeros(len(step), np.int32)), "step": pa.array(step, pa.int64()),
                "sub": pa.array(sub, pa.int32()), "T": pa.array(rowtime, pa.int64()),
                "ort": pa.array(rowtime, pa.int64())}
        for m, k in enumerate(self.keys):
            cols[f"pk{m}"] = (values.column(f"c{k.index}") if isinstance(k, Col)
                              else pa.array(rowtime_map_array(k, rowtime), pa.int64()))
        for c, a in enumerate(self.node.aggs):
            cols[f"pa{c}"] = values.column(f"c{a.arg.index}") if a.arg is not None else pa.nulls(len(step), pa.int32())
        if self.floats:     # the input row (the aggregate's), for big values stepped as rows
            for j in range(len(self.node.input.fields)):
                cols[f"rv{j}"] = values.column(f"c{j}")
        g, keys = combine_rows(self.node, self.op, pa.table(cols), solo_from)
        if self.buckets > 1:
            b = [zlib.crc32(repr(tuple(k[m] for m in self.hashed)).encode()) % self.buckets for k in keys]
            g = g.set_column(0, "bucket", pa.array(b, pa.int32()))
        return g


# --------------------------------------------------------------------------- window aggregations
# Pre-combining a window aggregation (the semantics, section 3.7) before the state store, as
# ``precombine.py`` does for a GROUP BY: a window only accumulates rows until the input clock
# reaches its end, and a row of it can never come after that, so the rows of one micro-batch can
# be summed per (bucket, window, key values) first. Each row is expanded into its windows
# (``windowshape.windows_array``: a hop's or a cumulating window's row into several), then the
# GROUP BY's combiner (``precombine.partials``) groups them by window start and end and the other
# keys. A partial enters the operator at the step of its first row, which changes nothing (the
# window completes later, and a window aggregation's frontier does not depend on what it holds).
#
# Sessions are pre-combined per *run* (:func:`session_partials`), their frontier made exact
# afterwards (:meth:`PrecombinedWindowAggregate.exact_changes`). Used where every row is sure to
# be accepted (``precombine.eligible``), without float SUM/AVG (their big values are stepped as
# rows, once per row, not once per window) and without approximate session keys (a NaN key is a
# session of its own in the operator); those are stepped row by row.

def window_eligible(node: WindowAggregate) -> bool:
    if float_calls(node):
        return False
    return not (node.shape.is_session and any(p.type.is_approx for p in node.partition))


class _Keys:
    """The GROUP BY combiner's view of a window aggregation: its keys are the window's start and
    the keys that are not window columns (a session's: the run's first rowtime, the session keys
    and the other keys), its period ends the rows' window ends (a session's: the run's last
    rowtime)."""

    def __init__(self, node: WindowAggregate):
        self.keys = [None] + group_keys(node)
        self.aggs = node.aggs
        self.input = node.input
        self.distinct_rows = False

    @staticmethod
    def period_end_array(t):
        return np.asarray(t, dtype=np.int64)      # ``ort`` holds the window's end already


def row_keys(node: WindowAggregate) -> list:
    """The grouping keys that are not window columns (what a partial's rows must agree on)."""
    return [k for i, k in enumerate(node.keys) if i not in node.window_keys]


def window_partials(node: WindowAggregate, rows: pa.Table, solo_from: int) -> tuple[pa.Table, list[tuple]]:
    """One partial per (bucket, window, key values) of ``rows`` (``pk<m>``: the row keys' values,
    ``pa<c>`` the arguments; ``ort`` the rowtimes): ``precombine.partials`` over the rows expanded
    into their windows, each partial's keys being ``(window start,) + key values``."""
    t = rows.column("ort").to_numpy(zero_copy_only=False).astype(np.int64)
    idx, start, end = windows_array(normalized(node.shape), t)
    rows = rows.take(pa.array(idx))
    rows = rows.set_column(rows.column_names.index("ort"), "ort", pa.array(end, pa.int64()))
    nk = len(row_keys(node))
    cols = {name: rows.column(name) for name in rows.column_names if not name.startswith("pk")}
    cols["pk0"] = pa.array(start, pa.int64())
    for m in range(nk):
        cols[f"pk{m + 1}"] = rows.column(f"pk{m}")
    return partials(_Keys(node), _Keys(node), pa.table(cols), solo_from)


def session_partials(node: WindowAggregate, rows: pa.Table, solo_from: int) -> tuple[pa.Table, list[tuple]]:
    """The partials of a session aggregation (``pk<m>``: the session keys' values, then the other
    keys'). A session key's rows, in step order, are cut into *runs* where a row comes at or
    after the previous one + the gap, and where the trace window (``solo_from``) starts: each row
    in it is a run of its own. A run is what the operator would do with its rows one by one:
    its first row extends the key's open session or (at last + gap or later) closes it and opens
    the next; the others extend that session, which cannot close before the run's last row (the
    input clock at a step before a row's is at most its rowtime: the stream refused late rows).
    So a partial per (run, other key values), keyed ``(run's first rowtime, session key values,
    other key values)``, entered at the step of its first row, gives the operator the same
    sessions and the same closing steps. Only the frontier differs at the steps inside a run
    (the session's end there is its last row so far + the gap): the partial holding a run's
    first row carries the steps and rowtimes of its rows (``Partial.rows``), from which
    :meth:`PrecombinedWindowAggregate.exact_changes` reports the frontier the operator has at each
    step; a session stamped at its start needs none (its start is known at its first step)."""
    gap = node.shape.gap
    npart = len(node.partition)
    n = rows.num_rows
    sort = [("bucket", "ascending")] + [(f"pk{m}", "ascending") for m in range(npart)] + \
           [("step", "ascending"), ("sub", "ascending")]
    rows = rows.take(pc.sort_indices(rows, sort_keys=sort))
    t = rows.column("ort").to_numpy(zero_copy_only=False).astype(np.int64)
    step = rows.column("step").to_numpy(zero_copy_only=False).astype(np.int64)
    new = np.ones(n, dtype=bool)
    if n > 1:
        bucket = rows.column("bucket").to_numpy(zero_copy_only=False)
        same = (bucket[1:] == bucket[:-1]) & (t[1:] < t[:-1] + gap)
        for m in range(npart):
            col = rows.column(f"pk{m}")
            a, b = col.slice(1), col.slice(0, n - 1)
            eq = pc.or_(pc.fill_null(pc.equal(a, b), False), pc.and_(pc.is_null(a), pc.is_null(b)))
            same &= eq.to_numpy(zero_copy_only=False).astype(bool)
        solo = step >= solo_from
        same &= ~solo[1:] & ~solo[:-1]
        new[1:] = ~same
    first = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    start = t[first]
    end = np.maximum.reduceat(t, first) if n else t
    cols = {name: rows.column(name) for name in rows.column_names if not name.startswith("pk")}
    cols["ort"] = pa.array(end[run], pa.int64())
    cols["pk0"] = pa.array(start[run], pa.int64())
    for m in range(len(group_keys(node))):
        cols[f"pk{m + 1}"] = rows.column(f"pk{m}")
    out, gks = partials(_Keys(node), _Keys(node), pa.table(cols), solo_from)
    if node.stamp == "start" or not n:
        return out, gks
    # the run of each first row, by its (step, sub); the partial holding it carries the run's rows
    sub = rows.column("sub").to_numpy(zero_copy_only=False).astype(np.int64)
    heads = dict(zip(zip(step[first].tolist(), sub[first].tolist()), range(len(first))))
    bounds = np.r_[first, n]
    parts = out.column("part").to_pylist()
    for i, (s, b) in enumerate(zip(out.column("step").to_pylist(), out.column("sub").to_pylist())):
        r = heads.get((s, b))
        if r is not None:
            lo, hi = bounds[r], bounds[r + 1]
            parts[i] = pack(unpack(parts[i]) + (np.stack([step[lo:hi], t[lo:hi]]).tobytes(),))
    return out.set_column(out.column_names.index("part"), "part", pa.array(parts, pa.binary())), gks


class PrecombinedWindowAggregate(PrecombinedAggregate):
    """Adapter the bucket host steps instead of a window aggregation when its rows are partials."""

    def __init__(self, op):
        super().__init__(op)
        # sessions: the open sessions' last rows before the batch, the runs' rows stepped in it
        self.before = [(p, s[1]) for p, s in op.sessions.items()] if op.session else []
        self.runs: list[tuple] = []

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        if isinstance(row, Partial):
            if row.row is None:
                if not self.op.session:
                    return self.op.add_partial(row.keys[0], row.end, (), tuple(row.keys[1:]), row.states)
                npart = len(self.op.node.partition)
                part = tuple(row.keys[1:1 + npart])
                if row.rows is not None:
                    self.runs.append((part, np.frombuffer(row.rows, np.int64).reshape(2, -1)))
                return self.op.add_partial(row.keys[0], row.end, part, tuple(row.keys[1 + npart:]), row.states)
            row = row.row
        return self.op.on_row(ch, step, rowtime, row, clocks, arrival)

    def exact_changes(self, changes: list, before: tuple | None, clock: Timeline) -> list:
        """The frontier changes ``(step, min_end, held min)`` of a session aggregation stamped at
        its end (or time) as the operator stepped row by row reports them, from ``changes`` (what
        the host reported stepping partials: right at the steps it visited but for the sessions
        inside a run, whose end there is its last row so far + the gap), the report ``before`` the
        batch and the input clock over it. At each step the operator's ``min_end`` is the least
        ``t + gap`` over the rows ``t`` that are the last of their session key so far and end
        after the clock (the others are closed). Rows come in rowtime order, so that least is
        the first such row in arrival order: with each row's life ``[arrival, min(next row of its
        key, first step the clock reaches t + gap))``, the first row whose life has not ended by
        a step (a search in the running maximum of the lives' ends) is the answer if it has
        arrived."""
        op = self.op
        if not op.session or op.node.stamp == "start":
            return changes
        gap = op.gap
        ids: dict = {}
        pid = [ids.setdefault(p, len(ids)) for p, _t in self.before]
        a = [np.full(len(self.before), -1, np.int64)]
        t = [np.array([x for _p, x in self.before], np.int64)]
        for part, r in self.runs:
            pid.append(ids.setdefault(part, len(ids)))
            a.append(r[0])
            t.append(r[1])
        pid = np.repeat(np.array(pid, np.int64), [1] * len(self.before) + [r.shape[1] for _p, r in self.runs])
        a, t = np.concatenate(a), np.concatenate(t)
        order = np.lexsort((t, a))
        a, t, pid = a[order], t[order], pid[order]
        if len(t) > 1 and bool((t[1:] < t[:-1]).any()):
            raise RuntimeError("session pre-combining: a bucket's rows are not in rowtime order")
        # each row's life ends at the next row of its key (same key, next in arrival order) ...
        n = len(t)
        nxt = np.full(n, INF, np.int64)
        by_key = np.lexsort((np.arange(n), pid))
        same = pid[by_key[1:]] == pid[by_key[:-1]]
        nxt[by_key[:-1][same]] = a[by_key[1:][same]]
        hs = np.array([c[0] for c in changes], np.int64)
        pts = union_points(clock.steps, a[a >= 0], hs)
        if before is None:          # the first batch: reported from the first step visited, as the host does
            pts = pts[pts >= (hs[0] if len(hs) else INF)]
        if not len(pts):            # nothing happened (a bucket without rows yet)
            return changes
        c = clock.at(pts)
        # ... or at the first step the clock reaches its end
        j = np.searchsorted(c, t + gap, side="left")
        closes = np.where(j < len(pts), pts[np.minimum(j, len(pts) - 1)], INF)
        life = np.maximum.accumulate(np.minimum(nxt, closes)) if n else nxt
        f = np.searchsorted(life, pts, side="right")
        ok = f < n
        ok[ok] = a[f[ok]] <= pts[ok]
        P = np.full(len(pts), INF, np.int64)
        P[ok] = t[f[ok]] + gap
        # the held rows' least stamp, as the host reported it at the steps it visited
        h0 = before[-1] if before is not None else INF
        hv = np.array([c[-1] for c in changes], np.int64)
        k = np.searchsorted(hs, pts, side="right") - 1
        H = np.where(k >= 0, hv[np.maximum(k, 0)] if len(hv) else h0, h0)
        if len(pts) and int(P[-1]) != int(op.bound_params()[0]):
            raise RuntimeError("session pre-combining: the frontier at the batch's end differs from the operator's")
        keep = np.ones(len(pts), dtype=bool)
        keep[1:] = (P[1:] != P[:-1]) | (H[1:] != H[:-1])
        if len(pts) and before is not None:
            keep[0] = (int(P[0]), int(H[0])) != tuple(before)
        return list(zip(pts[keep].tolist(), P[keep].tolist(), H[keep].tolist()))
