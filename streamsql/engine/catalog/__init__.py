"""The catalog: streams, tables, views and pumps by name, and what every injected event does.

It decides, for every injected event, what leaves each named stream (the semantics, section 2);
the parts it is made of:

- :mod:`.definitions`: events, outcomes, stream-log entries and the definitions (plain data);
- :mod:`.producers`: each stream's producers and clocks, and what an event lets out of it;
- :mod:`.errorstream`: the error stream ``ERRORS`` and the rows written to it;
- :mod:`.snapshot`: the whole catalog as one JSON snapshot, the commit point of the workspace.

The rows and bounds that leave a stream are the *stream log* that queries read
(:mod:`streamsql.engine.log`).
"""
from __future__ import annotations

import time as _time
from typing import Any, Iterable

from .. import time as sqltime
from ..errors import EventError, SqlError, one_line
from ..paths import safe_component
from ..plan import Field, PumpInfo, StreamInfo, TableInfo, ViewInfo
from ..values import coerce
from . import snapshot
from .definitions import (DEFAULT_PRODUCER, MAX_EVENT_TIME, MIN_EVENT_TIME, Event, LogEntry, Outcome, StreamDef,
                          TableDef, ViewDef)
from .errorstream import ERROR_FIELDS, ERROR_STREAM, ErrorStream
from .producers import Late, Producer, StreamState, admit

__all__ = ["Catalog", "Event", "Outcome", "LogEntry", "StreamDef", "TableDef", "ViewDef", "Producer", "StreamState",
           "ERROR_STREAM", "ERROR_FIELDS", "DEFAULT_PRODUCER", "MIN_EVENT_TIME", "MAX_EVENT_TIME", "now_ms"]


def now_ms() -> int:
    """The wall clock in epoch milliseconds (what ``'now'`` means)."""
    return int(_time.time() * 1000)


def _is_unicode(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Catalog:
    """Definitions plus per-stream state; decides what every injected event does."""

    def __init__(self):
        self.streams: dict[str, StreamDef] = {}
        self.state: dict[str, StreamState] = {}
        self.tables: dict[str, TableDef] = {}
        self.views: dict[str, ViewDef] = {}
        self.pumps: dict[str, dict] = {}
        self.next_step = 1
        self.uid_counter = 0
        #: the number of the last late error commit (the log's late segments carry theirs); None in
        #: a workspace made before they were numbered (its late segments are all committed)
        self.late_commits: int | None = 0
        self._add_error_stream()

    def _add_error_stream(self):
        self.streams[ERROR_STREAM] = StreamDef(ERROR_STREAM, self._new_uid(ERROR_STREAM), ERROR_FIELDS,
                                               system=True)
        self.state[ERROR_STREAM] = StreamState()

    def _new_uid(self, name: str) -> str:
        self.uid_counter += 1
        return f"{self.uid_counter:04d}_{safe_component(name)}"

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

    # ------------------------------------------------------------------ history (relational SELECT)

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

    def apply(self, ev: Event, step: int, out: dict[str, list[LogEntry]]) -> Outcome:
        """Apply one event; append what leaves streams to ``out[stream]``. Never raises for bad
        input: the outcome says ``error`` and nothing changed."""
        try:
            d = self.stream(ev.stream)
        except EventError as e:
            return Outcome(step, ev, "error", str(e))
        ev.stream = d.name
        if d.system:
            return Outcome(step, ev, "error", f"{d.name} is written by the engine; it cannot be inserted into")
        st = self.state[d.name]
        try:
            return admit(d, st, ev, step, out, self.coerce_values)
        except Late as late:
            self.errors.late_row(d, st, ev, self._safe_values(d, ev.values), step, late.clock, late.by_producer, out)
            return Outcome(step, ev, "late", None, clock=late.clock, bound_before=st.bound, bound_after=st.bound,
                           late_count=st.late_count, producer_clock=late.by_producer)

    @property
    def errors(self) -> ErrorStream:
        """The error stream's writer (its state is this catalog's)."""
        return ErrorStream(self.state[ERROR_STREAM], self.__dict__.setdefault("_calc_counts", {}))

    def report_operator_error(self, step: int, stream: str, producer: str, err, out: dict) -> None:
        """A row a query's operator refused (:meth:`ErrorStream.operator_error`)."""
        self.errors.operator_error(step, stream, producer, err, out)

    def report_pump_error(self, step: int, target: str, pump: str, message: str, rowtime: int, values: dict,
                          out: dict) -> None:
        """A row a pump could not insert into its target (:meth:`ErrorStream.pump_error`)."""
        bound = self.state[target].bound if target in self.state else sqltime.NO_TIME
        self.errors.pump_error(step, target, bound, pump, message, rowtime, values, out)

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
        return {p: (None if s.clock <= sqltime.NO_TIME else s.clock) for p, s in st.producers.items() if s.attached}

    # ------------------------------------------------------------------ snapshot

    # ------------------------------------------------------------------ snapshot

    def to_json(self) -> dict:
        """The catalog as one JSON document (:mod:`.snapshot`)."""
        return snapshot.to_json(self)

    @classmethod
    def from_json(cls, j: dict) -> "Catalog":
        """The catalog a :meth:`to_json` document describes."""
        c = cls.__new__(cls)
        snapshot.fill_from_json(c, j)
        return c
