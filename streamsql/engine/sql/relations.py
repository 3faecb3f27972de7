"""FROM clauses: named streams, tables, views, WITH items, sub-queries, VALUES and joins.

Each FROM item becomes a plan node plus what a scope needs (alias, fields, whether it is a
stream and has a ROWTIME). Joins nest left-deep; their windows come from ``OVER`` on the items.
A side whose ROWTIME is referenced above the join gets it appended as a hidden column
(``ROWTIME$ALIAS``), because above the join only the join's own rowtime exists.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp
from sqlglot.tokens import TokenType

from ..errors import SqlError
from ..expr import Call, Col, Expr, Rowtime, columns_used, remap, walk
from ..plan import (Field, HistoryScan, Join, JoinWindow, Node, PumpInfo, Project, StreamInfo,
                    StreamScan, TableInfo, TableScan, Values, ViewInfo)
from ..types import BOOLEAN, ROWTIME_TYPE
from . import nodes as N
from .context import RELATIONAL, Env, Origin, QueryResult
from .expressions import Ctx, cast, constant_value, require_boolean, tname, translate, unify
from .names import ROWTIME, NotAName, Rel, Scope, canonical
from .planned import check as check_planned
from .source import Source, start_of
from .temporal import plan_versions, refuse_outside_join, version_of
from .windows import join_window
from . import group_windows
from .window_tvf import WindowTvf, plan_window_table


@dataclass
class Item:
    """A planned FROM item."""
    node: Node
    alias: str | None
    fields: list[Field]
    is_stream: bool
    has_rowtime: bool
    at: exp.Expr
    window: N.WindowRef | None = None
    origin: Origin | None = None
    hidden: frozenset = frozenset()


@dataclass
class FromResult:
    node: Node
    scope: Scope
    is_stream: bool
    has_rowtime: bool
    origin: Origin | None
    single: bool


def item_alias(ast: exp.Expr) -> str | None:
    """The name a FROM item is referred to by: its alias, else a named relation's name."""
    alias = ast.args.get("alias")
    if alias is not None and alias.this is not None and alias.name:
        return canonical(alias.this)
    if isinstance(ast, exp.Table) and isinstance(ast.this, exp.Identifier):
        return canonical(ast.this)
    return None


def _alias_parts(ast: exp.Expr):
    alias = ast.args.get("alias")
    columns = None
    window = None
    if alias is not None:
        cols = alias.args.get("columns")
        if cols:
            columns = [canonical(c) for c in cols]
        window = alias.args.get("window")
    return columns, window


def _rename(fields: list[Field], names: list[str] | None, source: Source, at) -> list[Field]:
    if names is None:
        return fields
    if len(names) != len(fields):
        raise source.error(f"The alias names {len(names)} columns but the relation has {len(fields)}", at)
    return [Field(n, f.type) for n, f in zip(names, fields)]


def _values_origin(ast: exp.Values, source: Source) -> int | None:
    kw = source.keyword(start_of(ast) or 0, TokenType.VALUES)
    return kw.start if kw is not None else start_of(ast)


def plan_values(ast: exp.Values, env: Env, names: list[str] | None = None) -> tuple[Values, int | None]:
    source = env.source
    ctx = Ctx(None, source, "VALUES", constant_message="VALUES may only contain constant expressions")
    rows = [[translate(v, ctx) for v in row.expressions] for row in ast.expressions]
    width = len(rows[0]) if rows else 0
    for row, row_ast in zip(rows, ast.expressions):
        if len(row) != width:
            raise source.error(f"Each row of VALUES must have {width} values, not {len(row)}", row_ast)
    columns = []
    for j in range(width):
        _, t = unify([r[j] for r in rows], source, "VALUES column", ast)
        columns.append(t)
    values = [tuple(constant_value(cast(r[j], columns[j])) for j in range(width)) for r in rows]
    fields = [Field(f"EXPR${j}", t) for j, t in enumerate(columns)]
    fields = _rename(fields, names, source, ast)
    return Values(values, fields), _values_origin(ast, source)


