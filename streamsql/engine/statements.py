"""Running SQL statements on a workbench (``Workbench.execute``): one function per kind of
statement, each changing the catalog, the pumps or the queries through the workbench.

A script runs statement by statement: the ones before a failing statement stay done, the failing
one changes nothing (a catalog write that fails, a full disk, sends the workbench back to its last
commit: :meth:`~streamsql.engine.commits.Commits.undo`), and every error carries its position in
the script, also the errors the catalog raises, which know no SQL.
"""
from __future__ import annotations

from .catalog import Event
from .continuous_query import Result
from .errors import BadNameError, EventError, LateRowError, SqlError
from .expr import CalcError, compile_expr
from .foreign import check_options, stamp_rowtime_columns
from .paths import check_path_name, check_sql_name
from .values import ValueRefused, coerce
from .plan import (AlterPump, CreatePump, CreateStream, CreateTable, CreateView, Drop, Field,
                   InsertValues, SelectStatement, Statement)


def execute(wb, sql: str, name: str | None = None, replace: bool = False) -> list[Result]:
    """``Workbench.execute``: the statements of ``sql`` in order; ``name`` names the first
    continuous query (``replace``: a running one of that name is stopped first)."""
    from .sql import split_script
    if name is not None:
        check_path_name(name, "query")   # before anything runs: a bad name changes nothing
    results = []
    for st in split_script(sql):
        results.append(_execute_one(wb, st, sql, name, replace))
        if results[-1].query is not None:
            name = None
    return results


def _execute_one(wb, st, sql: str, name: str | None, replace: bool) -> Result:
    """Statement ``st`` of script ``sql``, analyzed and run; any error is a SqlError at its
    place in the script."""
    from .sql import analyze
    try:
        stmt = analyze(st, wb.catalog, script=sql)
    except RecursionError:
        raise SqlError("Statement nested too deeply to analyze (simplify its expressions or "
                       "sub-queries)", st.line, st.col, sql) from None
    try:
        _check_names(stmt)
        return run(wb, stmt, name, replace)
    except (SqlError, BadNameError) as e:
        if isinstance(e, SqlError) and e.line is not None and e.sql is not None:
            raise
        # an error the catalog raised: at the statement (or where the error says)
        line, col = ((e.line, e.col) if isinstance(e, SqlError) and e.line is not None
                     else (stmt.at or (st.line, st.col)))
        raise SqlError(getattr(e, "message", str(e)), line, col, sql) from None
    except RecursionError:
        raise SqlError("Statement nested too deeply to run (simplify its expressions or "
                       "sub-queries)", st.line, st.col, sql) from None


def run(wb, stmt: Statement, name: str | None, replace: bool = False) -> Result:
    """One analyzed statement; a catalog write that fails (disk full) is undone: back to the
    last commit."""
    committed = wb.catalog.next_step - 1
    try:
        return _run_statement(wb, stmt, name, replace)
    except OSError as e:
        with wb.lock:
            wb.commits.undo(committed, e, f"the statement {' '.join(stmt.sql.split()[:3])} ...",
                            events=False, pumps=isinstance(stmt, (CreatePump, AlterPump, Drop)))


def _run_statement(wb, stmt: Statement, name: str | None, replace: bool) -> Result:
    if wb.read_only and not (isinstance(stmt, SelectStatement) and not stmt.query.is_stream):
        words = " ".join((stmt.sql or type(stmt).__name__).split()[:2]).upper()
        wb.check_writable(f"{words} (only relational SELECTs run on a read-only workbench)")
    with wb.lock:
        for kind, runner in _RUNNERS:
            if isinstance(stmt, kind):
                return runner(wb, stmt, name, replace)
        raise SqlError(f"unsupported statement {type(stmt).__name__}", *stmt.at)


# ------------------------------------------------------------------ one function per statement

