"""``JOIN t FOR SYSTEM_TIME AS OF s.ROWTIME``: planning a temporal join (the semantics, section
3.5.1). sqlglot parses the clause onto the joined table (``exp.Version``); this module checks it
and says how the right side is read as versions (:class:`~streamsql.engine.plan.Versions`)."""
from __future__ import annotations

from sqlglot import exp

from ..expr import Col, Rowtime
from ..plan import HistoryScan, TableScan, Versions
from .expressions import Ctx, translate
from .names import ROWTIME, column_parts
from .source import Source

FORM = "JOIN t FOR SYSTEM_TIME AS OF s.ROWTIME"


def version_of(ast: exp.Expr) -> exp.Version | None:
    """The ``FOR SYSTEM_TIME ...`` clause written on a FROM item, if any."""
    v = ast.args.get("version") if isinstance(ast, exp.Table) else None
    return v if isinstance(v, exp.Version) else None


def refuse_outside_join(ast: exp.Expr, source: Source) -> None:
    """A FROM item that is not the right side of a join cannot be read as versions."""
    v = version_of(ast)
    if v is not None:
        raise source.error(f"FOR SYSTEM_TIME AS OF belongs to the table a row joins: {FORM}", v)


def plan_versions(v: exp.Version, kind: str, item, left_rowtime: bool, left_rels, on_scope, source: Source,
                  window_asts) -> Versions:
    """The versions of ``item`` (a planned FROM item, the join's right side) for clause ``v``."""
    phrase = "FOR SYSTEM_TIME" if v.this == "TIMESTAMP" else f"FOR {v.this}"
    if v.this != "TIMESTAMP" or v.args.get("kind") != "AS OF":
        raise source.error(f"{phrase} {v.args.get('kind')} is not supported; a temporal join is written {FORM}", v)
    if kind not in ("INNER", "LEFT"):
        raise source.error(f"A temporal join (FOR SYSTEM_TIME AS OF) keeps the rows on its left: {kind} JOIN is "
                           "not supported, use JOIN or LEFT JOIN", v)
    for w in window_asts:
        if w is not None:
            raise source.error("A temporal join (FOR SYSTEM_TIME AS OF) takes no window (OVER)", w)
    at = v.expression
    if not left_rowtime:
        raise source.error("FOR SYSTEM_TIME AS OF needs rows with a ROWTIME on the left of the join", at)
    if not _left_rowtime(at, left_rels, on_scope, source):
        raise source.error(f"FOR SYSTEM_TIME AS OF takes the ROWTIME of the rows on the left ({FORM}), not "
                           f"'{source.snippet(at)}'", at)
    node = item.node
    if item.is_stream or isinstance(node, HistoryScan):
        return Versions(Rowtime(0))
    if not isinstance(node, TableScan):
        raise source.error("FOR SYSTEM_TIME AS OF reads a table or a stream, not a sub-query, view or VALUES",
                           item.at)
    times = [Col(i, f.name, f.type) for i, f in enumerate(node.fields) if f.type.name == "TIMESTAMP"]
    if len(times) == 1:
        return Versions(times[0])
    if len(times) == 2:
        return Versions(times[0], times[1])
    had = f"has {len(times)} ({', '.join(c.name for c in times)})" if times else "has none"
    raise source.error(f"FOR SYSTEM_TIME AS OF needs a versioned table: one TIMESTAMP column (when each version "
                       f"starts) or two (when it starts and when it ends); table '{node.table}' {had}", item.at)


def _left_rowtime(at: exp.Expr, left_rels, on_scope, source: Source) -> bool:
    """Whether ``at`` is the ROWTIME of the left rows: the left input's own, or a relation's
    whose ROWTIME the left rows carry (the stream of a stream-table join before it)."""
    if isinstance(at, exp.Paren):
        return _left_rowtime(at.this, left_rels, on_scope, source)
    if isinstance(at, exp.Column) and isinstance(at.this, exp.Identifier) and at.args.get("table") is not None:
        q, name = column_parts(at)
        rel = next((r for r in left_rels if r.alias == q), None)
        if name == ROWTIME and rel is not None and rel.gives_rowtime and \
                not any(f.name == ROWTIME for _i, f in rel.visible()):
            return True
    e = translate(at, Ctx(on_scope, source, "FOR SYSTEM_TIME AS OF"))
    return isinstance(e, Rowtime) and e.input == 0