def _view_item(info: ViewInfo, ast: exp.Table, alias: str, env: Env, mode: str) -> QueryResult:
    from .dialect import parse
    from .select import plan_query

    name = info.name
    if name in env.views:
        chain = " -> ".join(env.views[env.views.index(name):] + (name,))
        raise env.source.error(f"View '{name}' is defined in terms of itself ({chain})", ast)
    body = Source(info.body_sql, script=info.body_sql)
    try:
        body_ast = parse(body)
        check_planned(body_ast, body)
        view_env = Env(env.catalog, body, env.reads, {}, env.views + (name,))
        return plan_query(body_ast, view_env, mode, info.column_names)
    except NotAName:
        raise env.source.error(f"Syntax error in the body of view '{name}'", ast) from None
    except SqlError as e:
        if "(in view " in e.message or "is defined in terms of itself" in e.message:
            raise env.source.error(e.message, ast) from None
        raise env.source.error(f"{e.message} (in view '{name}')", ast) from None


def plan_item(ast: exp.Expr, env: Env, mode: str) -> Item:
    from .select import plan_query

    source = env.source
    alias = item_alias(ast)
    names, window = _alias_parts(ast)
    if ast.args.get("joins"):
        raise source.error("Parenthesized or nested joins are not supported; write the joins in sequence", ast)
    if isinstance(ast, exp.Table):
        if ast.args.get("db") is not None or not isinstance(ast.this, exp.Identifier):
            raise source.error("Schema-qualified names are not supported", ast)
        name = canonical(ast.this)
        cte = env.ctes.get(name)
        if cte is not None:
            r = plan_query(cte.query, cte.env, mode, cte.columns)
            return _from_result(r, alias, names, window, ast, source)
        info = env.catalog.resolve(name)
        if isinstance(info, StreamInfo):
            fields = _rename(list(info.fields), names, source, ast)
            env.reads.stream(info.name)
            if mode == RELATIONAL:
                if not info.history:
                    raise source.error(f"Cannot convert stream '{info.name}' to a table", ast)
                return Item(HistoryScan(info.name, fields, alias), alias, fields, False, True, ast, window)
            return Item(StreamScan(info.name, fields, alias), alias, fields, True, True, ast, window)
        if isinstance(info, TableInfo):
            fields = _rename(list(info.fields), names, source, ast)
            env.reads.table(info.name)
            return Item(TableScan(info.name, fields, alias), alias, fields, False, False, ast, window,
                        Origin("table", info.name, start_of(ast)))
        if isinstance(info, ViewInfo):
            r = _view_item(info, ast, alias, env, mode)
            item = _from_result(r, alias, names, window, ast, source)
            if item.origin is not None:
                item.origin = Origin(item.origin.kind, item.origin.name, start_of(ast))
            return item
        if isinstance(info, PumpInfo):
            raise source.error(f"'{name}' is a pump, not a stream or table", ast)
        raise source.error(f"Stream or table '{name}' not found", ast)
    if isinstance(ast, exp.Subquery):
        r = plan_query(ast.this, env, mode)
        return _from_result(r, alias, names, window, ast, source)
    if isinstance(ast, WindowTvf):
        if window is not None:
            raise source.error("A window table function takes no OVER: its rows are windowed already", window)
        node = plan_window_table(ast, env, mode, plan_item)
        fields = _rename(list(node.fields), names, source, ast)
        if names is not None:
            node = _renamed(node, fields)
        return Item(node, alias, fields, True, True, ast)
    if isinstance(ast, exp.Values):
        node, at = plan_values(ast, env, names)
        # a relation; a streaming query that needs a stream reports "Cannot stream VALUES" at ``at``
        return Item(node, alias, node.fields, False, False, ast, window, Origin("values", "", at))
    raise source.error(f"Unsupported FROM item '{source.snippet(ast)}'", ast)


