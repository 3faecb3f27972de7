"""The logical plan: what the analyzer produces and both runtimes execute.

Nodes are plain dataclasses over typed expressions (:mod:`streamsql.engine.expr`). A node's
output row is a tuple in the order of ``fields``; every streaming node also carries an implicit
ROWTIME that is not in ``fields``. Expressions inside a node refer to the node's *input* row
(``Col(i)`` is position ``i`` of the input tuple, ``Rowtime(0)`` its rowtime); a join's
expressions see the left tuple followed by the right tuple, ``Rowtime(0)``/``Rowtime(1)`` being
the left/right rowtimes.

Statements (DDL, INSERT, queries) are also here, so the catalog and the runtimes never look at
SQL text or the parser's trees.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .expr import Call, Col, Expr, Lit, Rowtime
from .types import SqlType


@dataclass(frozen=True)
class Field:
    name: str          # canonical: unquoted identifiers upper-cased, quoted ones exact
    type: SqlType


@dataclass(frozen=True)
class Position:
    """Where something is in the statement text (1-based line and column)."""
    line: int
    col: int

    def __str__(self):
        return f"line {self.line}, column {self.col}"


class Node:
    fields: list[Field]
    is_stream: bool = True

    def inputs(self) -> list["Node"]:
        return []


# --------------------------------------------------------------------------- leaves

@dataclass(eq=False)
class StreamScan(Node):
    """Rows of a named stream (``stream`` is its canonical name) as they leave the stream."""
    stream: str
    fields: list[Field]
    alias: str | None = None
    is_stream: bool = True


@dataclass(eq=False)
class TableScan(Node):
    """A table's rows (relational); in a streaming query only as the table side of a join."""
    table: str
    fields: list[Field]
    alias: str | None = None
    is_stream: bool = False


@dataclass(eq=False)
class HistoryScan(Node):
    """A stream's retained history read as a relation (relational SELECT over a stream)."""
    stream: str
    fields: list[Field]
    alias: str | None = None
    is_stream: bool = False


@dataclass(eq=False)
class Values(Node):
    rows: list[tuple]
    fields: list[Field]
    is_stream: bool = False


# --------------------------------------------------------------------------- row by row

@dataclass(eq=False)
class Project(Node):
    """``exprs`` compute the output tuple. ``rowtime`` (an expression of ``Rowtime(0)`` only,
    monotonic, checked by the analyzer) replaces the rowtime; None keeps it. Bounds are mapped
    by the same expression."""
    input: Node
    exprs: list[Expr]
    fields: list[Field]
    rowtime: Expr | None = None
    is_stream: bool = True
    #: where the ROWTIME item stands in the select list (before ``exprs[rowtime_at]``): items
    #: are evaluated left to right, so the first failing one is the one reported
    rowtime_at: int = 0
    #: moved below a UNION ALL by ``runtime.plans.normalize``: a row it fails on still goes
    #: through the merge, and fails where the merge releases it (the semantics, section 5)
    defer_errors: bool = False

    def inputs(self):
        return [self.input]


@dataclass(eq=False)
class Filter(Node):
    input: Node
    cond: Expr
    fields: list[Field]
    is_stream: bool = True
    defer_errors: bool = False      # as Project.defer_errors

    def inputs(self):
        return [self.input]


@dataclass(eq=False)
class Union(Node):
    """UNION ALL of streams: ordered merge; ties go to inputs in query order, then arrival."""
    inputs_: list[Node]
    fields: list[Field]
    is_stream: bool = True

    def inputs(self):
        return list(self.inputs_)


# --------------------------------------------------------------------------- aggregation

AGG_FUNCTIONS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "FIRST_VALUE", "LAST_VALUE")


@dataclass(eq=False)
class AggCall:
    fn: str                  # one of AGG_FUNCTIONS
    arg: Expr | None         # None for COUNT(*)
    type: SqlType            # result type (SQL typing: AVG of integers is an integer)
    distinct: bool = False


