"""Query planning: SELECT (with WHERE, GROUP BY, HAVING, DISTINCT, OVER, ORDER BY), UNION ALL,
WITH and VALUES, to :mod:`streamsql.engine.plan` nodes.

Shape of a SELECT: ``Project(Filter(<from>, where), select list)``; an aggregate query puts
``Aggregate`` (then HAVING's ``Filter``) under the Project, a windowed one a ``Window``; ORDER BY
is a ``Sort`` above the Project, except a T-sort, which sits under it because it re-stamps the
rows with the ``AS ROWTIME`` expression of the Project's input.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp
from sqlglot.tokens import TokenType

from ..errors import SqlError
from ..expr import INCREASING, Col, Expr, Rowtime, monotonicity, remap
from ..plan import Aggregate, Field, Filter, Node, Project, Query, Sort, SortKey, Union, Values, Window
from ..types import common_type
from . import group_windows, nodes as N, window_rank
from .aggregates import Grouping, contains_aggregate
from .context import AUTO, RELATIONAL, CteDef, Env, Origin, QueryResult, Reads
from .expressions import (Ctx, cast, constant_value, is_constant, require_boolean, same_expr, tname,
                          translate)
from .monotonic import is_increasing, is_rowtime_only
from .names import ROWTIME, Rel, Scope, canonical, column_parts
from .relations import FromResult, plan_from, plan_values, rowtime_references
from .source import Source, span, start_of
from .windows import WindowCollector, named_windows

MONOTONIC_ROWTIME = "ROWTIME expression must be monotonic in the input's ROWTIME"


@dataclass
class SelectItem:
    ast: exp.Expr | None      # the expression as written (None for a ``*`` expansion)
    expr: Expr | None         # already resolved (``*`` expansions)
    alias: str | None
    at: exp.Expr
    name: str = ""


# --------------------------------------------------------------------------- entry points

def is_streaming(ast: exp.Expr, source: Source) -> bool:
    """Whether a query says SELECT STREAM (its top-level SELECT, or a UNION's branches)."""
    if isinstance(ast, exp.Subquery):
        return is_streaming(ast.this, source)
    if isinstance(ast, exp.SetOperation):
        return is_streaming(ast.this, source) or is_streaming(ast.expression, source)
    if isinstance(ast, exp.Select):
        kw = select_keyword(ast, source)
        nxt = source.next_token(kw) if kw is not None else None
        return nxt is not None and nxt.start in source.stream_tokens
    return False


def plan_statement_query(ast: exp.Expr, env: Env, sql: str) -> tuple[Query, QueryResult]:
    """Plan a top-level query; under STREAM the result must be a stream."""
    stream = is_streaming(ast, env.source)
    r = plan_query(ast, env.derive(require_stream=stream), AUTO if stream else RELATIONAL)
    if stream and not r.is_stream:
        origin = r.origin or Origin("values", "", start_of(ast))
        raise origin.error(env.source)
    q = Query(r.node, r.columns, r.is_stream, sql, r.rowtime_column,
              list(env.reads.streams), list(env.reads.tables))
    q.promoted = dict(env.reads.promoted)
    return q, r


def plan_query(ast: exp.Expr, env: Env, mode: str, overrides: list[str] | None = None) -> QueryResult:
    source = env.source
    with_ = ast.args.get("with_")
    if with_ is not None:
        env = _with_items(with_, env, mode)
    if isinstance(ast, exp.Subquery):
        for key in ("order", "limit", "offset"):
            if ast.args.get(key) is not None:
                raise source.error(f"{key.upper()} on a parenthesized query is not supported", ast.args[key])
        return plan_query(ast.this, env, mode, overrides)
    if isinstance(ast, exp.Union):
        return _plan_union(ast, env, mode, overrides)
    if isinstance(ast, exp.SetOperation):
        kw = "INTERSECT" if isinstance(ast, exp.Intersect) else "EXCEPT"
        raise source.error(f"{kw} is not supported", _set_keyword(ast, source))
    if isinstance(ast, exp.Select):
        return _plan_select(ast, env, mode, overrides)
    if isinstance(ast, exp.Values):
        node, at = plan_values(ast, env, overrides)
        return QueryResult(node, node.fields, False, False, None, [None] * len(node.fields),
                           Origin("values", "", at))
    raise source.error(f"Expected a query, not '{source.snippet(ast)}'", ast)


def _with_items(with_: exp.With, env: Env, mode: str) -> Env:
    source = env.source
    if with_.args.get("recursive"):
        raise source.error("WITH RECURSIVE is not supported", with_)
    ctes = dict(env.ctes)
    for cte in with_.expressions:
        alias = cte.args.get("alias")
        name = canonical(alias.this)
        cols = alias.args.get("columns")
        columns = [canonical(c) for c in cols] if cols else None
        d = CteDef(name, cte.this, columns, env.derive(ctes=dict(ctes), require_stream=False))
        # validate now, so that an unused WITH item with a mistake is still reported
        plan_query(d.query, d.env.derive(reads=Reads()), mode, columns)
        ctes[name] = d
    return env.derive(ctes=ctes)


# --------------------------------------------------------------------------- helpers

def select_keyword(sel: exp.Select, source: Source):
    """The SELECT token of ``sel`` (the last SELECT before its first select item)."""
    first = start_of(sel.expressions[0]) if sel.expressions else None
    if first is None:
        return None
    i = source.token_at_or_after(first) - 1
    while i >= 0:
        tok = source.tokens[i]
        if tok.token_type == TokenType.SELECT:
            return tok
        i -= 1
    return None


def _set_keyword(ast: exp.SetOperation, source: Source):
    """The UNION/INTERSECT/EXCEPT token between the two sides of ``ast``."""
    s = start_of(ast.expression)
    ls = span(ast.this)
    if ls is not None:
        tok = source.keyword(ls[1] + 1, TokenType.UNION, TokenType.INTERSECT, TokenType.EXCEPT, stop=s)
        if tok is not None:
            return tok
    return ast


def _items(sel: exp.Select, scope: Scope, source: Source, overrides: list[str] | None) -> list[SelectItem]:
    items: list[SelectItem] = []
    for proj in sel.expressions:
        if isinstance(proj, exp.Star):
            if not scope.rels:
                raise source.error("SELECT * needs a FROM clause", proj)
            items += [SelectItem(None, e, None, proj, name) for name, e in scope.star(None, proj)]
        elif isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star):
            table = proj.args.get("table")
            q = canonical(table) if table is not None else None
            items += [SelectItem(None, e, None, proj, name) for name, e in scope.star(q, proj)]
        elif isinstance(proj, exp.Alias):
            items.append(SelectItem(proj.this, None, canonical(proj.args["alias"]), proj))
        elif isinstance(proj, exp.Aliases):
            raise source.error("Only one alias per select item is allowed", proj)
        else:
            items.append(SelectItem(proj, None, None, proj))
    if overrides is not None:
        if len(overrides) != len(items):
            raise source.error(f"The column list names {len(overrides)} columns but the query has "
                               f"{len(items)}", sel.expressions[0] if sel.expressions else sel)
        for it, name in zip(items, overrides):
            it.alias = name
    for i, it in enumerate(items):
        if it.name:
            pass
        elif it.alias is not None:
            it.name = it.alias
        else:
            a = it.ast
            while isinstance(a, exp.Paren):
                a = a.this
            if isinstance(a, exp.Column) and isinstance(a.this, exp.Identifier):
                it.name = canonical(a.this)      # o.ROWTIME too: a qualified column keeps its name
            else:
                it.name = f"EXPR${i}"
    return items


