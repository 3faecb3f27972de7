"""Statements: CREATE STREAM / FOREIGN STREAM / TABLE / VIEW / PUMP, DROP, ALTER PUMP,
INSERT ... VALUES and queries, each checked against the catalog and turned into a
:mod:`streamsql.engine.plan` statement."""
from __future__ import annotations

from sqlglot import exp

from .. import time as sqltime
from ..expr import Expr, Lit
from ..plan import (AlterPump, ColumnDef, CreatePump, CreateStream, CreateTable, CreateView, Drop,
                    InsertValues, PumpInfo, SelectStatement, Statement, StreamInfo, TableInfo, ViewInfo)
from ..types import ROWTIME_TYPE, SqlType
from . import nodes as N
from .context import AUTO, Env
from .expressions import Ctx, sql_type, timestamp_literal, tname, translate
from .names import ROWTIME, canonical
from .select import is_streaming, plan_query, plan_statement_query, select_keyword
from .source import Source, start_of

KIND_NAMES = {StreamInfo: "stream", TableInfo: "table", ViewInfo: "view", PumpInfo: "pump"}
QUERY_NODES = (exp.Select, exp.SetOperation, exp.Subquery, exp.Values)


def _kind_of(info) -> str:
    return KIND_NAMES.get(type(info), "object")


def analyze_tree(tree: exp.Expr, env: Env) -> Statement:
    source = env.source
    position = source.position(start_of(tree) if start_of(tree) is not None else 0)
    sql = source.text
    if isinstance(tree, QUERY_NODES):
        query, _ = plan_statement_query(tree, env, sql)
        return SelectStatement(query, sql, position)
    if isinstance(tree, N.CreateStreamStatement):
        return _create_stream(tree, env, sql, position)
    if isinstance(tree, N.CreateViewStatement):
        return _create_view(tree, env, sql, position)
    if isinstance(tree, N.CreatePumpStatement):
        return _create_pump(tree, env, sql, position)
    if isinstance(tree, N.DropStatement):
        return _drop(tree, env, sql, position)
    if isinstance(tree, N.AlterPumpStatement):
        return _alter_pump(tree, env, sql, position)
    if isinstance(tree, exp.Insert):
        return _insert(tree, env, sql, position)
    first = source.tokens[0].text.upper() if source.tokens else ""
    raise source.error(unsupported_message(first), source.tokens[0] if source.tokens else 0)


def unsupported_message(word: str) -> str:
    return (f"Unsupported statement {word}: expected CREATE [OR REPLACE] STREAM, FOREIGN STREAM, TABLE, "
            "VIEW or PUMP, DROP, ALTER PUMP, INSERT INTO ... VALUES or SELECT")


def _check_new_name(name: str, kind: str, replace_: bool, env: Env, at) -> None:
    info = env.catalog.resolve(name)
    if info is None:
        return
    existing = _kind_of(info)    # same wording as the catalog's own check, but positioned
    if not replace_:
        raise env.source.error(f"{existing.title()} '{name}' already exists"
                               + ("" if existing != kind else f"; use CREATE OR REPLACE {kind.upper()}"), at)
    if existing != kind:
        raise env.source.error(f"Cannot replace {existing} '{name}' with a {kind}", at)


# --------------------------------------------------------------------------- CREATE STREAM / TABLE

def _columns(tree: N.CreateStreamStatement, env: Env, kind: str) -> list[ColumnDef]:
    source = env.source
    out: list[ColumnDef] = []
    seen = set()
    for c in tree.args["columns"]:
        name = canonical(c.this)
        if name == ROWTIME:
            raise source.error("ROWTIME is implicit in every stream; it cannot be declared as a column"
                               if kind != "table" else "ROWTIME is reserved; a table cannot have a ROWTIME column",
                               c.this)
        if name in seen:
            raise source.error(f"Duplicate column '{name}'", c.this)
        seen.add(name)
        params = []
        for p in c.args.get("params") or []:
            text = str(getattr(p, "this", p))
            if not text.isdigit() or len(text) > 9:
                raise source.error(f"Type parameter '{text[:20]}' of column '{name}' is not a whole number "
                                   f"(like VARCHAR(10) or DECIMAL(10, 2))", p if isinstance(p, exp.Expr) else c.this)
            params.append(int(text))
        t = sql_type(c.args["type"], params, source, c.meta.get("type_pos"),
                     nullable=not c.args.get("not_null"))
        out.append(ColumnDef(name, t, source.position(start_of(c.this))))
    return out


