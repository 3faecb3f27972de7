"""A saved scenario's events file: the journal's events of the query's streams as lines, with
their outcomes for the expected lines, and, for a query started late, the few events that put
its streams in the state the query found them in."""
from __future__ import annotations

from .. import time as sqltime
from ..catalog import DEFAULT_PRODUCER, Catalog, Event, Outcome
from ..errors import StreamSqlError
from ..journal import JournalEvent
from ..sql.spelling import json_name, written_names
from ..types import to_json_value
from ..values import coerce
from .errors import SaveError


class EventLines:
    """Events as lines of an events file, with their outcomes for the expected lines."""

    def __init__(self, wb, streams: list[str]):
        c = wb.catalog
        self.defs = {s: c.streams[s] for s in streams}
        self.spelled = {s: written_names(d.sql) for s, d in self.defs.items()}
        self.lines: list[dict] = []
        self.outcomes: list[Outcome] = []
        self.steps: list[int | None] = []      # the workspace step of each line (None: made up)
        self._coerce = Catalog().coerce_values

    def name(self, stream: str) -> str:
        return json_name(stream, self.spelled.get(stream, {})) if stream in self.defs else stream

    def values(self, stream: str, values) -> dict:
        """Values as the stream's columns read them back: typed and named as in its DDL when
        they fit, as given otherwise (a refused row must be refused again)."""
        d = self.defs.get(stream)
        if d is None:
            return dict(values)
        try:
            tup = self._coerce(d, values)
        except StreamSqlError:
            return dict(values)
        sp = self.spelled[stream]
        out = {}
        for f, v in zip(d.fields, tup):
            if f.type.name == "DECIMAL" and v is not None:
                x = float(v)
                try:
                    same = coerce(x, f.type) == v
                except (StreamSqlError, ValueError):     # the float does not say it exactly
                    same = False
                out[json_name(f.name, sp)] = x if same else str(v)
            else:
                out[json_name(f.name, sp)] = to_json_value(v, f.type)
        return out

    def add(self, step: int | None, stream: str, kind: str, time=None, *, strict=False, producer=None,
            values=None, status="ok", clock=None, message=None) -> bool:
        """Append one event; False (nothing added) when the events format cannot hold it."""
        line: dict = {"stream": self.name(stream)}
        if producer is not None and (producer != DEFAULT_PRODUCER or kind in ("attach", "detach")):
            line["producer"] = producer
        if kind == "row":
            if time is None:
                return False
            line["rowtime"] = sqltime.format_timestamp(time)
            line["values"] = self.values(stream, values or {})
        elif kind == "bound":
            if time is None:
                return False
            line["bound"] = sqltime.format_timestamp(time)
            if strict:
                line["strict"] = True
        else:
            line["producer"] = producer or DEFAULT_PRODUCER
            line[kind] = True
        self.lines.append(line)
        self.steps.append(step)
        ev = Event(self.name(stream), kind, time, values, strict, producer)
        self.outcomes.append(Outcome(len(self.lines), ev, status, message, clock=clock))
        return True

    def add_journaled(self, e: JournalEvent) -> bool:
        return self.add(e.step, e.stream, e.kind, e.time, strict=e.strict, producer=e.producer, values=e.values,
                        status=e.status, clock=e.clock, message=e.message)

    def add_state(self, stream: str, st) -> None:
        """Events that put an empty stream in state ``st``: its bound, each attached producer
        and its clock, and the rows it holds for a slower producer (in their order), such that
        no row leaves and the bound moves once (module doc)."""
        d = self.defs[stream]
        attached = [(p, pr) for p, pr in st.producers.items() if pr.attached]
        held: dict[str, list] = {}
        for rt, _step, p, vals in st.pending:
            held.setdefault(p, []).append(rt)
        b = st.bound
        setter = None
        if b > sqltime.NO_TIME:
            fast = [p for p, pr in attached if pr.clock >= b and p not in held]
            setter = fast[0] if fast else "_clock"
            self.add(None, stream, "bound", b, producer=setter)
            if not fast:
                self.add(None, stream, "detach", producer=setter)
        for p, pr in attached:
            if p in held:
                self.add(None, stream, "attach", producer=p)
            elif p == setter:
                if pr.clock > b:
                    self.add(None, stream, "bound", pr.clock, producer=p)
            elif pr.clock > sqltime.NO_TIME:
                self.add(None, stream, "bound", pr.clock, producer=p)
            else:
                self.add(None, stream, "attach", producer=p)
        for rt, _step, p, vals in st.pending:
            self.add(None, stream, "row", rt, producer=p, values={f.name: v for f, v in zip(d.fields, vals)})
        for p, pr in attached:
            if p in held and pr.clock > max(held[p]):
                self.add(None, stream, "bound", pr.clock, producer=p)


def state_at(wb, streams: list[str], events: list[JournalEvent], q) -> dict:
    """Each stream's state after ``events`` (the journal up to the query's start), rebuilt by a
    catalog of its own and checked against the clocks the query started with."""
    c = Catalog()
    for s in streams:
        c.create_stream(s, wb.catalog.streams[s].fields)
    for e in events:
        if e.status in ("ok", "eclipsed"):
            c.apply(Event(e.stream, e.kind, e.time, e.values, e.strict, e.producer), e.step, {})
    for s in streams:
        want = q.start_clocks.get(s)
        if want is not None and c.state[s].bound != want:
            raise SaveError(f"cannot save query {q.name}: the journal of stream {s} does not give the clock "
                            f"{sqltime.format_timestamp(want)} it had when the query started")
    return {s: c.state[s] for s in streams}


# --------------------------------------------------------------------------- expected lines

#: the name ``streamsql replay`` gives the one query of a saved scenario (the first unnamed query
#: of a fresh workbench), which its calculator error messages start with
REPLAY_QUERY = "q1"
