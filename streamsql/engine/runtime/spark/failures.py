"""Rows a branch's WHERE or projections cannot compute (calculator errors, SEMANTICS.md 1) on Spark.

A branch computes its rows in Spark SQL with an error flag (``sqlgen``). A flagged row carries its
*failure*: the branch it came through and the row as the branch received it, as UTF-8 JSON. Python
then re-evaluates that row through the branch's chain with the engine's own evaluator
(``operators.scalar.chain_failure``), which names the expression, its operands and the error,
exactly as the local runtime does; only flagged rows (rare) cross to Python.

A failure whose node the plan moved below a UNION ALL (``defer_errors``) travels through the merge
like a row and becomes an error at the step the merge releases it; any other becomes an error at
the row's own step.
"""
from __future__ import annotations

import decimal
import json
from dataclasses import dataclass

from ...functions.spec import to_real
from ...operators.base import OperatorError, calc_error
from ...operators.scalar import RowFunction, chain_failure
from ...plan import Field


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

    def __post_init__(self):
        self.fns = [RowFunction(n) for n in self.nodes]

    def deferred(self, position: int) -> bool:
        return bool(self.nodes[position].defer_errors)


class Failures:
    """Resolves failures of a query's branches into error records."""

    def __init__(self, query_name: str, branches: list[Branch]):
        self.query_name = query_name
        self.branches = branches

    def resolve(self, blob: bytes, step: int) -> tuple[OperatorError, int, bool] | None:
        """``(error, its node's post-order position, whether the merge defers it)`` of a failure
        at ``step``; None if Python finds nothing wrong (Spark and Python disagree: a bug)."""
        d = json.loads(bytes(blob).decode(), parse_float=decimal.Decimal)
        b = self.branches[int(d["branch"])]
        raw = d.get("row") or {}
        row = tuple(_value(raw.get(f"c{i}"), f.type) for i, f in enumerate(b.fields))
        hit = chain_failure(b.fns, int(d["rt"]), row)
        if hit is None:
            return None
        k, err, at_row, at_rt = hit
        e = calc_error(err, step, at_rt, b.fns[k].fields, at_row)
        e.stream = b.stream
        if self.query_name:
            e.message = f"Query {self.query_name}: {e.message}"
        return e, b.order[k], b.deferred(k)