def _create_stream(tree: N.CreateStreamStatement, env: Env, sql, position) -> Statement:
    kind = tree.args["kind"]
    name = canonical(tree.this)
    replace_ = bool(tree.args.get("replace"))
    what = "table" if kind == "TABLE" else "stream"
    _check_new_name(name, what, replace_, env, tree.this)
    columns = _columns(tree, env, what)
    description = _description(tree)
    if kind == "TABLE":
        return CreateTable(name, columns, replace_, sql, position, description)
    foreign = None
    if kind == "FOREIGN STREAM":
        options = {}
        for opt in tree.args.get("options") or []:
            key = opt.this.this
            if key in options:
                raise env.source.error(f"Option {key} is given twice", opt)
            v = opt.args["value"]
            options[key] = v.this if v.is_string else str(v.this)
        foreign = {"server": canonical(tree.args["server"]), "options": options}
    return CreateStream(name, columns, replace_, foreign, sql, position, description)


def _description(tree) -> str | None:
    """``DESCRIPTION 'text'``: kept with the definition (its SQL text keeps it too)."""
    d = tree.args.get("description")
    return d.this if d is not None else None


# --------------------------------------------------------------------------- CREATE VIEW

def _create_view(tree: N.CreateViewStatement, env: Env, sql, position) -> Statement:
    source = env.source
    name = canonical(tree.this)
    replace_ = bool(tree.args.get("replace"))
    _check_new_name(name, "view", replace_, env, tree.this)
    cols = tree.args.get("columns")
    column_names = [canonical(c) for c in cols] if cols else None
    if column_names and len(set(column_names)) != len(column_names):
        dup = next(c for c in column_names if column_names.count(c) > 1)
        raise source.error(f"Duplicate column '{dup}' in the view's column list", tree)
    body = source.text[tree.meta["body_start"]:tree.meta["body_end"] + 1]
    # validate the body now, positioned in the script; the view is on the expansion stack so
    # that a body reaching the view itself (through other views) is reported as a cycle
    plan_query(tree.args["query"], env.derive(views=env.views + (name,)), AUTO, column_names)
    return CreateView(name, column_names, body, replace_, sql, position, _description(tree))


# --------------------------------------------------------------------------- CREATE PUMP

def _assignable(target: SqlType, source_type: SqlType) -> bool:
    return source_type.name == "NULL" or target.same_kind(source_type)


def _target_stream(tree_target, env: Env) -> StreamInfo | TableInfo:
    name = canonical(tree_target)
    info = env.catalog.resolve(name)
    if info is None:
        raise env.source.error(f"Stream or table '{name}' not found", tree_target)
    if not isinstance(info, (StreamInfo, TableInfo)):
        raise env.source.error(f"Cannot insert into {_kind_of(info)} '{name}'", tree_target)
    return info


def _target_columns(info, names_ast, env: Env, allow_rowtime: bool) -> list[tuple[str, SqlType, exp.Expr | None]]:
    source = env.source
    what = "stream" if isinstance(info, StreamInfo) else "table"
    by_name = {f.name: f.type for f in info.fields}
    if not names_ast:
        return [(f.name, f.type, None) for f in info.fields]
    out, seen = [], set()
    for ident in names_ast:
        name = canonical(ident)
        if name in seen:
            raise source.error(f"Column '{name}' appears twice in the column list", ident)
        seen.add(name)
        if name == ROWTIME and name not in by_name and allow_rowtime and isinstance(info, StreamInfo):
            out.append((ROWTIME, ROWTIME_TYPE, ident))
            continue
        if name not in by_name:
            raise source.error(f"Column '{name}' not found in {what} '{info.name}'", ident)
        out.append((name, by_name[name], ident))
    return out


def _create_pump(tree: N.CreatePumpStatement, env: Env, sql, position) -> Statement:
    source = env.source
    name = canonical(tree.this)
    replace_ = bool(tree.args.get("replace"))
    _check_new_name(name, "pump", replace_, env, tree.this)
    info = _target_stream(tree.args["target"], env)
    if not isinstance(info, StreamInfo):
        raise source.error(f"A pump inserts into a stream; '{info.name}' is a table", tree.args["target"])
    query_ast = tree.args["query"]
    if not is_streaming(query_ast, source):
        at = select_keyword(query_ast, source) if isinstance(query_ast, exp.Select) else query_ast
        raise source.error("A pump runs a streaming query: write INSERT INTO ... SELECT STREAM ...", at)
    body = source.text[tree.meta["body_start"]:tree.meta["body_end"] + 1]
    query, result = plan_statement_query(query_ast, env, body)
    targets = _target_columns(info, tree.args.get("columns"), env, allow_rowtime=True)
    listed = tree.args.get("columns")
    rowtime_at = next((i for i, t in enumerate(targets) if t[0] == ROWTIME), None)
    if rowtime_at is not None and rowtime_at != query.rowtime_column:
        where = ("has none" if query.rowtime_column is None
                 else f"has it at position {query.rowtime_column + 1}")
        raise source.error(f"ROWTIME is at position {rowtime_at + 1} of the target columns but the "
                           f"query's select list {where}", targets[rowtime_at][2])
    columns = [t for t in targets if t[0] != ROWTIME]
    if len(columns) != len(query.columns):
        raise source.error(f"The pump's query has {len(query.columns)} columns but the target '{info.name}' "
                           f"{'column list has' if listed else 'has'} {len(columns)}",
                           select_keyword(query_ast, source) if isinstance(query_ast, exp.Select) else query_ast)
    for (cname, ctype, _), f, at in zip(columns, query.columns, result.column_at):
        if not _assignable(ctype, f.type):
            raise source.error(f"Cannot assign to target column '{cname}' of type {tname(ctype)} from source "
                               f"of type {tname(f.type)}", at)
    return CreatePump(name, info.name, [canonical(c) for c in listed] if listed else None, query,
                      bool(tree.args.get("started", True)), replace_, sql, position, _description(tree))