@dataclass(eq=False)
class Aggregate(Node):
    """Streaming GROUP BY. Output tuple: key values (in ``keys`` order) then aggregate values.
    ``time_key`` indexes the monotonic key (a non-decreasing function of ``Rowtime(0)``; its
    period ends at the earliest rowtime where it takes its next value). ``stamp``, when given, is
    an expression over the *output* tuple that replaces the default stamp (the period's end).
    ``distinct_rows`` marks SELECT STREAM DISTINCT: emit at once, stamped with the row's rowtime,
    the first time a key combination appears within the current value of ``time_key``."""
    input: Node
    keys: list[Expr]
    time_key: int | None          # None in a relational GROUP BY (no time key needed)
    aggs: list[AggCall]
    fields: list[Field]
    stamp: Expr | None = None
    distinct_rows: bool = False
    is_stream: bool = True

    def inputs(self):
        return [self.input]


@dataclass(eq=False)
class WindowSpec:
    """One OVER window. ``mode`` is RANGE (times in ms) or ROWS (row counts). The frame is
    ``[current - lower, current - upper]``: ``lower`` None means UNBOUNDED PRECEDING, ``upper``
    0 means CURRENT ROW (peers that arrived earlier are in, later ones are not). ``order_by``
    None means ROWTIME; a FLOOR/CEIL/STEP of ROWTIME makes a hopping window (frame computed on
    that key). ``partition_by`` expressions may include a monotonic one (cascading window)."""
    partition_by: list[Expr]
    mode: str = "RANGE"
    lower: int | None = None
    upper: int = 0
    order_by: Expr | None = None


@dataclass(eq=False)
class WindowCall:
    agg: AggCall
    spec: WindowSpec


@dataclass(eq=False)
class Window(Node):
    """OVER aggregation: one output row per input row, stamped with its rowtime, released on
    arrival. Output tuple: the input tuple followed by one value per call."""
    input: Node
    calls: list[WindowCall]
    fields: list[Field]
    is_stream: bool = True

    def inputs(self):
        return [self.input]


# --------------------------------------------------------------------------- joins

@dataclass(frozen=True)
class JoinWindow:
    """A side's window relative to the join's base time T: ``[T - preceding, T + following]``
    (milliseconds). No OVER on a side is ``JoinWindow(0, 0)`` (current row)."""
    preceding: int = 0
    following: int = 0


@dataclass(frozen=True)
class Versions:
    """``FOR SYSTEM_TIME AS OF left.ROWTIME`` on a join's right side: its rows are versions, and a
    left row at ``t`` meets only those valid at ``t`` (the semantics, section 3.5.1). ``start`` and
    ``end`` are over the right tuple (``Rowtime(0)`` is a right stream row's rowtime): a version
    is valid from ``start`` (NULL: always) until ``end`` (excluded; NULL: for ever), or, with no
    ``end``, until the next version of the same join key (``equi``'s right expressions) starts."""
    start: Expr
    end: Expr | None = None


@dataclass(eq=False)
class Join(Node):
    """Window join of two streams, or a stream-table lookup when one side is relational.
    ``kind`` is INNER, LEFT, RIGHT or FULL. ``equi`` pairs (left expr over the left tuple, right
    expr over the right tuple); ``residual`` sees the left tuple followed by the right tuple.
    Output tuple: left fields then right fields. With ``versions``, a temporal join (INNER or
    LEFT): each left row meets the right side's version valid at its rowtime."""
    left: Node
    right: Node
    kind: str
    left_window: JoinWindow | None
    right_window: JoinWindow | None
    equi: list[tuple[Expr, Expr]]
    residual: Expr | None
    fields: list[Field]
    is_stream: bool = True
    versions: Versions | None = None

    def inputs(self):
        return [self.left, self.right]


# --------------------------------------------------------------------------- sorting

@dataclass(eq=False)
class SortKey:
    expr: Expr
    descending: bool = False
    nulls_first: bool | None = None  # None: SQL default (NULLS LAST asc, FIRST desc)


@dataclass(eq=False)
class Sort(Node):
    """Streaming ORDER BY (leading key monotonic) or, with ``within`` (ms), a T-sort on the
    first key, which must be the select list's ``AS ROWTIME`` expression."""
    input: Node
    keys: list[SortKey]
    fields: list[Field]
    within: int | None = None
    rowtime: Expr | None = None
    is_stream: bool = True

    def inputs(self):
        return [self.input]


# --------------------------------------------------------------------------- queries

