"""Window aggregation (the semantics, section 3.7): Calcite's group windows and a window table
function's ``GROUP BY window_start, window_end``.

Calcite's ``GROUP BY TUMBLE(t, size [, align])``, ``HOP(t, slide, size [, align])`` (emit period
first, then retention) and ``SESSION(t, gap)`` are planned as a window table function over the
query's input (the other GROUP BY keys are a session's keys) grouped by its window columns, with
``TUMBLE_START``/``_END``/``_ROWTIME`` (and HOP's, SESSION's) in the select list reading them. Both
forms then become one :class:`~streamsql.engine.plan.WindowAggregate`, which assigns each row to
its windows and aggregates there, instead of a window table function's rows (a hop's several
copies of each) waiting and then being grouped: the same groups, stamps and steps.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ..errors import SqlError
from ..expr import Call, Col, Expr, Lit, Rowtime, columns_used, remap, uses_rowtime, walk
from ..plan import Aggregate, Filter, Node, Project, WindowAggregate, WindowTable
from .aggregates import Grouping
from .expressions import Ctx, same_expr, translate
from .names import ROWTIME
from .window_names import AUXILIARY, USAGE
from .window_tvf import SessionCall, _interval, window_fields, window_shape

#: Calcite's group window functions: (required intervals, optional) after the time argument
GROUP_FUNCTIONS = {"TUMBLE": (("SIZE",), ("OFFSET",)), "HOP": (("SLIDE", "SIZE"), ("OFFSET",)),
                   "SESSION": (("GAP",), ())}


def _call(node) -> tuple[str, list] | None:
    """``(name, arguments)`` of a group window or auxiliary function call, else None."""
    if isinstance(node, SessionCall):
        return "SESSION", list(node.expressions)
    if isinstance(node, exp.Anonymous):
        name = str(node.this).upper()
        if name in GROUP_FUNCTIONS or name in AUXILIARY:
            return name, list(node.expressions)
    return None


def is_window_call(node) -> bool:
    return _call(node) is not None


@dataclass
class GroupWindow:
    """A GROUP BY's group window: the window table it is planned as and its keys."""
    name: str
    args: list                # the call's arguments (sqlglot), for matching the auxiliary calls
    node: WindowTable         # the input, windowed
    keys: list[Expr]          # the GROUP BY keys over ``node``: window start and end first
    at: exp.Expr


def find(keys_ast: list, node: Node, scope, source) -> GroupWindow | None:
    """The group window of a GROUP BY (None without one); refuses a second one, and TUMBLE_END and
    friends as keys."""
    found = [(i, k) for i, k in enumerate(keys_ast) if _call(k) is not None]
    if not found:
        return None
    for _i, k in found:
        name, _args = _call(k)
        if name in AUXILIARY:
            raise source.error(f"{name} reads the window of a GROUP BY {AUXILIARY[name][0]}(...); group by "
                               f"{AUXILIARY[name][0]}(...) itself", k)
    if len(found) > 1:
        raise source.error("A GROUP BY can have only one group window (TUMBLE, HOP or SESSION)", found[1][1])
    index, call = found[0]
    name, args = _call(call)
    ctx = Ctx(scope, source, "GROUP BY")
    required, optional = GROUP_FUNCTIONS[name]
    if not 1 + len(required) <= len(args) <= 1 + len(required) + len(optional):
        raise source.error(f"{name} takes the rowtime and {' and '.join(r.lower() for r in required)}"
                           f"{' [and ' + optional[0].lower() + ']' if optional else ''}: {USAGE[name]}", call)
    t = translate(args[0], ctx)
    _check_time(name, t, args[0], node, source)

    class _Env:                 # what window_tvf's helpers read
        pass
    env = _Env()
    env.source = source
    values = {n: _interval(a, env, n.lower() if n != "OFFSET" else "align", name, positive=(n != "OFFSET"))
              for n, a in zip(required + optional, args[1:])}
    shape = window_shape(name, values, env, call)
    others = [translate(k, ctx) for i, k in enumerate(keys_ast) if i != index]
    partition = others if name == "SESSION" else []
    fields = window_fields(list(node.fields), name, source, call)
    wt = WindowTable(node, shape, partition, fields, is_stream=True)
    n = len(node.fields)
    keys = [Col(n, fields[n].name, fields[n].type), Col(n + 1, fields[n + 1].name, fields[n + 1].type)] + others
    return GroupWindow(name, args, wt, keys, call)