# --------------------------------------------------------------------------- DROP / ALTER PUMP

def _drop(tree: N.DropStatement, env: Env, sql, position) -> Statement:
    kind = tree.args["kind"]
    name = canonical(tree.this)
    exists = bool(tree.args.get("exists"))
    info = env.catalog.resolve(name)
    if info is None and not exists:
        raise env.source.error(f"{kind.capitalize()} '{name}' not found", tree.this)
    if info is not None and _kind_of(info) != kind.lower():
        raise env.source.error(f"'{name}' is a {_kind_of(info)}, not a {kind.lower()}", tree.this)
    return Drop(kind, name, exists, sql, position)


def _alter_pump(tree: N.AlterPumpStatement, env: Env, sql, position) -> Statement:
    names = []
    for n in tree.expressions:
        if isinstance(n, exp.Column):
            names.append(f"{canonical(n.args['table'])}.*")
            continue
        name = canonical(n)
        if not isinstance(env.catalog.resolve(name), PumpInfo):
            raise env.source.error(f"Pump '{name}' not found", n)
        names.append(name)
    return AlterPump(names, tree.args["action"], sql, position)


# --------------------------------------------------------------------------- INSERT

def _insert(tree: exp.Insert, env: Env, sql, position) -> Statement:
    source = env.source
    target = tree.this
    names_ast = None
    if isinstance(target, exp.Schema):
        names_ast = target.expressions
        target = target.this
    if not isinstance(target, exp.Table) or target.args.get("db") is not None:
        raise source.error("INSERT needs a stream or table name", target)
    values = tree.expression
    if not isinstance(values, exp.Values):
        raise source.error("INSERT ... SELECT runs continuously and needs a pump: "
                           "CREATE PUMP p AS INSERT INTO ... SELECT STREAM ...", tree)
    info = _target_stream(target.this, env)
    targets = _target_columns(info, names_ast, env, allow_rowtime=True)
    if names_ast:
        given = {t[0] for t in targets}
        for f in info.fields:
            if not f.type.nullable and f.name not in given:
                raise source.error(f"Column '{f.name}' is NOT NULL and needs a value", target)
    ctx = Ctx(None, source, "VALUES", constant_message="VALUES may only contain constant expressions")
    rows: list[list[Expr]] = []
    positions = []
    for row in values.expressions:
        vals = row.expressions if isinstance(row, exp.Tuple) else [row]
        if len(vals) != len(targets):
            raise source.error(f"INSERT has {len(targets)} target columns but this row has {len(vals)} values",
                               row)
        out = []
        for (cname, ctype, _), v in zip(targets, vals):
            out.append(_assign(cname, ctype, translate(v, ctx), v, source))
        rows.append(out)
        positions.append(source.position(start_of(row)))
    return InsertValues(info.name, [t[0] for t in targets], rows, sql, position, positions)


def _assign(column: str, target: SqlType, e: Expr, at, source: Source) -> Expr:
    st = e.type
    if st.name == "NULL":
        if not target.nullable:
            raise source.error(f"Cannot assign NULL to target column '{column}' of type {target}", at)
        return e
    if (column == "ROWTIME" and isinstance(e, Lit) and isinstance(e.value, str)
            and (sqltime.is_time_of_day(e.value) or e.value.strip().lower() == "now")):
        return e      # '10:02' or 'now': the workbench dates it by the stream clock when the row goes in
    if target.name == "TIMESTAMP" and isinstance(e, Lit) and isinstance(e.value, str):
        try:
            return timestamp_literal(e.value, source, at)
        except Exception:
            raise source.error(f"Cannot assign to target column '{column}' of type {tname(target)} from "
                               f"source of type {tname(st)}: '{e.value}' is not a timestamp "
                               "('YYYY-MM-DD HH:MM:SS[.fff]')", at) from None
    if not _assignable(target, st):
        raise source.error(f"Cannot assign to target column '{column}' of type {tname(target)} from source "
                           f"of type {tname(st)}", at)
    return e