def _create_stream(wb, stmt: CreateStream, _name, _replace) -> Result:
    if stmt.foreign is not None:
        try:
            check_options(stmt.name, stmt.foreign)
        except SqlError as e:
            raise SqlError(e.message, *stmt.at) from None
    fields = [Field(col.name, col.type) for col in stmt.columns]
    wb.catalog.create_stream(stmt.name, fields, or_replace=stmt.or_replace, sql=stmt.sql,
                             in_use=wb.lifecycle.in_use(stmt.name),
                             foreign=dict(stmt.foreign) if stmt.foreign is not None else None)
    wb.save_catalog()
    return Result(stmt, f"Stream {stmt.name} created")


def _create_table(wb, stmt: CreateTable, _name, _replace) -> Result:
    wb.catalog.create_table(stmt.name, [Field(col.name, col.type) for col in stmt.columns],
                            or_replace=stmt.or_replace, sql=stmt.sql, in_use=wb.lifecycle.in_use(stmt.name))
    wb.save_catalog()
    return Result(stmt, f"Table {stmt.name} created")


def _create_view(wb, stmt: CreateView, _name, _replace) -> Result:
    from .sql import analyze
    c = wb.catalog
    try:   # a streaming body may stamp a foreign stream with a column (col AS ROWTIME)
        promoted = analyze(stmt.body_sql, c).query.promoted
    except SqlError:   # a relational body over streams: valid (the analyzer checked it)
        promoted = {}
    if stamp_rowtime_columns(c, promoted, stmt.at):
        wb.save_catalog()
    c.create_view(stmt.name, stmt.column_names, stmt.body_sql, or_replace=stmt.or_replace, sql=stmt.sql)
    wb.save_catalog()
    return Result(stmt, f"View {stmt.name} created")


def _drop(wb, stmt: Drop, _name, _replace) -> Result:
    c = wb.catalog
    if stmt.kind == "PUMP" and stmt.name in c.pumps:
        wb.pumps.stop([stmt.name])
    if stmt.kind == "STREAM":
        feeding = [n for n, p in c.pumps.items() if p["target"] == stmt.name or stmt.name in p["sources"]]
        if feeding:
            raise SqlError(f"Stream '{stmt.name}' is used by pump{'s' if len(feeding) > 1 else ''} "
                           f"{', '.join(feeding)}; drop {'them' if len(feeding) > 1 else 'it'} first",
                           *stmt.at)
    d = c.drop(stmt.kind, stmt.name, if_exists=stmt.if_exists, in_use=wb.lifecycle.in_use(stmt.name))
    wb.save_catalog()      # first: a failed commit must not have lost the stream's log
    if d is not None and stmt.kind == "STREAM":
        wb.log.drop_stream(d.uid)
    return Result(stmt, f"{stmt.kind.title()} {stmt.name} dropped")


def _insert_values(wb, stmt: InsertValues, _name, _replace) -> Result:
    """Rows into a table (reference data), or events of the stream's default producer (one
    append; the first late or refused row is the statement's error)."""
    c = wb.catalog
    if stmt.target in c.tables:
        t = c.tables[stmt.target]
        rows = [_table_row(stmt, i, t, _row_values(stmt, i, vals)) for i, vals in enumerate(stmt.rows)]
        c.insert_table_rows(stmt.target, rows)
        wb.save_catalog()
        return Result(stmt, f"{len(rows)} row{'s' if len(rows) != 1 else ''} inserted into {stmt.target}")
    events = []
    for i, vals in enumerate(stmt.rows):
        by = _row_values(stmt, i, vals)
        rt = by.pop("ROWTIME", None)       # none: the stream clock; 'HH:MM' or 'now': see rowtime_of
        events.append(Event(stmt.target, "row", rt if isinstance(rt, int) else wb.rowtime_of(stmt.target, rt), by))
    outcomes = wb.inject(events)
    bad = [o for o in outcomes if o.status in ("late", "error")]
    ok = len(outcomes) - len(bad)
    if bad:
        o = bad[0]
        raise (LateRowError(o.event.stream, o.event.rowtime, o.clock) if o.status == "late"
               else EventError(o.message))
    return Result(stmt, f"{ok} row{'s' if ok != 1 else ''} inserted into {stmt.target}")