def _is_bare_rowtime(it: SelectItem, scope: Scope, has_rowtime: bool, single: bool,
                     aggregate: bool) -> bool:
    """An unaliased ROWTIME in the select list: the output rowtime, not a column."""
    if it.alias is not None or it.ast is None or not has_rowtime:
        return False
    a = it.ast
    if not isinstance(a, exp.Column) or not isinstance(a.this, exp.Identifier):
        return False
    q, name = column_parts(a)
    if name != ROWTIME or not scope.is_implicit_rowtime(a):
        return False
    if q is None:
        return True
    return not aggregate and (single or scope.rel(q, a).gives_rowtime)


def _column(it: SelectItem, e: Expr, source: Source) -> Field:
    """The field of a select item. An INTERVAL is a literal for time arithmetic, never a value of
    a row (docs/sql-reference.md, types): neither a stream nor a relation can carry one."""
    if e.type.name == "INTERVAL":
        raise source.error(f"A column of a query cannot be an INTERVAL ('{it.name}'): intervals are only for "
                           "time arithmetic (a TIMESTAMP plus or minus an INTERVAL)", it.at)
    return Field(it.name, e.type)


def _check_rowtime_type(e: Expr, source: Source, at) -> None:
    if e.type.name != "TIMESTAMP":
        raise source.error(f"ROWTIME must be a TIMESTAMP, not {tname(e.type)}", at)