def _check_time(name: str, t: Expr, at, node: Node, source) -> None:
    """The time argument of a group window must be the input's rowtime."""
    if isinstance(t, Rowtime) and t.input == 0:
        return
    from .monotonic import is_increasing
    what = source.snippet(at)
    if is_increasing(t, node):
        raise source.error(f"{name} windows a stream by its rowtime: write {name}(ROWTIME, ...); '{what}' is "
                           "monotonic but not the rowtime (use the align argument to move the windows)", at)
    raise source.error(f"{name} needs the rowtime as its time argument ({name}(ROWTIME, ...)); '{what}' is not "
                       "monotonic in the rowtime", at)


class WindowGrouping(Grouping):
    """The keys and aggregates of a group-window query: ``TUMBLE_END(t, size)`` (and the other
    auxiliary functions) read the window's columns when their arguments are the GROUP BY's."""

    def __init__(self, keys, input_ctx, gw: GroupWindow):
        super().__init__(keys, input_ctx)
        self.gw = gw

    def substitute(self, node, ctx):
        c = _call(node)
        if c is not None:
            name, args = c
            gw = self.gw
            if name in GROUP_FUNCTIONS:
                raise ctx.source.error(f"{name}(...) is the group window; in {ctx.clause} use {name}_START(...) or "
                                       f"{name}_END(...)", node)
            group, which = AUXILIARY[name]
            same = group == gw.name and len(args) == len(gw.args) and all(
                same_expr(translate(a, self.input_ctx.plain(ctx.clause)), translate(b, self.input_ctx.plain(ctx.clause)))
                for a, b in zip(args, gw.args))
            if not same:
                raise ctx.source.error(f"{name} must repeat the GROUP BY's {gw.name}(...) with the same arguments", node)
            if which < 2:
                k = self.keys[which]
                return Col(which, k.name, k.type)
            k = self.keys[1]
            from ..plan import _minus_ms
            return _minus_ms(Col(1, k.name, k.type))
        return super().substitute(node, ctx)


# --------------------------------------------------------------------------- the node

def window_columns(node: Node) -> dict[int, int]:
    """``{column: 0 start, 1 end, 2 time}`` of the window columns a node's output carries: a window
    table's, through WHERE and projections that copy them."""
    if isinstance(node, WindowTable):
        n = len(node.input.fields)
        return {n: 0, n + 1: 1, n + 2: 2}
    if isinstance(node, WindowAggregate):
        return dict(node.window_keys)
    if isinstance(node, Filter):
        return window_columns(node.input)
    if isinstance(node, Project) and node.rowtime is None:
        inner = window_columns(node.input)
        return {j: inner[e.index] for j, e in enumerate(node.exprs) if isinstance(e, Col) and e.index in inner}
    return {}


def stamp_kind(e: Expr | None, keys: list[Expr], wcols: dict) -> str | None:
    """``end``, ``start`` or ``time`` when ``e`` (over the aggregate's output) is that window key."""
    if e is None:
        return "end"
    if isinstance(e, Col) and e.index < len(keys) and isinstance(keys[e.index], Col):
        w = wcols.get(keys[e.index].index)
        if w is not None:
            return ("start", "end", "time")[w]
    if isinstance(e, Call) and e.fn == "-" and isinstance(e.args[0], Col) and isinstance(e.args[1], Lit):
        k = stamp_kind(e.args[0], keys, wcols)
        iv = e.args[1].value
        if k == "end" and getattr(iv, "millis", None) == 1 and not getattr(iv, "months", 0):
            return "time"
    return None


def is_window_stamp(e: Expr, keys: list[Expr], node: Node) -> bool:
    """Whether an ``AS ROWTIME`` over an aggregate's output is one of its window's columns."""
    wcols = window_columns(node)
    return bool(wcols) and e is not None and stamp_kind(e, keys, wcols) is not None


def window_aggregate(agg: Aggregate, gw: GroupWindow | None, source, at) -> Node:
    """The aggregate as a :class:`WindowAggregate` when it groups by a window (a group window, or a
    window table's window start and end with nothing else of the window in its keys and
    aggregates); else the aggregate itself, stamped with the window's end when it groups a window
    table's rows by their end (so that it stamps as the window aggregate would)."""
    wcols = window_columns(agg.input)
    if not wcols:
        return agg
    stamp = stamp_kind(agg.stamp, agg.keys, wcols)
    if stamp is None:
        raise source.error("The ROWTIME of a window aggregation must be its window's end, start or time "
                           "(window_end, window_start, window_time)", at)
    fused = _fuse(agg, gw, stamp)
    if fused is not None:
        return fused
    if agg.stamp is None and agg.time_key is not None:
        # grouped by WINDOW_END (or WINDOW_TIME) through something that cannot be fused: the rows
        # arrive stamped with their window's end; the group is stamped with it too
        k = agg.keys[agg.time_key]
        w = wcols.get(k.index) if isinstance(k, Col) else None
        key = Col(agg.time_key, agg.fields[agg.time_key].name, agg.fields[agg.time_key].type)
        if w == 1:
            agg.stamp = key
        elif w == 2:
            from .. import time as sqltime
            from ..types import SqlType
            one = Lit(sqltime.Interval(0, 1), SqlType("INTERVAL", nullable=False))
            agg.stamp = Call("+", (key, one), SqlType("TIMESTAMP", nullable=False))
    return agg