def _from_result(r: QueryResult, alias, names, window, ast, source) -> Item:
    fields = _rename(list(r.columns), names, source, ast)
    node = r.node
    if names is not None:
        node = _renamed(node, fields)
    return Item(node, alias, fields, r.is_stream, r.has_rowtime, ast, window, r.origin)


def _renamed(node: Node, fields: list[Field]) -> Node:
    exprs = [Col(i, f.name, f.type) for i, f in enumerate(node.fields)]
    return Project(node, exprs, fields, is_stream=node.is_stream)


def _with_rowtime_column(item: Item) -> tuple[Node, list[Field], int]:
    """``item``'s node with its rowtime appended as a hidden column."""
    exprs: list[Expr] = [Col(i, f.name, f.type) for i, f in enumerate(item.fields)]
    exprs.append(Rowtime(0))
    fields = item.fields + [Field(f"ROWTIME${item.alias}", ROWTIME_TYPE)]
    return Project(item.node, exprs, fields, is_stream=item.is_stream), fields, len(item.fields)


def join_kind(j: exp.Join, source: Source) -> str:
    if j.args.get("method") or j.args.get("using"):
        raise source.error("Only JOIN ... ON is supported (no NATURAL or USING)", j)
    side = (j.args.get("side") or "").upper()
    kind = (j.args.get("kind") or "").upper()
    if kind in ("SEMI", "ANTI", "ARRAY", "STRAIGHT_JOIN", "ASOF", "POSITIONAL"):
        raise source.error(f"{kind} JOIN is not supported", j)
    if side in ("LEFT", "RIGHT", "FULL"):
        return side
    if kind == "OUTER":
        return "FULL"          # seed 002 writes OUTER JOIN for a full outer join
    return "INNER"


def _side(e: Expr, n_left: int) -> str:
    cols = columns_used(e)
    inputs = {x.input for x in walk(e) if isinstance(x, Rowtime)}
    left = any(c < n_left for c in cols) or 0 in inputs
    right = any(c >= n_left for c in cols) or 1 in inputs
    if left and right:
        return "both"
    return "left" if left else "right" if right else "none"


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Call) and e.fn == "AND":
        return [c for a in e.args for c in _conjuncts(a)]
    return [e]


def split_condition(cond: Expr, n_left: int) -> tuple[list[tuple[Expr, Expr]], Expr | None]:
    """Equi pairs (left expr over the left tuple, right expr over the right tuple) and the rest."""
    def to_right(x: Expr) -> Expr:
        return remap(x, cols=lambda c: Col(c.index - n_left, c.name, c.type),
                     rowtime=lambda r: Rowtime(0))

    equi, rest = [], []
    for c in _conjuncts(cond):
        if isinstance(c, Call) and c.fn == "=":
            a, b = c.args
            sa, sb = _side(a, n_left), _side(b, n_left)
            if (sa, sb) == ("left", "right"):
                equi.append((a, to_right(b)))
                continue
            if (sa, sb) == ("right", "left"):
                equi.append((b, to_right(a)))
                continue
        rest.append(c)
    if not rest:
        return equi, None
    if len(rest) == 1:
        return equi, rest[0]
    return equi, Call("AND", tuple(rest), BOOLEAN.with_nullable(any(r.type.nullable for r in rest)))


def _join_at(j: exp.Join, item_ast: exp.Expr, source: Source):
    tok = source.keyword(start_of(j) or 0, TokenType.JOIN, stop=start_of(item_ast))
    return tok if tok is not None else j