def _select(wb, stmt: SelectStatement, name: str | None, replace: bool) -> Result:
    """A SELECT STREAM starts a continuous query; a relational SELECT answers at once."""
    if not stmt.query.is_stream:
        return _relational(wb, stmt)
    replaced = replace and name in wb.queries and wb.queries[name].running
    q = wb.lifecycle.start(stmt.query, name, replace=replace)
    return Result(stmt, f"Query {q.name} replaced: the one running before was stopped" if replaced
                  else f"Query {q.name} started", query=q)


def _relational(wb, stmt: SelectStatement) -> Result:
    """A relational SELECT: evaluated at once over tables, VALUES and history. A
    calculator error in it (the semantics, section 1) fails the statement with the error's message: it
    answers once, so there is no running query to keep going and no step to put the error at."""
    from .relational import relation_result
    try:
        rows = wb.runtime.relational(stmt.query.root)
    except CalcError as err:
        raise SqlError(f"The query cannot be computed: {err.describe()}") from None
    return relation_result(stmt, rows)


def _create_pump(wb, stmt: CreatePump, _name, _replace) -> Result:
    return Result(stmt, wb.pumps.create(stmt))


def _alter_pump(wb, stmt: AlterPump, _name, _replace) -> Result:
    done = (wb.pumps.start if stmt.action == "START" else wb.pumps.stop)(stmt.names)
    verb = "started" if stmt.action == "START" else "stopped"
    return Result(stmt, f"Pump{'s' if len(done) != 1 else ''} {', '.join(done) or '(none)'} {verb}"
                  if done else f"No pump to {stmt.action.lower()}")


#: in the order the statement kinds are tried
_RUNNERS = [(CreateStream, _create_stream), (CreateTable, _create_table), (CreateView, _create_view),
            (Drop, _drop), (InsertValues, _insert_values), (SelectStatement, _select),
            (CreatePump, _create_pump), (AlterPump, _alter_pump)]


# ------------------------------------------------------------------ helpers

def _row_values(stmt: InsertValues, i: int, vals) -> dict:
    """Row ``i`` of an INSERT's VALUES by column; a calculator error in it is the statement's."""
    try:
        return {col: compile_expr(e)((), ()) for col, e in zip(stmt.columns, vals)}
    except CalcError as err:
        p = stmt.row_positions[i] if i < len(stmt.row_positions) else stmt.position
        msg = err.describe()
        raise SqlError(msg[:1].upper() + msg[1:], *((p.line, p.col) if p else ())) from None


def _table_row(stmt: InsertValues, i: int, t, by: dict) -> tuple:
    """Row ``i`` of an INSERT into table ``t``, each value stored as its column's type (as a
    stream's values are: engine/values.py), or refused naming the column, at the row."""
    try:
        return tuple(coerce(by.get(f.name), f.type, where=f"column {f.name} of table {t.name}") for f in t.fields)
    except ValueRefused as e:
        p = stmt.row_positions[i] if i < len(stmt.row_positions) else stmt.position
        raise SqlError(str(e), *((p.line, p.col) if p else ())) from None


def _check_names(stmt: Statement) -> None:
    """Names a statement creates: what a quoted SQL identifier can hold (never empty, at most
    128 characters, no control characters); errors at the name's position."""
    kinds = {CreateStream: "stream", CreateTable: "table", CreateView: "view", CreatePump: "pump"}
    what = kinds.get(type(stmt))
    if what is None:
        return
    try:
        check_sql_name(stmt.name, what)
    except BadNameError as e:
        raise SqlError(str(e), *stmt.at) from None
    cols = [(c.name, c.position) for c in getattr(stmt, "columns", None) or [] if hasattr(c, "name")]
    cols += [(c, None) for c in (getattr(stmt, "column_names", None) or [])]
    for c, p in cols:
        try:
            check_sql_name(c, "column")
        except BadNameError as e:
            raise SqlError(str(e), *((p.line, p.col) if p else stmt.at)) from None

