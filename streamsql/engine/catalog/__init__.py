"""Streams, tables, views and producers; the error stream.

The catalog decides, for every injected event, what leaves each named stream (SEMANTICS.md
section 2): with several producers a row waits until every attached producer's clock has reached
it; a row below the stream's bound or its producer's clock is late and goes to the error stream
(the rule is :mod:`streamsql.engine.lateness`);
a producer may not move its own bound backwards. The rows and bounds that leave a stream are the
*stream log* that queries read (:mod:`streamsql.engine.log`).

Everything here is plain data so that the whole catalog serialises to one JSON snapshot, which is
the commit point of the workspace.
"""
from __future__ import annotations

import bisect
import datetime as _dt
import decimal
import logging
import time as _time
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import lateness
from . import time as T
from .errors import EventError, SqlError, StreamSqlError, one_line
from .paths import check_sql_name, safe_component
from .plan import Field, PumpInfo, StreamInfo, TableInfo, ViewInfo
from .types import SqlType, dumps_row, to_json_value
from .values import coerce

log = logging.getLogger("streamsql.late")
calc_log = logging.getLogger("streamsql.calc")   # calculator errors: the 1st, 10th, ... per query

ERROR_STREAM = "ERRORS"
#: the times an event may carry: the years 0001 to 9999 (what a TIMESTAMP can show)
MIN_EVENT_TIME = T.from_datetime(_dt.datetime(1, 1, 1))
MAX_EVENT_TIME = T.from_datetime(_dt.datetime(9999, 12, 31, 23, 59, 59, 999000))
DEFAULT_PRODUCER = "default"

ERROR_FIELDS = [
    Field("ERROR_TIME", SqlType("TIMESTAMP", nullable=False)),
    Field("ERROR_LEVEL", SqlType("VARCHAR", 10, nullable=False)),
    Field("ERROR_NAME", SqlType("VARCHAR", 40, nullable=False)),
    Field("MESSAGE", SqlType("VARCHAR", nullable=False)),
    Field("DATA_ROWTIME", SqlType("TIMESTAMP")),
    Field("DATA_ROW", SqlType("VARCHAR")),
    Field("STREAM_NAME", SqlType("VARCHAR", 128, nullable=False)),
    Field("PRODUCER", SqlType("VARCHAR", 128)),
    Field("STEP", SqlType("BIGINT", nullable=False)),
]


# --------------------------------------------------------------------------- events

@dataclass
class Event:
    """One injected event: a row, a bound (punctuation), or a producer attaching/detaching."""
    stream: str
    kind: str                          # "row" | "bound" | "attach" | "detach"
    rowtime: int | None = None         # row time, or the bound's value
    values: dict | None = None
    strict: bool = False
    producer: str | None = None

    def describe(self) -> str:
        """The event in one line, for logs and messages."""
        who = f" ({self.producer})" if self.producer and self.producer != DEFAULT_PRODUCER else ""
        if self.kind == "row":
            vals = ", ".join(f"{k}={v!r}" for k, v in (self.values or {}).items())
            return f"{self.stream}{who} row {T.format_timestamp(self.rowtime)} {vals}".rstrip()
        if self.kind == "bound":
            return f"{self.stream}{who} bound {'>' if self.strict else '>='} {T.format_timestamp(self.rowtime)}"
        return f"{self.stream}{who} {self.kind}"


@dataclass
class Outcome:
    """What the catalog did with an event. ``status``: ``ok``, ``late`` (rejected, written to
    the error stream), ``error`` (refused, nothing changed) or ``eclipsed`` (a bound that carried
    no information)."""
    seq: int
    event: Event
    status: str
    message: str | None = None
    clock: int | None = None           # for late rows: the clock the row violated
    bound_before: int = T.NO_TIME      # the stream's bound before/after the event
    bound_after: int = T.NO_TIME
    released: int = 0                  # rows that left the stream because of this event
    late_count: int = 0
    producer_clock: bool = False       # the late row violated its producer's clock (not the stream's)


@dataclass
class LogEntry:
    """An entry of the stream log: a row leaving the stream, or the stream's bound moving."""
    seq: int
    kind: int                          # log.ROW or log.BOUND
    rowtime: int
    clock: int
    values: tuple | None = None


# --------------------------------------------------------------------------- definitions