def plan_from(select: exp.Select, env: Env, mode: str, named: dict, needed: set[str]) -> FromResult:
    """Plan the FROM clause of ``select``. ``needed``: aliases whose ROWTIME is used above a join."""
    source = env.source
    from_ = select.args.get("from_")
    joins = select.args.get("joins") or []
    for j in joins:
        if not isinstance(j, exp.Join):
            raise source.error("Unsupported FROM clause", j)
    asts = [from_.this] + [j.this for j in joins]
    items = [plan_item(a, env, mode) for a in asts]
    seen = {}
    for it in items:
        if it.alias is not None:
            if it.alias in seen:
                raise source.error(f"Duplicate relation name '{it.alias}' in FROM; use AS to rename one", it.at)
            seen[it.alias] = it

    ctx_plain = Ctx(None, source, "OVER")
    refuse_outside_join(items[0].at, source)
    if not joins:
        it = items[0]
        if it.window is not None:
            raise source.error("A window on a FROM item (OVER after its name) is only allowed in a join",
                               it.window)
        rt = Rowtime(0) if it.has_rowtime else None
        rel = Rel(it.alias, it.fields, 0, rt, has_rowtime=it.has_rowtime)
        return FromResult(it.node, Scope([rel], source, rt), it.is_stream, it.has_rowtime,
                          None if it.is_stream else it.origin, True)

    def prepare(it: Item) -> tuple[Node, Rel]:
        if it.alias in needed and it.has_rowtime:
            node, fields, h = _with_rowtime_column(it)
            return node, Rel(it.alias, fields, 0, None, frozenset({h}), it.has_rowtime)
        return it.node, Rel(it.alias, it.fields, 0, None, frozenset(), it.has_rowtime)

    def hidden_rowtime(rel: Rel) -> Expr | None:
        for h in rel.hidden:
            return Col(rel.offset + h, rel.fields[h].name, rel.fields[h].type)
        return None

    left_node, first = prepare(items[0])
    left_rels = [replace(first, gives_rowtime=items[0].has_rowtime)]
    left_stream, left_rowtime = items[0].is_stream, items[0].has_rowtime
    origin = None if items[0].is_stream else items[0].origin
    for index, (j, it) in enumerate(zip(joins, items[1:])):
        kind = join_kind(j, source)
        right_node, right = prepare(it)
        n_left = len(left_node.fields)
        right = replace(right, offset=n_left)
        leaf = index == 0
        on_rels = [replace(r, rowtime=(Rowtime(0) if leaf and r.has_rowtime else hidden_rowtime(r)))
                   for r in left_rels]
        on_rels.append(replace(right, rowtime=Rowtime(1) if right.has_rowtime else None))
        candidates = ([Rowtime(0)] if left_rowtime else []) + ([Rowtime(1)] if it.has_rowtime else [])
        on_scope = Scope(on_rels, source, candidates[0] if len(candidates) == 1 else None,
                         ambiguous_rowtime=len(candidates) > 1)

        # windows
        left_window = items[0].window if leaf else None
        right_window = it.window
        at_join = _join_at(j, it.at, source)
        lw = rw = None
        versions = None
        version = version_of(it.at)
        if version is not None:
            versions = plan_versions(version, kind, it, left_rowtime, left_rels, on_scope, source,
                                     [left_window, right_window])
        elif left_stream and it.is_stream:
            lw = join_window(left_window, named, ctx_plain) if left_window is not None else None
            rw = join_window(right_window, named, ctx_plain) if right_window is not None else None
            if lw is None and rw is None:
                # two window table functions (or window aggregations): rows of the same window meet
                windowed = group_windows.window_output(left_node) and group_windows.window_output(right_node)
                if not windowed:
                    raise source.error(
                        "A join of two streams needs a window (OVER (RANGE INTERVAL ... PRECEDING or "
                        "FOLLOWING)) on at least one side, or two window table functions joined on their "
                        "windows; without one it would need unbounded memory", at_join)
            lw = lw or JoinWindow(0, 0)
            rw = rw or JoinWindow(0, 0)
        elif (left_window is not None or right_window is not None) and not left_stream and not it.is_stream \
                and left_rowtime and it.has_rowtime:
            # the same window join over two relations with a rowtime (streams' histories): the
            # pairs whose windows overlap, stamped as the streaming join stamps them
            lw = join_window(left_window, named, ctx_plain) if left_window is not None else JoinWindow(0, 0)
            rw = join_window(right_window, named, ctx_plain) if right_window is not None else JoinWindow(0, 0)
        else:
            for w, stream_side in ((left_window, left_stream), (right_window, it.is_stream)):
                if w is None:
                    continue
                if stream_side:
                    raise source.error("A stream-table join looks up each stream row in the table; "
                                       "it takes no window (OVER)", w)
                raise source.error("A window (OVER) is only allowed on a stream joined with a stream", w)
            if left_stream != it.is_stream:
                preserved_table = (kind in ("RIGHT", "FULL") and not it.is_stream) or \
                                  (kind in ("LEFT", "FULL") and not left_stream)
                if preserved_table:
                    raise source.error(
                        "A stream-table join can only preserve the stream side (use an inner join, "
                        "or an outer join that keeps the stream's rows)", at_join)

        equi, residual = [], None
        windowed = left_stream and it.is_stream and lw == rw == JoinWindow(0, 0) and left_window is None \
            and right_window is None
        on = j.args.get("on")
        if on is not None:
            cond = translate(on, Ctx(on_scope, source, "ON"))
            require_boolean(cond, source, "ON clause", on)
            equi, residual = split_condition(cond, n_left)
            for a, b in equi:
                if not a.type.same_kind(b.type):
                    raise source.error(f"Cannot apply '=' to arguments of type {tname(a.type)} and "
                                       f"{tname(b.type)}", on)
        if windowed:
            group_windows.check_window_join(equi, left_node, right_node, source, on if on is not None else at_join)
        is_stream = left_stream or it.is_stream
        fields = list(left_node.fields) + list(right_node.fields)
        left_node = Join(left_node, right_node, kind, lw, rw, equi, residual, fields, is_stream=is_stream,
                         versions=versions)
        # whose ROWTIME the joined rows carry: the one side that has one (a stream-table join),
        # the left rows' in a temporal join
        if left_rowtime and it.has_rowtime and versions is None:
            left_rels = [replace(r, gives_rowtime=False) for r in left_rels]
        right = replace(right, gives_rowtime=it.has_rowtime and not left_rowtime)
        left_rels.append(right)
        if origin is None and not is_stream:
            origin = it.origin
        if is_stream:
            origin = None
        left_stream = is_stream
        left_rowtime = left_rowtime or it.has_rowtime

    above = [replace(r, rowtime=hidden_rowtime(r)) for r in left_rels]
    scope = Scope(above, source, Rowtime(0) if left_rowtime else None)
    return FromResult(left_node, scope, left_stream, left_rowtime, origin, False)


