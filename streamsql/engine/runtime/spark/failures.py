"""Rows a branch's WHERE or projections cannot compute (calculator errors, the semantics, section 1) on Spark.

A branch computes its rows in Spark SQL with an error flag (``sqlgen``). A flagged row becomes an
``ev`` 4 row of its leaf (``up`` -1) carrying its *failure*: the branch it came through and the row
as the branch received it, as UTF-8 JSON. The stage input that reads the leaf (an operator's
bucket 0, or the sink) re-evaluates that row through the branch's chain with the engine's own
evaluator (``operators.scalar.chain_failure``), which names the expression, its operands and the
error, exactly as the local runtime does; only flagged rows (rare) cross to Python that way.

The row then waits in that input like a row (``inputs.resolve_input``, its ``fail`` key) and
becomes an operator error where the local runtime makes it one: a node of the leaf's own chain
fails at the step the leaf lets the row go (its own step for a stream, its upstream operator's
release otherwise); a node the plan moved below a UNION ALL (``defer_errors``), or one after the
merge, fails at the step the merge releases the row, stamped with the rowtime that node received.
From there the error travels like any operator error (``frames.error_blob``, ``ev`` 4, ``up`` >= 0)
to the sink, which lists a step's errors in the plan's post-order (``plans.post_order``).
"""
from __future__ import annotations

import decimal
import json
import logging
from dataclasses import dataclass

from ...functions.spec import to_real
from ...operators.base import OperatorError, calc_error
from ...operators.scalar import RowFunction, chain_failure
from ...plan import Field

log = logging.getLogger("streamsql.calc")

#: when a failing row becomes an error: where its leaf lets it go, or where the merge releases it
AT_LEAF, AT_MERGE = 1, 2


def failure_sql(branch: int, fields: list[Field], cols: list[str], rt: str) -> str:
    """Spark SQL (BINARY) of a failure: the branch's number and the row it received."""
    row = ", ".join(f"'c{i}', {c}" for i, c in enumerate(cols)) or "'_', NULL"
    return (f"CAST(to_json(named_struct('branch', {branch}, 'rt', CAST(({rt}) AS BIGINT), "
            f"'row', named_struct({row}))) AS BINARY)")


def _value(v, t):
    """A JSON value back in the engine's representation of type ``t``."""
    if v is None:
        return None
    if t.is_integer or t.name == "TIMESTAMP":
        return int(v)
    if t.name == "REAL":
        return to_real(float(v))
    if t.is_approx:
        return float(v)
    if t.name == "DECIMAL":
        return decimal.Decimal(str(v)) if not isinstance(v, decimal.Decimal) else v
    return v


@dataclass
class Branch:
    """A chain of WHERE/projections over one origin: what the failure JSON is re-evaluated by."""
    nodes: list               # Filter/Project plan nodes, innermost first (the post-merge chain too)
    fields: list[Field]       # the row the chain receives
    stream: str               # STREAM_NAME of its rows
    order: list[int]          # each node's position in the plan's post-order (error order in a step)
    chain: int = 0            # how many of ``nodes`` are the leaf's own chain (the others follow the merge)
    merge: int | None = None  # post-order position of the UNION ALL the leaf merges through

    @property
    def fns(self) -> list[RowFunction]:
        fns = self.__dict__.get("_fns")
        if fns is None:
            fns = self.__dict__["_fns"] = [RowFunction(n) for n in self.nodes]
        return fns

    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("_fns", None)           # compiled closures: rebuilt where needed
        return d

    def placed(self, k: int) -> tuple[int, int]:
        """``(when, position)`` of an error at node ``k``: AT_LEAF or AT_MERGE, and the node whose
        errors the local runtime lists it with (a deferred one: the merge's)."""
        if k >= self.chain:
            return AT_MERGE, self.order[k]
        if self.nodes[k].defer_errors:
            return AT_MERGE, self.merge if self.merge is not None else self.order[k]
        return AT_LEAF, self.order[k]


@dataclass
class Failure:
    """A failing row, resolved: its error (the step is set when it fails), when it fails, its place
    in a step's error order, and the rowtime and row the failing node received."""
    error: OperatorError
    when: int
    order: int
    rt: int
    row: tuple