@dataclass
class StreamDef:
    name: str
    uid: str
    fields: list[Field]
    system: bool = False
    foreign: dict | None = None
    history: bool = False
    sql: str = ""
    # relational SELECT (issue 7): how far back the retained history reaches from the stream's
    # clock, in ms; None keeps all of it (only meaningful when ``history`` is on)
    history_window: int | None = None


@dataclass
class TableDef:
    name: str
    fields: list[Field]
    rows: list[tuple] = field(default_factory=list)
    sql: str = ""


@dataclass
class ViewDef:
    name: str
    column_names: list[str] | None
    body_sql: str
    sql: str = ""


@dataclass
class Producer:
    clock: int = T.NO_TIME
    attached: bool = True


@dataclass
class StreamState:
    """The moving parts of a stream: its bound (the strongest bound passed to readers), its
    producers and the rows waiting for slower producers."""
    bound: int = T.NO_TIME
    producers: dict[str, Producer] = field(default_factory=dict)
    pending: list = field(default_factory=list)   # sorted [(rowtime, seq, producer, values)]
    late_count: int = 0
    rows_in: int = 0
    bounds_in: int = 0
    eclipsed: int = 0

    def attached(self) -> list[str]:
        return [p for p, s in self.producers.items() if s.attached]

    def outgoing(self) -> int:
        """The bound the stream can pass on: the slowest attached producer's clock."""
        att = [max(s.clock, self.bound) for s in self.producers.values() if s.attached]
        return min(att) if att else T.END_OF_TIME


# --------------------------------------------------------------------------- the catalog