def rowtime_references(select: exp.Select) -> set[str]:
    """Aliases ``X`` for which ``X.ROWTIME`` is used above the joins of ``select`` (select list,
    WHERE, GROUP BY, HAVING, ORDER BY, windows, and ON clauses of later joins)."""
    found: set[str] = set()

    def scan(node, allowed: set[str] | None = None):
        stack = [node]
        while stack:
            n = stack.pop()
            if n is None:
                continue
            if isinstance(n, (exp.Subquery, exp.Select)) and n is not node:
                continue
            if isinstance(n, exp.Column) and n.args.get("table") is not None \
                    and isinstance(n.this, exp.Identifier) and canonical(n.this) == ROWTIME:
                a = canonical(n.args["table"])
                if allowed is None or a in allowed:
                    found.add(a)
            stack.extend(n.iter_expressions())

    for key in ("expressions", "where", "group", "having", "order", "windows"):
        value = select.args.get(key)
        for v in (value if isinstance(value, list) else [value]):
            if v is not None:
                scan(v)
    from_ = select.args.get("from_")
    joins = select.args.get("joins") or []
    if from_ is not None:
        aliases = [item_alias(from_.this)]
        for i, j in enumerate(joins):
            if i >= 1 and j.args.get("on") is not None:
                scan(j.args["on"], {a for a in aliases if a})
            aliases.append(item_alias(j.this))
    return found