def _promotion(e: Expr, fr: FromResult, env: Env):
    """``col AS ROWTIME`` (or ``CAST(col AS TIMESTAMP)``) straight over a foreign stream: the
    stream's rows are stamped with that column when they are read from its files, so the
    expression *is* the rowtime. Returns ``(stream, column)`` and records it, else None."""
    from ..expr import Call
    from ..plan import StreamInfo, StreamScan
    node = fr.node
    if not isinstance(node, StreamScan) or not fr.single:
        return None
    info = env.catalog.resolve(node.stream)
    if not isinstance(info, StreamInfo) or not info.foreign:
        return None
    inner = e.args[0] if isinstance(e, Call) and e.fn == "CAST" else e
    if not isinstance(inner, Col):
        return None
    col = node.fields[inner.index].name
    env.reads.promoted[node.stream] = col
    return node.stream, col


def _monotonic_rowtime(e: Expr) -> bool:
    return is_rowtime_only(e) and monotonicity(e) == INCREASING


def _check_clauses(sel: exp.Select, source: Source, stream: bool) -> None:
    """Clauses refused in words that depend on the query (the others: planned.py)."""
    for key in ("limit", "offset", "fetch"):
        v = sel.args.get(key)
        if v is not None:
            if stream:
                raise source.error("LIMIT, OFFSET and FETCH cannot be used in a streaming query", v)
            raise source.error("LIMIT, OFFSET and FETCH are not supported", v)
    d = sel.args.get("distinct")
    if d is not None and d.args.get("on") is not None:
        raise source.error("DISTINCT ON is not supported", d)


# --------------------------------------------------------------------------- SELECT

def _plan_select(sel: exp.Select, env: Env, mode: str, overrides) -> QueryResult:
    source = env.source
    select_kw = select_keyword(sel, source)
    base = Ctx(None, source, "WHERE")
    named = named_windows(sel, base)

    if sel.args.get("from_") is None:
        values = Values([()], [])
        at = select_kw.start if select_kw is not None else start_of(sel)
        fr = FromResult(values, Scope([], source), False, False, Origin("values", "", at), True)
    else:
        needed = rowtime_references(sel) if sel.args.get("joins") else set()
        fr = plan_from(sel, env.derive(require_stream=False), mode, named, needed)
    if env.require_stream and not fr.is_stream:
        # report the conversion before anything that only fails because it is not a stream
        raise (fr.origin or Origin("values", "", start_of(sel))).error(source)
    _check_clauses(sel, source, fr.is_stream)
    scope = fr.scope
    node = fr.node
    stream = fr.is_stream

    where = sel.args.get("where")
    if where is not None:
        cond = translate(where.this, Ctx(scope, source, "WHERE"))
        require_boolean(cond, source, "WHERE clause", where.this)
        node = Filter(node, cond, list(node.fields), is_stream=stream)
        window_rank.push_limit(node)        # WHERE rn <= N over a Top-N: it keeps no more

    items = _items(sel, scope, source, overrides)
    group, having = sel.args.get("group"), sel.args.get("having")
    order = sel.args.get("order")
    aggregate = (group is not None or having is not None
                 or any(it.ast is not None and contains_aggregate(it.ast) for it in items)
                 or (order is not None and any(contains_aggregate(o.this) for o in order.expressions)))
    if aggregate:
        return _plan_aggregate(sel, env, fr, node, items, select_kw)
    if sel.args.get("distinct") is not None:
        return _plan_distinct(sel, env, fr, node, items, select_kw)
    return _plan_plain(sel, env, fr, node, items, named)