class Catalog:
    """Definitions plus per-stream state; decides what every injected event does."""

    def __init__(self):
        self.streams: dict[str, StreamDef] = {}
        self.state: dict[str, StreamState] = {}
        self.tables: dict[str, TableDef] = {}
        self.views: dict[str, ViewDef] = {}
        self.pumps: dict[str, dict] = {}
        self.next_seq = 1
        self._uid_counter = 0
        #: the number of the last late error commit (the log's late segments carry theirs); None in
        #: a workspace made before they were numbered (its late segments are all committed)
        self.late_commits: int | None = 0
        self._add_error_stream()

    def _add_error_stream(self):
        self.streams[ERROR_STREAM] = StreamDef(ERROR_STREAM, self._new_uid(ERROR_STREAM), ERROR_FIELDS,
                                               system=True)
        self.state[ERROR_STREAM] = StreamState()

    def _new_uid(self, name: str) -> str:
        self._uid_counter += 1
        return f"{self._uid_counter:04d}_{safe_component(name)}"

    # ------------------------------------------------------------------ lookup (CatalogReader)

    def resolve(self, name: str):
        if name in self.streams:
            d = self.streams[name]
            return StreamInfo(d.name, list(d.fields), history=d.history, foreign=d.foreign is not None)
        if name in self.tables:
            return TableInfo(name, list(self.tables[name].fields))
        if name in self.views:
            v = self.views[name]
            return ViewInfo(name, v.column_names, v.body_sql)
        if name in self.pumps:
            return PumpInfo(name, self.pumps[name]["target"])
        return None

    def kind_of(self, name: str) -> str | None:
        for kind, d in (("STREAM", self.streams), ("TABLE", self.tables), ("VIEW", self.views),
                        ("PUMP", self.pumps)):
            if name in d:
                return kind
        return None

    def stream(self, name: str) -> StreamDef:
        if not isinstance(name, str):
            raise EventError(f"a stream name must be a string, not {type(name).__name__} {name!r:.60}")
        d = self.streams.get(name)
        if d is None:
            d = self._find_case_insensitive(name)
        if d is None:
            raise EventError(f"unknown stream {name!r}; streams: {', '.join(sorted(self.streams)) or 'none'}")
        return d

    def _find_case_insensitive(self, name: str) -> StreamDef | None:
        u = name.upper()
        if u in self.streams:
            return self.streams[u]
        hits = [d for n, d in self.streams.items() if n.upper() == u]
        return hits[0] if len(hits) == 1 else None

    # ------------------------------------------------------------------ DDL

    def create_stream(self, name: str, fields: list[Field], *, or_replace=False, foreign=None,
                      sql="", in_use: Iterable[str] = ()) -> StreamDef:
        if or_replace and name in self.streams and self.streams[name].system:
            raise SqlError(f"'{name}' is a system stream and cannot be replaced")
        self._check_new(name, "STREAM", or_replace, in_use)
        d = StreamDef(name, self._new_uid(name), list(fields), foreign=foreign, sql=sql)
        self.streams[name] = d
        self.state[name] = StreamState()
        return d

    def create_table(self, name: str, fields: list[Field], *, or_replace=False, sql="", in_use=()):
        self._check_new(name, "TABLE", or_replace, in_use)
        self.tables[name] = TableDef(name, list(fields), sql=sql)

    def create_view(self, name: str, column_names, body_sql: str, *, or_replace=False, sql="", in_use=()):
        self._check_new(name, "VIEW", or_replace, in_use)
        self.views[name] = ViewDef(name, column_names, body_sql, sql=sql)

    def _check_new(self, name, kind, or_replace, in_use):
        existing = self.kind_of(name)
        if existing is None:
            return
        if not or_replace:
            raise SqlError(f"{existing.title()} '{name}' already exists"
                           + ("" if existing != kind else f"; use CREATE OR REPLACE {kind}"))
        if existing != kind:
            raise SqlError(f"Cannot replace {existing.lower()} '{name}' with a {kind.lower()}")
        users = list(in_use)
        if users:
            raise SqlError(f"{kind.title()} '{name}' is used by running quer{'y' if len(users) == 1 else 'ies'} "
                           f"{', '.join(users)}; stop {'it' if len(users) == 1 else 'them'} first")
        self._remove(name)

    def drop(self, kind: str, name: str, *, if_exists=False, in_use: Iterable[str] = ()) -> StreamDef | None:
        existing = self.kind_of(name)
        if existing is None:
            if if_exists:
                return None
            raise SqlError(f"{kind.title()} '{name}' not found")
        if existing != kind:
            raise SqlError(f"'{name}' is a {existing.lower()}, not a {kind.lower()}")
        if name == ERROR_STREAM:
            raise SqlError(f"'{name}' is a system stream and cannot be dropped")
        users = list(in_use)
        if users:
            raise SqlError(f"{kind.title()} '{name}' is used by running quer{'y' if len(users) == 1 else 'ies'} "
                           f"{', '.join(users)}; stop {'it' if len(users) == 1 else 'them'} first")
        return self._remove(name)

    def _remove(self, name):
        d = self.streams.pop(name, None)
        self.state.pop(name, None)
        self.tables.pop(name, None)
        self.views.pop(name, None)
        self.pumps.pop(name, None)
        return d

    # ------------------------------------------------------------------ history (issue 7, relational SELECT)

    def set_history(self, name: str, window_ms: int | None = None, *, enabled: bool = True) -> StreamDef:
        """Let relational queries read a stream's retained history: the rows whose rowtime is
        within ``window_ms`` of the stream's clock (all of them when None). ``enabled=False``
        turns it off again (relational queries on the stream are then refused)."""
        d = self.stream(name)
        if window_ms is not None and (isinstance(window_ms, bool) or int(window_ms) < 0):
            raise EventError(f"the history window of {d.name} must be a non-negative number of milliseconds")
        d.history = bool(enabled)
        d.history_window = int(window_ms) if (enabled and window_ms is not None) else None
        return d

    def insert_table_rows(self, name: str, rows: list[tuple]):
        self.tables[name].rows.extend(rows)

    # ------------------------------------------------------------------ values

    def coerce_values(self, d: StreamDef, values: dict | None) -> tuple:
        """The stream's tuple for ``values`` (keys matched like SQL identifiers)."""
        values = values or {}
        by_name = {f.name: i for i, f in enumerate(d.fields)}
        by_upper: dict[str, list[int]] = {}
        for i, f in enumerate(d.fields):
            by_upper.setdefault(f.name.upper(), []).append(i)
        out: list[Any] = [None] * len(d.fields)
        seen = set()
        for k, v in values.items():
            i = by_name.get(k)
            if i is None:
                cands = by_upper.get(str(k).upper(), [])
                if len(cands) != 1:
                    cols = ", ".join(f.name for f in d.fields)
                    raise EventError(one_line(f"stream {d.name} has no column {k!r} (columns: {cols})"))
                i = cands[0]
            if i in seen:
                raise EventError(f"column {d.fields[i].name} of stream {d.name} given twice")
            seen.add(i)
            try:
                out[i] = coerce(v, d.fields[i].type, where=f"column {d.fields[i].name} of stream {d.name}")
            except ValueError as e:
                raise EventError(one_line(str(e))) from None
            if isinstance(out[i], str) and not _is_unicode(out[i]):
                raise EventError(f"column {d.fields[i].name} of stream {d.name}: the text is not valid Unicode "
                                 f"(it has a lone surrogate, e.g. from a \\ud800 escape)")
        for i, f in enumerate(d.fields):
            if i not in seen and not f.type.nullable:
                raise EventError(f"column {f.name} of stream {d.name} is NOT NULL and was not given")
        return tuple(out)

    # ------------------------------------------------------------------ injection

    def apply(self, ev: Event, seq: int, out: dict[str, list[LogEntry]]) -> Outcome:
        """Apply one event; append what leaves streams to ``out[stream]``. Never raises for bad
        input: the outcome says ``error`` and nothing changed."""
        try:
            d = self.stream(ev.stream)
        except EventError as e:
            return Outcome(seq, ev, "error", str(e))
        ev.stream = d.name
        if d.system:
            return Outcome(seq, ev, "error", f"{d.name} is written by the engine; it cannot be inserted into")
        st = self.state[d.name]
        if ev.producer is not None:
            try:
                check_sql_name(ev.producer, "producer")
            except StreamSqlError as e:
                return Outcome(seq, ev, "error", f"stream {d.name}: {e}")
        p = ev.producer or DEFAULT_PRODUCER
        before = st.bound
        if ev.kind in ("row", "bound") and ev.rowtime is not None and not _event_time(ev.rowtime):
            what = "a row's rowtime" if ev.kind == "row" else "a bound"
            return Outcome(seq, ev, "error", one_line(f"{what} for stream {d.name} must be a time between 0001-01-01 "
                                                      f"and 9999-12-31, not {ev.rowtime!r}", limit=200))
        if ev.kind == "row":
            if ev.rowtime is None:
                return Outcome(seq, ev, "error", f"a row for stream {d.name} needs a rowtime")
            try:
                values = self.coerce_values(d, ev.values)
            except EventError as e:
                return Outcome(seq, ev, "error", str(e), bound_before=before, bound_after=before)
            clock = lateness.clock(st, p)
            if lateness.is_late(ev.rowtime, clock):
                by_producer = clock > st.bound      # the row violated its producer's clock, not the stream's
                self._report_late(d, st, ev, seq, clock, by_producer, out)
                return Outcome(seq, ev, "late", None, clock=clock, bound_before=before, bound_after=before,
                               late_count=st.late_count, producer_clock=by_producer)
            prod = st.producers.get(p)
            if prod is None or not prod.attached:
                prod = st.producers[p] = Producer()
            prod.clock = max(prod.clock, ev.rowtime)
            st.rows_in += 1
            bisect.insort(st.pending, (ev.rowtime, seq, p, values), key=lambda x: (x[0], x[1]))
            released = self._flush(d, st, seq, out)
            return Outcome(seq, ev, "ok", bound_before=before, bound_after=st.bound, released=released)
        if ev.kind == "bound":
            if ev.rowtime is None:
                return Outcome(seq, ev, "error", f"a bound for stream {d.name} needs a time")
            t = T.bound_value(ev.rowtime, ev.strict)
            prod = st.producers.get(p)
            if prod is not None and prod.attached and t < prod.clock:
                who = "" if p == DEFAULT_PRODUCER else f"producer {p} of "
                return Outcome(seq, ev, "error",
                               f"bound {T.format_timestamp(t)} on {who}stream {d.name} is before that "
                               f"producer's clock {T.format_timestamp(prod.clock)}; a producer's bound "
                               f"cannot move backwards", bound_before=before, bound_after=before)
            if prod is None or not prod.attached:
                prod = st.producers[p] = Producer()
            eclipsed = t <= max(st.bound, prod.clock)
            prod.clock = max(prod.clock, t)
            st.bounds_in += 1
            released = self._flush(d, st, seq, out)
            if eclipsed:
                st.eclipsed += 1
            return Outcome(seq, ev, "eclipsed" if eclipsed else "ok", bound_before=before,
                           bound_after=st.bound, released=released)
        if ev.kind == "attach":
            prod = st.producers.get(p)
            if prod is not None and prod.attached:
                return Outcome(seq, ev, "eclipsed", f"producer {p} is already attached to {d.name}",
                               bound_before=before, bound_after=before)
            st.producers[p] = Producer()
            return Outcome(seq, ev, "ok", bound_before=before, bound_after=before)
        if ev.kind == "detach":
            prod = st.producers.get(p)
            if prod is None or not prod.attached:
                return Outcome(seq, ev, "error", f"producer {p} is not attached to stream {d.name}",
                               bound_before=before, bound_after=before)
            prod.attached = False
            released = self._flush(d, st, seq, out)
            return Outcome(seq, ev, "ok", bound_before=before, bound_after=st.bound, released=released)
        return Outcome(seq, ev, "error", f"unknown event kind {ev.kind!r}")

    def _flush(self, d: StreamDef, st: StreamState, seq: int, out: dict[str, list[LogEntry]]) -> int:
        """Let out every pending row the slowest producer allows; move the stream's bound."""
        limit = st.outgoing()
        n = 0
        while n < len(st.pending) and st.pending[n][0] <= limit:
            n += 1
        leaving, st.pending = st.pending[:n], st.pending[n:]
        new_bound = st.bound
        if leaving:
            new_bound = max(new_bound, leaving[-1][0])
        if limit < T.END_OF_TIME:
            new_bound = max(new_bound, limit)
        if not leaving and new_bound == st.bound:
            return 0
        entries = out.setdefault(d.name, [])
        for rowtime, _s, _p, values in leaving:
            entries.append(LogEntry(seq, 0, rowtime, new_bound, values))
        if not leaving or new_bound > leaving[-1][0]:
            entries.append(LogEntry(seq, 1, new_bound, new_bound, None))
        st.bound = new_bound
        return len(leaving)

    def _report_late(self, d: StreamDef, st: StreamState, ev: Event, seq: int, clock: int, by_producer: bool,
                     out: dict[str, list[LogEntry]]):
        data = {f.name: to_json_value(v, f.type) for f, v in zip(d.fields, self._safe_values(d, ev.values))}
        t, row = lateness.reject(st, self.state[ERROR_STREAM], d.name, ev.rowtime, clock, data,
                                 ev.producer or DEFAULT_PRODUCER, seq, by_producer=by_producer)
        out.setdefault(ERROR_STREAM, []).append(LogEntry(seq, 0, t, t, row))

    def report_operator_error(self, seq: int, stream: str, producer: str, err, out: dict) -> None:
        """A row a query's operator refused (a T-sort's late row, a calculator error) goes to the
        error stream at the step that refused it, stamped with the bound it violated (a
        calculator error: the row's rowtime); the log gets the 1st, 10th, 100th ... of them."""
        est = self.state[ERROR_STREAM]
        t = max(est.bound, err.bound)
        est.bound = t
        est.rows_in += 1
        out.setdefault(ERROR_STREAM, []).append(LogEntry(seq, 0, t, t, err.error_values(stream, t, producer)))
        if err.is_calc:
            # the 1st, 10th, 100th ... calculator error of each query; the message names the query,
            # the expression and its operands
            counts = self.__dict__.setdefault("_calc_errors", {})
            n = counts[producer] = counts.get(producer, 0) + 1
            if lateness.is_power_of_ten(n):
                calc_log.warning("calculator error #%d (step %d): %s", n, seq, err.message)
        elif lateness.is_power_of_ten(est.rows_in):
            log.warning("%s in query %s (step %d): %s", err.name.lower().replace("_", " "), producer, seq,
                        err.message)

    def report_pump_error(self, seq: int, target: str, pump: str, message: str, rowtime: int, values: dict,
                          out: dict) -> None:
        """A row a pump could not insert into its target (it does not fit the target's columns)."""
        est = self.state[ERROR_STREAM]
        t = max(est.bound, self.state[target].bound if target in self.state else T.NO_TIME)
        est.bound = t
        est.rows_in += 1
        data = {k: to_json_value(v) for k, v in values.items()}
        row = (t, "ERROR", "PUMP_ROW_REFUSED", f"Pump {pump} could not insert into {target}: {message}", rowtime,
               dumps_row(data), target, pump, seq)
        out.setdefault(ERROR_STREAM, []).append(LogEntry(seq, 0, t, t, row))
        log.warning("pump %s (step %d): %s", pump, seq, message)

    def _safe_values(self, d: StreamDef, values):
        try:
            return self.coerce_values(d, values)
        except EventError:
            return tuple((values or {}).get(f.name) for f in d.fields)

    # ------------------------------------------------------------------ reading state

    def clock(self, name: str) -> int:
        return self.state[name].bound

    def producer_clocks(self, name: str) -> dict[str, int | None]:
        st = self.state[name]
        return {p: (None if s.clock <= T.NO_TIME else s.clock) for p, s in st.producers.items() if s.attached}

    # ------------------------------------------------------------------ snapshot

    def to_json(self) -> dict:
        return {
            "next_seq": self.next_seq,
            "uid_counter": self._uid_counter,
            "late_commits": self.late_commits or 0,
            "streams": [{"name": d.name, "uid": d.uid, "fields": [_field_json(f) for f in d.fields],
                         "system": d.system, "foreign": d.foreign, "history": d.history, "sql": d.sql,
                         "history_window": d.history_window,   # relational SELECT (issue 7)
                         "state": _state_json(self.state[d.name], d)}
                        for d in self.streams.values()],
            "tables": [{"name": t.name, "fields": [_field_json(f) for f in t.fields], "sql": t.sql,
                        "rows": [[_value_json(v) for v in r] for r in t.rows]} for t in self.tables.values()],
            "views": [{"name": v.name, "column_names": v.column_names, "body_sql": v.body_sql, "sql": v.sql}
                      for v in self.views.values()],
            "pumps": list(self.pumps.values()),
        }

    @classmethod
    def from_json(cls, j: dict) -> "Catalog":
        c = cls.__new__(cls)
        c.next_seq = j["next_seq"]
        c._uid_counter = j["uid_counter"]
        late = j.get("late_commits")
        if late is not None and (not isinstance(late, int) or isinstance(late, bool) or late < 0):
            raise TypeError("\"late_commits\" is not a count")
        c.late_commits = late
        c.streams, c.state, c.tables, c.views, c.pumps = {}, {}, {}, {}, {}
        for s in j["streams"]:
            fields = [_field_from(f) for f in s["fields"]]
            d = StreamDef(s["name"], s["uid"], fields, s["system"], s["foreign"], s["history"], s["sql"])
            d.history_window = s.get("history_window")   # relational SELECT (issue 7)
            c.streams[d.name] = d
            c.state[d.name] = _state_from(s["state"], d)
        for t in j["tables"]:
            fields = [_field_from(f) for f in t["fields"]]
            c.tables[t["name"]] = TableDef(t["name"], fields,
                                           [tuple(_value_from(v, f.type) for v, f in zip(r, fields))
                                            for r in t["rows"]], t["sql"])
        for v in j["views"]:
            c.views[v["name"]] = ViewDef(v["name"], v["column_names"], v["body_sql"], v["sql"])
        for p in j.get("pumps", []):
            c.pumps[p["name"]] = p
        return c


