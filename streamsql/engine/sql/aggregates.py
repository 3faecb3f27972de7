"""Aggregate calls and GROUP BY matching.

An aggregate query's select list (and HAVING) may only combine group keys and aggregates. Any
sub-expression equal to a key (after resolution, so ``o.x`` and ``x`` match) reads that key from
the aggregate's output; anything else that reaches a column is "not being grouped".
"""
from __future__ import annotations

from sqlglot import exp

from ..expr import Col, Expr, columns_used, uses_rowtime
from ..plan import AggCall, Field
from ..types import BIGINT, DOUBLE, SqlType, decimal_type
from . import nodes as N
from .expressions import AGGREGATES, Ctx, cannot_apply, func_name, same_expr, translate


def aggregate_type(fn: str, arg: Expr | None, ctx: Ctx, at) -> SqlType:
    if fn == "COUNT":
        return BIGINT.with_nullable(False)
    t = arg.type
    if fn in ("SUM", "AVG"):
        if t.name == "NULL":
            return DOUBLE
        if not t.is_numeric:
            raise cannot_apply(ctx.source, fn, [t], at)
        if t.is_integer:
            return (BIGINT if fn == "SUM" else t).with_nullable(True)
        if t.name == "DECIMAL":
            if fn == "SUM":
                return decimal_type(min(38, t.precision + 10), t.scale)
            return decimal_type(min(38, t.precision + 4), min(38, t.scale + 4))
        return DOUBLE
    return t.with_nullable(True)     # MIN, MAX, FIRST_VALUE, LAST_VALUE


def aggregate_call(node: exp.Expr, ctx: Ctx) -> AggCall:
    """The AggCall for ``COUNT(*)``, ``SUM(DISTINCT x)``, ... (argument translated in ``ctx``)."""
    fn = AGGREGATES.get(type(node))
    if fn is None:
        raise ctx.source.error(f"Unsupported aggregate function {func_name(node, ctx.source)}", node)
    this = node.this
    distinct = False
    if isinstance(this, exp.Distinct):
        if len(this.expressions) != 1:
            raise ctx.source.error(f"{fn}(DISTINCT ...) takes exactly one argument", node)
        distinct, this = True, this.expressions[0]
    if isinstance(this, exp.Star) or (isinstance(this, exp.Column) and isinstance(this.this, exp.Star)):
        if fn != "COUNT" or distinct:
            raise ctx.source.error(f"{fn}(*) is not allowed; only COUNT(*)", node)
        return AggCall("COUNT", None, BIGINT.with_nullable(False))
    if this is None:
        raise ctx.source.error(f"{fn} needs an argument", node)
    extra = [e for e in node.expressions] if "expressions" in node.arg_types else []
    if extra:
        raise ctx.source.error(f"{fn} takes one argument", node)
    arg = translate(this, ctx.plain(f"the argument of {fn}"))
    return AggCall(fn, arg, aggregate_type(fn, arg, ctx, node), distinct)


def same_agg(a: AggCall, b: AggCall) -> bool:
    return (a.fn == b.fn and a.distinct == b.distinct and
            ((a.arg is None and b.arg is None) or
             (a.arg is not None and b.arg is not None and same_expr(a.arg, b.arg))))


def contains_aggregate(node: exp.Expr) -> bool:
    """Whether ``node`` calls an aggregate outside OVER and outside sub-queries."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (N.Over, exp.Subquery, exp.Select)):
            continue
        if isinstance(n, exp.AggFunc):
            return True
        stack.extend(n.iter_expressions())
    return False


def key_name(e: Expr, i: int) -> str:
    return e.name if isinstance(e, Col) else f"$K{i}"


class Grouping:
    """The keys of an aggregate query and the aggregates found in its select list / HAVING.
    Output tuple of the Aggregate: keys, then aggregates."""

    def __init__(self, keys: list[Expr], input_ctx: Ctx):
        self.keys = keys
        self.input_ctx = input_ctx
        self.aggs: list[AggCall] = []

    def fields(self) -> list[Field]:
        return ([Field(key_name(k, i), k.type) for i, k in enumerate(self.keys)]
                + [Field(f"$A{j}", a.type) for j, a in enumerate(self.aggs)])

    def key_col(self, e: Expr) -> Col | None:
        for i, k in enumerate(self.keys):
            if same_expr(e, k):
                return Col(i, key_name(k, i), k.type)
        return None

    def add(self, agg: AggCall) -> Col:
        for j, a in enumerate(self.aggs):
            if same_agg(a, agg):
                break
        else:
            self.aggs.append(agg)
            j = len(self.aggs) - 1
        return Col(len(self.keys) + j, f"$A{j}", self.aggs[j].type)

    def grouped(self, e: Expr, source, at) -> Expr:
        """An already-translated input expression (``*`` expansion) as an output column."""
        col = self.key_col(e)
        if col is None:
            raise source.error(f"Expression '{getattr(e, 'name', e)}' is not being grouped", at)
        return col

    def substitute(self, node: exp.Expr, ctx: Ctx) -> Expr | None:
        """Translate ``node`` if it is an aggregate or a group key; None to recurse into it."""
        if isinstance(node, exp.Paren):
            return None
        if isinstance(node, N.Over):
            raise ctx.source.error("Windowed aggregation (OVER) cannot be combined with GROUP BY "
                                   "or aggregates in the same query", node)
        if isinstance(node, exp.AggFunc):
            return self.add(aggregate_call(node, self.input_ctx.plain(ctx.clause)))
        if contains_aggregate(node):
            return None
        e = translate(node, self.input_ctx.plain(ctx.clause))
        col = self.key_col(e)
        if col is not None:
            return col
        if isinstance(node, exp.Column) or not (columns_used(e) or uses_rowtime(e)):
            if columns_used(e) or uses_rowtime(e):
                raise ctx.source.error(
                    f"Expression '{ctx.source.snippet(node)}' is not being grouped", node)
            return e
        return None