def _fuse(agg: Aggregate, gw: GroupWindow | None, stamp: str) -> WindowAggregate | None:
    """Aggregate + window table (through WHERE clauses and projections that do not read the
    window or the rowtime) as one window aggregation, or None."""
    node = agg.input
    keys, args = list(agg.keys), [a.arg for a in agg.aggs]
    filters = []
    from ..functions import can_fail
    while isinstance(node, (Filter, Project)):
        # a WHERE or projection over the window table's rows sees them when their window closes: one
        # that can refuse a row (a calculator error) stays there, unfused
        if any(can_fail(e) for e in (node.exprs if isinstance(node, Project) else [node.cond])):
            return None
        if isinstance(node, Project):
            if node.rowtime is not None:
                return None
            exprs = node.exprs
            keys = [remap(k, cols=lambda c: exprs[c.index]) for k in keys]
            args = [None if a is None else remap(a, cols=lambda c: exprs[c.index]) for a in args]
            filters = [remap(f, cols=lambda c: exprs[c.index]) for f in filters]
        else:
            filters.append(node.cond)
        node = node.input
    if not isinstance(node, WindowTable):
        return None
    n = len(node.input.fields)
    window_keys = {i: k.index - n for i, k in enumerate(keys) if isinstance(k, Col) and k.index >= n}
    if 1 not in window_keys.values():
        return None
    if node.shape.is_session:
        # a session is one window per session key: every key must be grouped by
        if 0 not in window_keys.values():
            return None
        plain = [k for i, k in enumerate(keys) if i not in window_keys]
        if not all(any(same_expr(p, k) for k in plain) for p in node.partition):
            return None

    def plain(e: Expr) -> bool:
        return not any(c >= n for c in columns_used(e)) and (gw is not None or not uses_rowtime(e))
    if not all(plain(k) for i, k in enumerate(keys) if i not in window_keys):
        return None
    if not all(a is None or plain(a) for a in args) or not all(plain(f) for f in filters):
        return None
    inner = node.input
    for f in filters:                   # WHERE on the input's columns: before the windows
        inner = Filter(inner, f, list(inner.fields))
    from ..plan import AggCall
    aggs = [AggCall(a.fn, arg, a.type, a.distinct) for a, arg in zip(agg.aggs, args)]
    return WindowAggregate(inner, node.shape, list(node.partition), keys, window_keys, aggs, list(agg.fields),
                           stamp=stamp)


# --------------------------------------------------------------------------- window joins

def window_output(node: Node) -> bool:
    """Whether ``node``'s rows are a window's rows stamped with its end (a window table function,
    a window aggregation stamped with its end), seen through WHERE and projections that keep the
    rowtime and the window's start and end."""
    cols = window_columns(node)
    if not (0 in cols.values() and 1 in cols.values()):
        return False
    while isinstance(node, (Filter, Project)):
        if isinstance(node, Project) and node.rowtime is not None:
            return False
        node = node.input
    return isinstance(node, WindowTable) or (isinstance(node, WindowAggregate) and node.stamp == "end")


WINDOW_JOIN = ("A window join joins the rows of the same window: its ON clause needs "
               "L.window_start = R.window_start AND L.window_end = R.window_end (then any keys)")


def check_window_join(equi: list, left: Node, right: Node, source, at) -> None:
    """A join of two window outputs must equate their windows' starts and ends (then its rows
    meet at their common stamp, the window's end, as a join of current rows does)."""
    lc, rc = window_columns(left), window_columns(right)
    found = set()
    for a, b in equi:
        if isinstance(a, Col) and isinstance(b, Col):
            wa, wb = lc.get(a.index), rc.get(b.index)
            if wa is not None and wa == wb:
                found.add(wa)
    if not {0, 1} <= found:
        raise source.error(WINDOW_JOIN, at)