def _plan_plain(sel, env: Env, fr: FromResult, node: Node, items, named) -> QueryResult:
    source, scope, stream = env.source, fr.scope, fr.is_stream
    order = sel.args.get("order")
    t_sort = order is not None and order.args.get("within") is not None
    collector = WindowCollector(node, Ctx(scope, source, "SELECT"), named)
    ctx = Ctx(scope, source, "SELECT", windows=collector)
    exprs, fields, at = [], [], []
    rowtime_col = rowtime_expr = rowtime_item = None
    for it in items:
        if _is_bare_rowtime(it, scope, fr.has_rowtime, fr.single, False) or \
                (it.alias == ROWTIME and fr.has_rowtime):
            if rowtime_col is not None:
                raise source.error("ROWTIME appears more than once in the select list", it.at)
            rowtime_col, rowtime_item = len(fields), it
            if it.alias == ROWTIME:
                e = translate(it.ast, ctx)
                _check_rowtime_type(e, source, it.ast)
                if not t_sort and not _monotonic_rowtime(e):
                    promoted = _promotion(e, fr, env)
                    if promoted is None:
                        raise source.error(MONOTONIC_ROWTIME, it.ast)
                    e = Rowtime(0)
                rowtime_expr = None if isinstance(e, Rowtime) else e
            continue
        e = it.expr if it.expr is not None else translate(it.ast, ctx)
        exprs.append(e)
        fields.append(_column(it, e, source))
        at.append(start_of(it.at))
    if collector.ranks:         # ROW_NUMBER, RANK, DENSE_RANK over a window or a period
        node = window_rank.rank_node(node, collector, stream, source)
    elif collector.calls:
        calls = list(collector.calls)
        wfields = list(node.fields) + [Field(f"$W{j}", c.agg.type) for j, c in enumerate(calls)]
        node = Window(node, calls, wfields, is_stream=stream)

    def fallback(ast: exp.Expr) -> Expr | None:
        saved = list(collector.calls)
        try:
            e = translate(ast, ctx)
        finally:
            collector.calls[:] = saved
        for i, x in enumerate(exprs):
            if same_expr(e, x):
                return Col(i, fields[i].name, fields[i].type)
        if rowtime_item is not None and same_expr(e, rowtime_expr if rowtime_expr is not None else Rowtime(0)):
            return Rowtime(0)
        if rowtime_expr is None and fr.has_rowtime and is_rowtime_only(e):
            return e      # a function of the input's ROWTIME, which the Project keeps
        return None

    if t_sort:
        if not stream:
            raise source.error("ORDER BY ... WITHIN (T-sort) is only for streaming queries", order)
        if rowtime_item is None or rowtime_item.alias != ROWTIME:
            raise source.error("ORDER BY ... WITHIN needs an expression AS ROWTIME in the select list", order)
        ts = rowtime_expr if rowtime_expr is not None else Rowtime(0)
        keys = _order_keys(order, fields, rowtime_col, True, source, fallback)
        back = [SortKey(remap(k.expr, cols=lambda c: exprs[c.index], rowtime=lambda r: ts),
                        k.descending, k.nulls_first) for k in keys]
        if not same_expr(back[0].expr, ts) or back[0].descending:
            raise source.error("ORDER BY ... WITHIN must start with the expression the select list "
                               "gives AS ROWTIME", order.expressions[0])
        within = _within(order, source)
        node = Sort(node, back, list(node.fields), within=within, rowtime=ts, is_stream=True)
        project = Project(node, exprs, fields, None, is_stream=True)
        return QueryResult(project, fields, True, True, rowtime_col, at, None)

    project = Project(node, exprs, fields, rowtime_expr, is_stream=stream,
                      rowtime_at=rowtime_col if rowtime_col is not None else 0)
    root = _maybe_sort(order, project, fields, rowtime_col, fr.has_rowtime, stream, source, fallback)
    return QueryResult(root, fields, stream, fr.has_rowtime, rowtime_col, at,
                       None if stream else fr.origin)