@dataclass(eq=False)
class Query:
    """A planned SELECT. ``root`` produces the select list (ROWTIME excluded); ``rowtime_column``
    is the position in ``columns`` where the select list shows ROWTIME (None if it does not)."""
    root: Node
    columns: list[Field]
    is_stream: bool
    sql: str
    rowtime_column: int | None = None
    streams: list[str] = field(default_factory=list)   # named streams read, in query order
    tables: list[str] = field(default_factory=list)
    #: foreign streams stamped by one of their columns (a view's ``col AS ROWTIME``): stream -> column
    promoted: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- statements

class Statement:
    sql: str
    position: Position | None

    @property
    def at(self) -> tuple:
        """Where the statement is in its script, ``(line, col)``, or ``()`` when unknown (the
        trailing arguments of an :class:`~streamsql.engine.errors.SqlError`)."""
        p = self.position
        return (p.line, p.col) if p else ()


@dataclass(eq=False)
class ColumnDef:
    name: str
    type: SqlType
    position: Position | None = None


@dataclass(eq=False)
class CreateStream(Statement):
    name: str
    columns: list[ColumnDef]
    or_replace: bool = False
    foreign: dict[str, Any] | None = None   # FOREIGN STREAM: {"server": ..., "options": {...}}
    sql: str = ""
    position: Position | None = None
    description: str | None = None


@dataclass(eq=False)
class CreateTable(Statement):
    name: str
    columns: list[ColumnDef]
    or_replace: bool = False
    sql: str = ""
    position: Position | None = None
    description: str | None = None


@dataclass(eq=False)
class CreateView(Statement):
    name: str
    column_names: list[str] | None
    body_sql: str                 # the SELECT text, re-analyzed wherever the view is used
    or_replace: bool = False
    sql: str = ""
    position: Position | None = None
    description: str | None = None


@dataclass(eq=False)
class Drop(Statement):
    kind: str                     # STREAM, TABLE, VIEW, PUMP
    name: str
    if_exists: bool = False
    sql: str = ""
    position: Position | None = None


@dataclass(eq=False)
class InsertValues(Statement):
    """INSERT INTO target [(cols)] VALUES (...), ...: values are constant expressions already
    typed; ``columns`` is the target column list (may include ``ROWTIME``)."""
    target: str
    columns: list[str]
    rows: list[list[Expr]]
    sql: str = ""
    position: Position | None = None
    row_positions: list[Position] = field(default_factory=list)


@dataclass(eq=False)
class SelectStatement(Statement):
    query: Query
    sql: str = ""
    position: Position | None = None


@dataclass(eq=False)
class CreatePump(Statement):
    name: str
    target: str
    columns: list[str] | None
    query: Query
    started: bool = True
    or_replace: bool = False
    sql: str = ""
    position: Position | None = None
    description: str | None = None


@dataclass(eq=False)
class AlterPump(Statement):
    names: list[str]              # pump names; "SCHEMA.*" style wildcard kept as given
    action: str                   # START or STOP
    sql: str = ""
    position: Position | None = None


# --------------------------------------------------------------------------- what the analyzer may ask the catalog

@dataclass(frozen=True)
class StreamInfo:
    name: str
    fields: list[Field]
    history: bool = False        # relational queries may read its retained history
    foreign: bool = False


@dataclass(frozen=True)
class TableInfo:
    name: str
    fields: list[Field]


@dataclass(frozen=True)
class ViewInfo:
    name: str
    column_names: list[str] | None
    body_sql: str


@dataclass(frozen=True)
class PumpInfo:
    name: str
    target: str


class CatalogReader:
    """What the analyzer needs from the catalog: look up a canonical name."""

    def resolve(self, name: str) -> StreamInfo | TableInfo | ViewInfo | PumpInfo | None:
        raise NotImplementedError


# --------------------------------------------------------------------------- window shapes

WINDOW_COLUMNS = ("WINDOW_START", "WINDOW_END", "WINDOW_TIME")


