"""The seed's step table (Step | input streams | Output) and the table of held rows, for a query
watched live (events come from ``Workbench.event_trace``) or a scenario being stepped through."""
from __future__ import annotations

import threading

import ipywidgets as widgets

from ..engine.catalog import Event, Outcome
from ..engine.trace import step_table
from ..engine.types import format_value
from .hooks import Debounced, on_inject, weak_method
from .live import snapshot
from .render import html_table, text_table, ts


def event_outcomes(wb, after: int = 0, streams: list[str] | None = None) -> list[Outcome]:
    """The outcomes of the events after step ``after`` (on ``streams``), rebuilt from the
    workbench's event trace (``inject`` returns them, but events come from many places)."""
    keep = set(streams) if streams is not None else None
    out = []
    for r in list(wb.event_trace):
        if r["step"] <= after or (keep is not None and r["stream"] not in keep):
            continue
        ev = Event(r["stream"], r["kind"], r["rowtime"], r["values"], strict=r["strict"], producer=r["producer"])
        out.append(Outcome(r["step"], ev, r["status"], r["message"], clock=r["clock"],
                           bound_before=r["bound_before"], bound_after=r["bound_after"],
                           released=r["released"]))
    return out


def query_step_table(q, *, base: int = 0, outcomes: list[Outcome] | None = None,
                     streams: list[str] | None = None) -> list[list[str]]:
    """Header row then one row per step since the query started: what each input stream got
    and the rows the query released at that step."""
    if outcomes is None:
        outcomes = event_outcomes(q.wb, q.start_seq, q.plan.streams)
    return step_table(snapshot(q), outcomes, base, streams or list(q.plan.streams))


def held_rows(q) -> list[dict]:
    """Rows the query's operators hold after the last traced step, each with what it waits for
    (``ContinuousQuery.trace``: ``waits`` the typed records, ``waits_for`` in words)."""
    if not q.trace:
        return []
    ops = q.trace[-1].operators
    out = []
    for i, op in enumerate(ops):
        for h in op.held:
            out.append({"operator": op.operator, "index": i, "root": i == len(ops) - 1,
                        "rowtime": h.rowtime, "values": list(h.values), "waits": h.waits,
                        "waits_for": h.waits_for})
    return out


def held_count(q) -> int:
    """How many rows the query's operators hold in all (the trace lists only the earliest)."""
    if not q.trace:
        return 0
    return sum(op.held_count for op in q.trace[-1].operators)


def held_table(q) -> list[list[str]]:
    rows = []
    for h in held_rows(q):
        rows.append([h["operator"], ts(h["rowtime"]), ", ".join(format_value(v) for v in h["values"]),
                     "; ".join(h["waits_for"])])
    return rows


HELD_HEADER = ["Operator", "ROWTIME", "Row", "Waits for"]


class StepTable(widgets.VBox):
    """The step table of a query (``limit``: only the last steps), kept current as it runs.
    ``player`` (a :class:`~streamsql.widgets.scenario.ScenarioPlayer`) numbers steps by the
    scenario's event lines and names streams as its file does."""

    def __init__(self, q, *, limit: int | None = None, base: int = 0, player=None):
        self.q = q
        self.limit = limit
        self.base = base
        self.player = player
        self.steps_html = widgets.HTML()
        self.held_html = widgets.HTML()
        super().__init__([self.steps_html, self.held_html])
        self.add_class("streamsql-steps")
        self._lock = threading.Lock()
        self._later = Debounced(weak_method(self.refresh))
        q.on_release(self._later.trigger)
        on_inject(q.wb, self._later.trigger)
        self.refresh()

    def rows(self) -> list[list[str]]:
        if self.player is not None:
            t = self.player.step_table()
        else:
            t = query_step_table(self.q, base=self.base)
        if self.limit and len(t) - 1 > self.limit:
            t = [t[0]] + t[-self.limit:]
        return t

    def text(self) -> str:
        t = self.rows()
        parts = [text_table(t[0], t[1:])]
        held = held_table(self.q)
        if held:
            parts += ["", self._held_caption(len(held)) + ":", text_table(HELD_HEADER, held)]
        return "\n".join(parts)

    def _held_caption(self, listed: int) -> str:
        n = held_count(self.q)
        return "Held rows" if n <= listed else f"Held rows ({n}; the earliest {listed} shown)"

    def refresh(self) -> None:
        with self._lock:
            t = self.rows()
            self.steps_html.value = html_table(t[0], t[1:], "streamsql-step-table",
                                               caption=f"Steps of query {self.q.name}")
            held = held_table(self.q)
            self.held_html.value = (html_table(HELD_HEADER, held, "streamsql-held",
                                               caption=self._held_caption(len(held))) if held else "")

    def _repr_mimebundle_(self, **kwargs):
        if self.q.running:
            try:
                self.q.wait(120)
            except Exception:
                pass
        self.refresh()
        data = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = self.text()
        return data