def _within(order, source: Source) -> int:
    w = order.args["within"]
    e = translate(w, Ctx(None, source, "WITHIN", constant_message="WITHIN needs a constant interval"))
    if e.type.name != "INTERVAL" or not is_constant(e):
        raise source.error("WITHIN needs a constant interval, as in WITHIN INTERVAL '1' MINUTE", w)
    iv = constant_value(e)
    if not iv.is_fixed or iv.millis < 0:
        raise source.error("WITHIN needs a non-negative day-time interval", w)
    return iv.millis


def _plan_distinct(sel, env: Env, fr: FromResult, node: Node, items, select_kw) -> QueryResult:
    source, scope, stream = env.source, fr.scope, fr.is_stream
    ctx = Ctx(scope, source, "SELECT")
    keys, fields, at = [], [], []
    rowtime_col = None
    for it in items:
        if it.ast is not None and it.ast.find(N.Over):
            raise source.error("SELECT DISTINCT cannot be combined with OVER", it.ast.find(N.Over))
        if _is_bare_rowtime(it, scope, fr.has_rowtime, fr.single, False):
            rowtime_col = len(fields)
            continue
        if it.alias == ROWTIME and fr.has_rowtime:
            raise source.error("SELECT DISTINCT cannot set ROWTIME with an AS ROWTIME expression", it.at)
        e = it.expr if it.expr is not None else translate(it.ast, ctx)
        keys.append(e)
        fields.append(_column(it, e, source))
        at.append(start_of(it.at))
    mono = [i for i, k in enumerate(keys) if is_increasing(k, node)]
    if stream and not mono:
        raise source.error("Streaming DISTINCT requires at least one monotonic expression in the select list",
                           select_kw if select_kw is not None else sel)
    agg = Aggregate(node, keys, mono[0] if mono else None, [], fields, distinct_rows=stream,
                    is_stream=stream)
    has_rowtime = fr.has_rowtime and (stream or bool(mono))
    root = _maybe_sort(sel.args.get("order"), agg, fields, rowtime_col, has_rowtime, stream, source, None)
    return QueryResult(root, fields, stream, has_rowtime, rowtime_col, at, None if stream else fr.origin)