@dataclass(frozen=True)
class WindowShape:
    """Where a row's windows are (the semantics, section 3.7), all in milliseconds: ``kind`` is
    TUMBLE (``size``), HOP (windows of ``size`` starting every ``slide``), CUMULATE (periods of
    ``size``, windows growing by ``slide``, the step) or SESSION (``gap``); ``offset`` moves the
    epoch-aligned starts (0 <= offset < slide)."""
    kind: str
    size: int = 0
    slide: int = 0
    offset: int = 0
    gap: int = 0

    @property
    def is_session(self) -> bool:
        return self.kind == "SESSION"


@dataclass(eq=False)
class WindowTable(Node):
    """A window table function (TUMBLE, HOP, CUMULATE, SESSION in FROM): each input row once per
    window it falls in, with ``WINDOW_START``, ``WINDOW_END`` and ``WINDOW_TIME`` appended, stamped
    with the window's end and released when the input clock reaches it. ``partition``: a
    session's keys (over the input row)."""
    input: Node
    shape: WindowShape
    partition: list[Expr]
    fields: list[Field]
    is_stream: bool = True

    def inputs(self):
        return [self.input]

    def rowtime_columns(self) -> dict:
        """``{column: its value as an expression of the output rowtime}``: WINDOW_END is the
        rowtime (rows are stamped with their window's end), WINDOW_TIME the rowtime minus 1 ms."""
        n = len(self.input.fields)
        return {n + 1: Rowtime(0), n + 2: _minus_ms(Rowtime(0))}


@dataclass(eq=False)
class WindowAggregate(Node):
    """Aggregation per window: Calcite's group windows (GROUP BY TUMBLE/HOP/SESSION) and a window
    table function's ``GROUP BY window_start, window_end, ...``. ``keys`` and the aggregates'
    arguments are over the *windowed row*: the input tuple followed by the window's start, end
    and time (``Col(n)``, ``Col(n + 1)``, ``Col(n + 2)``), with ``Rowtime(0)`` the input row's
    rowtime; ``window_keys`` says which keys are window columns (key index -> 0, 1 or 2), the
    other keys may not use them. Output tuple: key values then aggregate values, one row per
    (window, key values) that has rows, stamped with the window's ``stamp``: ``end`` (the
    default), ``start`` or ``time`` (end minus 1 ms). ``partition``: a session's keys."""
    input: Node
    shape: WindowShape
    partition: list[Expr]
    keys: list[Expr]
    window_keys: dict
    aggs: list[AggCall]
    fields: list[Field]
    stamp: str = "end"
    is_stream: bool = True

    def inputs(self):
        return [self.input]

    def rowtime_columns(self) -> dict:
        """The window keys that are functions of the output rowtime (the one it is stamped with)."""
        kind = {"start": 0, "end": 1, "time": 2}[self.stamp]
        out = {}
        for i, w in self.window_keys.items():
            if w == kind:
                out[i] = Rowtime(0)
            elif kind == 1 and w == 2:
                out[i] = _minus_ms(Rowtime(0))
        return out


RANK_FUNCTIONS = ("ROW_NUMBER", "RANK", "DENSE_RANK")


@dataclass(eq=False)
class Rank(Node):
    """ROW_NUMBER, RANK or DENSE_RANK over a partition that a window or a monotonic period ends
    (window Top-N and deduplication, the semantics, section 3.7): the rows of a partition are
    numbered by ``order`` once it is complete and released stamped with its end. ``partition``
    holds the time key at ``time_key`` (a monotonic function of the input's rowtime; with
    ``window_end`` the input's rowtime is a window's end, which is then the stamp). ``limit``
    keeps only the rows numbered at most that. Output tuple: the input tuple, then the number."""
    input: Node
    fn: str
    partition: list[Expr]
    time_key: int
    order: list[SortKey]
    fields: list[Field]
    window_end: bool = False
    limit: int | None = None
    is_stream: bool = True

    def inputs(self):
        return [self.input]

    def rowtime_columns(self) -> dict:
        """Over a window's rows, its time key column is the rowtime (every row of a partition is
        stamped with it)."""
        key = self.partition[self.time_key]
        return {key.index: Rowtime(0)} if self.window_end and isinstance(key, Col) else {}


def _minus_ms(e: Expr) -> Expr:
    from . import time as sqltime
    from .types import SqlType
    one = Lit(sqltime.Interval(0, 1), SqlType("INTERVAL", nullable=False))
    return Call("-", (e, one), SqlType("TIMESTAMP", nullable=False))
