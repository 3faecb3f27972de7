"""What the catalog holds and hands out: injected events and their outcomes, the entries of the
stream log, and the definitions of streams, tables and views. Plain data, so that the whole
catalog serialises to one JSON snapshot (:mod:`.snapshot`)."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from .. import time as sqltime
from ..plan import Field

#: the times an event may carry: the years 0001 to 9999 (what a TIMESTAMP can show)
MIN_EVENT_TIME = sqltime.from_datetime(_dt.datetime(1, 1, 1))
MAX_EVENT_TIME = sqltime.from_datetime(_dt.datetime(9999, 12, 31, 23, 59, 59, 999000))
DEFAULT_PRODUCER = "default"


def is_event_time(t) -> bool:
    """Whether ``t`` is a time an event may carry (epoch milliseconds within the years 0001-9999)."""
    return isinstance(t, int) and not isinstance(t, bool) and MIN_EVENT_TIME <= t <= MAX_EVENT_TIME


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
            return f"{self.stream}{who} row {sqltime.format_timestamp(self.rowtime)} {vals}".rstrip()
        if self.kind == "bound":
            return f"{self.stream}{who} bound {'>' if self.strict else '>='} {sqltime.format_timestamp(self.rowtime)}"
        return f"{self.stream}{who} {self.kind}"


@dataclass
class Outcome:
    """What the catalog did with an event. ``status``: ``ok``, ``late`` (rejected, written to
    the error stream), ``error`` (refused, nothing changed) or ``eclipsed`` (a bound that carried
    no information)."""
    step: int
    event: Event
    status: str
    message: str | None = None
    clock: int | None = None           # for late rows: the clock the row violated
    bound_before: int = sqltime.NO_TIME      # the stream's bound before/after the event
    bound_after: int = sqltime.NO_TIME
    released: int = 0                  # rows that left the stream because of this event
    late_count: int = 0
    producer_clock: bool = False       # the late row violated its producer's clock (not the stream's)



@dataclass
class LogEntry:
    """An entry of the stream log: a row leaving the stream, or the stream's bound moving."""
    step: int
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
    # relational SELECT: how far back the retained history reaches from the stream's clock, in
    # ms; None keeps all of it (only meaningful when ``history`` is on)
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