def _plan_aggregate(sel, env: Env, fr: FromResult, node: Node, items, select_kw) -> QueryResult:
    source, scope, stream = env.source, fr.scope, fr.is_stream
    group, having = sel.args.get("group"), sel.args.get("having")
    if sel.args.get("distinct") is not None:
        raise source.error("SELECT DISTINCT cannot be combined with GROUP BY or aggregates",
                           sel.args["distinct"])
    keys_ast = []
    if group is not None:
        for key in ("grouping_sets", "cube", "rollup", "totals"):
            if group.args.get(key):
                raise source.error("GROUPING SETS, CUBE and ROLLUP are not supported", group)
        if group.args.get("all") is not None:
            raise source.error("GROUP BY ALL is not supported", group)
        keys_ast = group.expressions
    in_ctx = Ctx(scope, source, "GROUP BY")
    gw = group_windows.find(keys_ast, node, scope, source) if stream else None
    if gw is None and not stream and any(group_windows.is_window_call(k) for k in keys_ast):
        raise source.error("Group windows (TUMBLE, HOP, SESSION in GROUP BY) need a stream: use SELECT STREAM",
                           next(k for k in keys_ast if group_windows.is_window_call(k)))
    if gw is not None:          # Calcite's group window: its input windowed, its start and end the first keys
        node, keys = gw.node, gw.keys
    else:
        keys = [translate(k, in_ctx) for k in keys_ast]
    mono = [i for i, k in enumerate(keys) if is_increasing(k, node)]
    if stream and not mono:
        raise source.error("Streaming aggregation requires at least one monotonic expression in GROUP BY clause",
                           group if group is not None else (select_kw if select_kw is not None else sel))
    time_key = mono[0] if mono else None
    has_rowtime = fr.has_rowtime and time_key is not None
    grouping = (group_windows.WindowGrouping(keys, Ctx(scope, source, "SELECT"), gw) if gw is not None
                else Grouping(keys, Ctx(scope, source, "SELECT")))
    actx = Ctx(scope, source, "SELECT", grouping=grouping)

    exprs, fields, at = [], [], []
    rowtime_col = stamp = None
    stamp_expr = rowtime_at = None
    for it in items:
        if it.ast is not None and isinstance(it.ast, N.Over):
            raise source.error("Windowed aggregation (OVER) cannot be combined with GROUP BY "
                               "or aggregates in the same query", it.ast)
        bare = _is_bare_rowtime(it, scope, has_rowtime, fr.single, True)
        if bare or (it.alias == ROWTIME and has_rowtime):
            if rowtime_col is not None:
                raise source.error("ROWTIME appears more than once in the select list", it.at)
            rowtime_col = len(fields)
            if not bare:
                rowtime_at = it.ast
                e = translate(it.ast, actx)
                _check_rowtime_type(e, source, it.ast)
                over_rowtime = remap(e, cols=lambda c: Rowtime(0) if c.index == time_key else c)
                if not _monotonic_rowtime(over_rowtime) and not group_windows.is_window_stamp(e, keys, node):
                    raise source.error(MONOTONIC_ROWTIME, it.ast)
                stamp = stamp_expr = e
            continue
        if it.expr is not None:
            e = grouping.grouped(it.expr, source, it.at)
        else:
            e = translate(it.ast, actx)
        exprs.append(e)
        fields.append(_column(it, e, source))
        at.append(start_of(it.at))
    cond = None
    if having is not None:
        cond = translate(having.this, replace(actx, clause="HAVING"))
        require_boolean(cond, source, "HAVING clause", having.this)

    def fallback(ast: exp.Expr) -> Expr | None:
        saved = list(grouping.aggs)
        try:
            e = translate(ast, actx)
        except SqlError:
            return None
        finally:
            grouping.aggs[:] = saved
        for i, x in enumerate(exprs):
            if same_expr(e, x):
                return Col(i, fields[i].name, fields[i].type)
        if stamp_expr is not None and same_expr(e, stamp_expr):
            return Rowtime(0)
        return None

    agg = Aggregate(node, keys, time_key, list(grouping.aggs), grouping.fields(), stamp=stamp,
                    is_stream=stream)
    if stream:                  # a window's groups: one window aggregation (group_windows.py)
        agg = group_windows.window_aggregate(agg, gw, source, rowtime_at if rowtime_at is not None else sel)
    top: Node = agg
    if cond is not None:
        top = Filter(agg, cond, list(agg.fields), is_stream=stream)
    project = Project(top, exprs, fields, None, is_stream=stream)
    order = sel.args.get("order")
    if order is not None and order.args.get("within") is not None:
        raise source.error("ORDER BY ... WITHIN (T-sort) cannot be used with GROUP BY", order)
    root = _maybe_sort(order, project, fields, rowtime_col, has_rowtime, stream, source, fallback)
    return QueryResult(root, fields, stream, has_rowtime, rowtime_col, at, None if stream else fr.origin)


# --------------------------------------------------------------------------- ORDER BY

def _order_keys(order, fields: list[Field], rowtime_col, has_rowtime: bool, source: Source,
                fallback) -> list[SortKey]:
    """ORDER BY keys over the select list's output: aliases and names, ROWTIME, positions, or
    (``fallback``) an expression equal to a select item."""
    targets: list = [Col(i, f.name, f.type) for i, f in enumerate(fields)]
    if rowtime_col is not None:
        targets.insert(rowtime_col, Rowtime(0))
    rt = Rowtime(0) if has_rowtime else None
    out_scope = Scope([Rel(None, fields, 0, rt, has_rowtime=has_rowtime)], source, rt)
    out_ctx = Ctx(out_scope, source, "ORDER BY")
    keys = []
    for o in order.expressions:
        ast = o.this
        e = None
        if isinstance(ast, exp.Literal) and not ast.is_string and ast.this.isdigit():
            p = int(ast.this)
            if not 1 <= p <= len(targets):
                raise source.error(f"ORDER BY position {p} is not in the select list (1 to {len(targets)})", ast)
            e = targets[p - 1]
        else:
            try:
                e = translate(ast, out_ctx)
            except SqlError as err:
                e = fallback(ast) if fallback is not None else None
                if e is None:
                    if "not found" in err.message:
                        raise source.error(f"ORDER BY expression '{source.snippet(ast)}' must be in the "
                                           "select list", ast) from None
                    raise
        explicit = o.meta.get("explicit_nulls")
        nulls_first = None if explicit is None else explicit == "FIRST"
        keys.append(SortKey(e, bool(o.args.get("desc")), nulls_first))
    return keys