class Failures:
    """Resolves failures of a query's branches into error records."""

    def __init__(self, query_name: str, branches: list[Branch]):
        self.query_name = query_name
        self.branches = branches

    def resolve(self, blob: bytes) -> Failure | None:
        """The failure of a flagged row; None if Python finds nothing wrong (Spark and Python
        disagree: a bug, logged)."""
        d = json.loads(bytes(blob).decode(), parse_float=decimal.Decimal)
        b = self.branches[int(d["branch"])]
        raw = d.get("row") or {}
        row = tuple(_value(raw.get(f"c{i}"), f.type) for i, f in enumerate(b.fields))
        rt = int(d["rt"]) if d.get("rt") is not None else None
        hit = chain_failure(b.fns, rt, row)
        if hit is None:
            log.error("a row Spark flagged passes in Python (branch %s, rowtime %s): dropped", d["branch"], rt)
            return None
        k, err, at_row, at_rt = hit
        e = calc_error(err, 0, at_rt, b.fns[k].fields, at_row)
        e.stream = b.stream
        if self.query_name:
            e.message = f"Query {self.query_name}: {e.message}"
        when, order = b.placed(k)
        return Failure(e, when, order, at_rt, tuple(at_row))


def is_failure(blob: bytes) -> bool:
    """Whether a leaf's ``ev`` 4 blob is still an unresolved failure (not a :func:`failure_blob`)."""
    return b'"branch"' in bytes(blob)[:12]


def failure_blob(f: Failure) -> bytes:
    """A resolved failure, as the blob of the row while it waits in its stage input."""
    from .trace_assembly import enc
    return json.dumps({**f.error.to_json(), "when": f.when, "order": f.order, "rt": f.rt, "vals": enc(f.row)},
                      separators=(",", ":")).encode()


def read_failure(blob: bytes) -> Failure:
    from .trace_assembly import dec
    d = json.loads(bytes(blob).decode())
    return Failure(OperatorError.from_json(d), int(d["when"]), int(d["order"]), int(d["rt"]), dec(d["vals"]))


class Failing:
    """The failing rows among a stage input's rows (held rows first, then the batch's): per row
    its ``fail`` code (0: not failing), blob (resolved) and stamp (the rowtime the failing node
    received); the rows Python found nothing wrong with (``bad``, to leave out)."""

    def __init__(self, codes, blobs: list, rts: dict, found: dict, bad: list):
        self.codes = codes
        self.blobs = blobs
        self.rts = rts
        self.found = found
        self.bad = bad

    def without_bad(self) -> "Failing":
        """The same rows with ``bad`` left out (renumbered)."""
        import numpy as np
        if not self.bad:
            return self
        bad = set(self.bad)
        keep = [k for k in range(len(self.codes)) if k not in bad]
        new = {k: n for n, k in enumerate(keep)}
        return Failing(np.asarray([self.codes[k] for k in keep], dtype=np.int64), [self.blobs[k] for k in keep],
                       {new[k]: v for k, v in self.rts.items() if k in new},
                       {new[k]: v for k, v in self.found.items() if k in new}, [])

    def errors(self, r, keys) -> list[tuple[int, bytes]]:
        """``(step, error blob)`` of the rows that fail in this batch (``inputs.Resolved``), in the
        order the local runtime refuses them."""
        from dataclasses import replace
        from .frames import error_blob
        if r.failed is None or not len(r.failed):
            return []
        step, sub, t = keys["step"], keys["sub"], keys["T"]
        hits = []
        for k, s in zip(r.failed.tolist(), r.fail_steps.tolist()):
            f = self.found[k]
            hits.append(((int(s), f.order, int(t[k]) if f.when == AT_MERGE else 0, int(step[k]), int(sub[k])), f))
        hits.sort(key=lambda h: h[0])
        return [(key[0], error_blob(None, replace(f.error, step=key[0]), f.order)) for key, f in hits]

    def values(self, idx, vals: list) -> list:
        """``vals`` (the rows ``idx`` as the merge holds them) with each failing row as its failing
        node received it (what the local runtime's merge holds)."""
        return [self.found[k].row if k in self.found else v for k, v in zip(list(idx), vals)]


def take_failures(failures: Failures | None, ev, blobs: list) -> Failing:
    """Resolve the ``ev`` 4 rows of a stage input (a leaf's failures: unresolved ones from this
    batch, resolved ones it held before)."""
    import numpy as np
    from .framecode import FrameCode
    codes = np.zeros(len(ev), dtype=np.int64)
    out = list(blobs)
    rts, found, bad = {}, {}, []
    for k in np.nonzero(np.asarray(ev) == FrameCode.ERROR)[0].tolist():
        b = bytes(blobs[k])
        if is_failure(b):
            f = failures.resolve(b) if failures is not None else None
            if f is None:
                bad.append(k)
                continue
            out[k] = failure_blob(f)
        else:
            f = read_failure(b)
        codes[k] = f.when
        rts[k] = f.rt
        found[k] = f
    return Failing(codes, out, rts, found, bad)
