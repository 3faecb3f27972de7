"""Window Top-N and deduplication (the semantics, section 3.7): ``ROW_NUMBER()``, ``RANK()`` and
``DENSE_RANK()`` ``OVER (PARTITION BY ... ORDER BY ...)`` in a select list, planned as a
:class:`~streamsql.engine.plan.Rank`.

On a stream the PARTITION BY must hold a window or a monotonic period (a window table function's
``window_end``, a window aggregation's, or ``FLOOR(ROWTIME TO HOUR)``): the numbering of a
partition is known only once all its rows are in. A filter ``rn <= N`` (``rn < N``, ``rn = 1``,
``rn BETWEEN 1 AND N``) on the numbering, written around the query, is pushed into the Rank, which
then keeps only the rows that can still make it.
"""
from __future__ import annotations

from sqlglot import exp

from ..expr import Call, Col, Expr, Lit, Rowtime, remap
from ..plan import RANK_FUNCTIONS, Field, Filter, Node, Project, Rank, SortKey
from ..types import BIGINT
from . import nodes as N

RANKING = {exp.RowNumber: "ROW_NUMBER", exp.Rank: "RANK", exp.DenseRank: "DENSE_RANK"}
NEEDS_PERIOD = ("{fn} on a stream needs a window or a monotonic period in PARTITION BY: PARTITION BY window_start, "
                "window_end of a window table function (TUMBLE, HOP, CUMULATE, SESSION) or of a window "
                "aggregation, or a period such as FLOOR(ROWTIME TO HOUR)")


def is_ranking(node: N.Over) -> bool:
    return type(node.this) in RANKING


class RankCall:
    def __init__(self, fn: str, partition: list[Expr], order: list[SortKey], at):
        self.fn, self.partition, self.order, self.at = fn, partition, order, at


def add(collector, node: N.Over, ctx) -> Col:
    """A ranking call of a select list (the collector's ``ranks``): its output column."""
    from .expressions import translate
    fn = RANKING[type(node.this)]
    source = collector.input_ctx.source
    if any(v for k, v in node.this.args.items() if v):
        raise source.error(f"{fn}() takes no argument", node.this)
    r = collector.resolved(node.args["window"])
    if r.frame is not None:
        raise source.error(f"{fn} takes no window frame (ROWS or RANGE): it numbers the whole partition", r.frame)
    ictx = collector.input_ctx
    partition = [translate(p, ictx.plain("PARTITION BY")) for p in r.partition]
    order = []
    if r.order is not None:
        if r.order.args.get("within") is not None:
            raise source.error("WITHIN is not allowed in a window's ORDER BY", r.order)
        for o in r.order.expressions:
            explicit = o.meta.get("explicit_nulls")
            order.append(SortKey(translate(o.this, ictx.plain("ORDER BY")), bool(o.args.get("desc")),
                                 None if explicit is None else explicit == "FIRST"))
    if collector.ranks:
        raise source.error("Only one ranking function (ROW_NUMBER, RANK, DENSE_RANK) per select list", node)
    collector.ranks.append(RankCall(fn, partition, order, node))
    return Col(len(collector.input_node.fields), f"${fn}", BIGINT.with_nullable(False))


def rowtime_expr(e: Expr, node: Node) -> Expr | None:
    """``e`` (over ``node``'s output) as an expression of a window operator's rowtime below
    ``node`` (through WHERE and projections that keep the rowtime), or None."""
    while True:
        cols = getattr(node, "rowtime_columns", None)
        if cols is not None:
            m = cols()
            from ..expr import columns_used
            used = columns_used(e)
            if used and used <= set(m):
                return remap(e, cols=lambda c: m[c.index])
            return None
        if isinstance(node, Filter):
            node = node.input
        elif isinstance(node, Project) and node.rowtime is None:
            exprs = node.exprs
            e = remap(e, cols=lambda c: exprs[c.index])
            node = node.input
        else:
            return None


def rank_node(input_node: Node, collector, stream: bool, source) -> Rank:
    from .monotonic import is_increasing
    call = collector.ranks[0]
    if collector.calls:
        raise source.error(f"{call.fn} cannot be combined with OVER aggregates in one select list; "
                           "compute them in a sub-query", call.at)
    if not stream:
        raise source.error(f"{call.fn} is supported on streams (SELECT STREAM) only", call.at)
    mono = [i for i, p in enumerate(call.partition) if is_increasing(p, input_node)]
    if not mono:
        raise source.error(NEEDS_PERIOD.format(fn=call.fn), call.at)
    tk = mono[0]
    # a partition by a window's end (its rows' rowtime) is stamped with that end
    for i in mono:
        r = rowtime_expr(call.partition[i], input_node)
        if isinstance(r, Rowtime):
            tk = i
            break
    window_end = isinstance(rowtime_expr(call.partition[tk], input_node), Rowtime)
    fields = list(input_node.fields) + [Field(f"${call.fn}", BIGINT.with_nullable(False))]
    return Rank(input_node, call.fn, call.partition, tk, call.order, fields, window_end=window_end)


def push_limit(node: Filter) -> None:
    """``WHERE rn <= N`` (and the like) over a Rank's number: the Rank keeps at most those rows."""
    inner = node.input
    exprs = None
    while isinstance(inner, (Filter, Project)):
        if isinstance(inner, Project):
            if exprs is not None:
                return
            exprs = inner.exprs
        inner = inner.input
    if not isinstance(inner, Rank):
        return
    number = len(inner.input.fields)

    def is_number(e: Expr) -> bool:
        if exprs is not None:
            if not isinstance(e, Col) or e.index >= len(exprs):
                return False
            e = exprs[e.index]
        return isinstance(e, Col) and e.index == number

    limits = []
    for c in _conjuncts(node.cond):
        n = _limit_of(c, is_number)
        if n is not None:
            limits.append(n)
    if limits:
        n = max(0, min(limits))
        inner.limit = n if inner.limit is None else min(inner.limit, n)


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Call) and e.fn == "AND":
        return [c for a in e.args for c in _conjuncts(a)]
    return [e]


def _int(e: Expr) -> int | None:
    while isinstance(e, Call) and e.fn == "CAST" and len(e.args) == 1:
        e = e.args[0]
    if isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    try:
        import decimal
        if isinstance(e, Lit) and isinstance(e.value, decimal.Decimal) and e.value == e.value.to_integral_value():
            return int(e.value)
    except Exception:
        return None
    return None


def _limit_of(c: Expr, is_number) -> int | None:
    """The largest number ``c`` lets through, when it bounds the rank number from above."""
    if not isinstance(c, Call) or len(c.args) != 2:
        if isinstance(c, Call) and c.fn == "BETWEEN" and len(c.args) == 3 and is_number(c.args[0]):
            return _int(c.args[2])
        return None
    a, b = c.args
    flip = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "=": "="}
    op = c.fn
    if not is_number(a) and is_number(b):
        a, b, op = b, a, flip.get(op, op)
    if not is_number(a):
        return None
    n = _int(b)
    if n is None:
        return None
    return {"<=": n, "<": n - 1, "=": n}.get(op)


__all__ = ["RANK_FUNCTIONS", "RANKING", "add", "is_ranking", "push_limit", "rank_node"]