def _maybe_sort(order, root: Node, fields, rowtime_col, has_rowtime, stream: bool, source: Source,
                fallback) -> Node:
    if order is None:
        return root
    if order.args.get("within") is not None:
        raise source.error("ORDER BY ... WITHIN (T-sort) needs a plain SELECT STREAM with an expression "
                           "AS ROWTIME", order)
    keys = _order_keys(order, fields, rowtime_col, has_rowtime, source, fallback)
    if stream and (keys[0].descending or not is_increasing(keys[0].expr, root)):
        raise source.error("Streaming ORDER BY must start with monotonic expression", order)
    return Sort(root, keys, list(root.fields), is_stream=stream)


# --------------------------------------------------------------------------- UNION

def _union_branches(u: exp.Expr) -> list[exp.Expr]:
    if isinstance(u, exp.Union) and not u.args.get("distinct") and not any(
            u.args.get(k) is not None for k in ("order", "limit", "offset", "with_")):
        return _union_branches(u.this) + _union_branches(u.expression)
    return [u]


def _plan_union(u: exp.Union, env: Env, mode: str, overrides) -> QueryResult:
    source = env.source
    distinct = bool(u.args.get("distinct"))
    branches = [u.this, u.expression] if distinct else _union_branches(u.this) + _union_branches(u.expression)
    results = [plan_query(b, env, mode, overrides) for b in branches]
    first = results[0]
    what = "UNION" if distinct else "UNION ALL"
    for b, r in zip(branches[1:], results[1:]):
        if len(r.columns) != len(first.columns):
            raise source.error(f"Column count mismatch in {what}: {len(first.columns)} and {len(r.columns)} "
                               "columns", b)
        if r.rowtime_column != first.rowtime_column:
            raise source.error(f"Every branch of {what} must show ROWTIME at the same position of its "
                               "select list", b)
        if r.is_stream != first.is_stream:
            raise source.error(f"Cannot combine a stream and a relation in {what}", b if not r.is_stream
                               else branches[0])
    stream = first.is_stream
    if stream and distinct:
        raise source.error("UNION on streams must be UNION ALL", _set_keyword(u, source))
    types = []
    for j, f in enumerate(first.columns):
        t = f.type
        for b, r in zip(branches[1:], results[1:]):
            c = common_type(t, r.columns[j].type)
            if c is None:
                raise source.error(f"Column '{f.name}' of {what} has incompatible types {tname(t)} and "
                                   f"{tname(r.columns[j].type)}", b)
            t = c
        types.append(t)
    fields = [Field(f.name, t) for f, t in zip(first.columns, types)]
    inputs = []
    for r in results:
        exprs = [cast(Col(i, c.name, c.type), t) for i, (c, t) in enumerate(zip(r.columns, types))]
        if any(not isinstance(e, Col) for e in exprs):
            inputs.append(Project(r.node, exprs, [Field(c.name, e.type) for c, e in zip(r.columns, exprs)],
                                  is_stream=r.is_stream))
        else:
            inputs.append(r.node)
    has_rowtime = all(r.has_rowtime for r in results)
    node: Node = Union(inputs, fields, is_stream=stream)
    if distinct:
        keys = [Col(i, f.name, f.type) for i, f in enumerate(fields)]
        node = Aggregate(node, keys, None, [], fields, is_stream=False)
        has_rowtime = False
    for key in ("limit", "offset"):
        if u.args.get(key) is not None:
            raise source.error("LIMIT and OFFSET are not supported", u.args[key])
    node = _maybe_sort(u.args.get("order"), node, fields, first.rowtime_column, has_rowtime, stream,
                       source, None)
    origin = None if stream else next((r.origin for r in results if r.origin is not None), None)
    return QueryResult(node, fields, stream, has_rowtime, first.rowtime_column, first.column_at, origin)