def _event_time(t) -> bool:
    return isinstance(t, int) and not isinstance(t, bool) and MIN_EVENT_TIME <= t <= MAX_EVENT_TIME


def _is_unicode(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def now_ms() -> int:
    return int(_time.time() * 1000)


def _field_json(f: Field) -> dict:
    return {"name": f.name, "type": f.type.to_json()}


def _field_from(j: dict) -> Field:
    return Field(j["name"], SqlType.from_json(j["type"]))


def _value_json(v):
    if isinstance(v, decimal.Decimal):
        return {"$d": str(v)}
    if isinstance(v, T.Interval):
        return {"$i": [v.months, v.millis]}
    return v


def _value_from(v, t: SqlType):
    if isinstance(v, dict) and "$d" in v:
        return decimal.Decimal(v["$d"])
    if isinstance(v, dict) and "$i" in v:
        return T.Interval(*v["$i"])
    return v


def _state_json(st: StreamState, d: StreamDef) -> dict:
    return {"bound": st.bound, "late_count": st.late_count, "rows_in": st.rows_in, "bounds_in": st.bounds_in,
            "eclipsed": st.eclipsed,
            "producers": {p: [s.clock, s.attached] for p, s in st.producers.items()},
            "pending": [[r, s, p, [_value_json(v) for v in vals]] for r, s, p, vals in st.pending]}


def _state_from(j: dict, d: StreamDef) -> StreamState:
    st = StreamState(j["bound"], {p: Producer(c, a) for p, (c, a) in j["producers"].items()}, [],
                     j["late_count"], j["rows_in"], j.get("bounds_in", 0), j.get("eclipsed", 0))
    st.pending = [(r, s, p, tuple(_value_from(v, f.type) for v, f in zip(vals, d.fields)))
                  for r, s, p, vals in j["pending"]]
    return st
