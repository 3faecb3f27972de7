"""The seed's step table (Step | input streams | Output) and the table of held rows, for a query
watched live (events come from ``Workbench.event_trace``) or a scenario being stepped through."""
from __future__ import annotations

import ipywidgets as widgets

from ..engine.catalog import Event, Outcome
from ..engine.steps import step_table
from .hooks import LiveView
from .live import query_key, settled, snapshot
from .openstate import HELD_HEADER, held_count, held_table
from .render import html_table, text_table
from .static import StaticMixin, snapshot_html


def event_outcomes(wb, after: int = 0, streams: list[str] | None = None, last: int | None = None) -> list[Outcome]:
    """The outcomes of the events after step ``after`` (on ``streams``; only the ``last`` ones
    when given), rebuilt from the workbench's event trace, bulk loads included (``inject``
    returns them, but events come from many places)."""
    out = []
    for r in wb.traced_events(after, streams, last):
        ev = Event(r["stream"], r["kind"], r["rowtime"], r["values"], strict=r["strict"], producer=r["producer"])
        out.append(Outcome(r["step"], ev, r["status"], r["message"], clock=r["clock"],
                           bound_before=r["bound_before"], bound_after=r["bound_after"],
                           released=r["released"]))
    return out


def query_step_table(q, *, base: int = 0, outcomes: list[Outcome] | None = None,
                     streams: list[str] | None = None, last: int | None = None) -> list[list[str]]:
    """Header row then one row per step since the query started: what each input stream got
    and the rows the query released at that step (``last``: the input events considered are
    the last ones, so a million loaded events are not all turned into rows)."""
    if outcomes is None:
        outcomes = event_outcomes(q.wb, q.start_step, q.plan.streams, last)
    return step_table(snapshot(q), outcomes, base, streams or list(q.plan.streams))


class StepTable(LiveView, StaticMixin, widgets.VBox):
    """The step table of a query (``limit``: only the last steps), kept current as it runs.
    ``player`` (a :class:`~streamsql.widgets.scenario.ScenarioPlayer`) numbers steps by the
    scenario's event lines and names streams as its file does."""

    priority = 3

    def __init__(self, q, *, limit: int | None = None, base: int = 0, player=None, scrubber=None):
        """``scrubber``: a :class:`~streamsql.widgets.scrubber.StepScrubber` to show under the
        table (as ``%streamsql steps`` does); the table marks its step."""
        self.q = q
        self.limit = limit
        self.base = base
        self.player = player
        self.steps_html = widgets.HTML()
        self.held_html = widgets.HTML()
        self.highlight: int | None = None     # a step the scrubber shows (marked in the live table)
        self.sticky = False                   # the live table's header stays in sight (the workbench's box scrolls)
        self.scrubber = scrubber
        children = [self.steps_html, self.held_html]
        if scrubber is not None:
            self.scrubber.slider.observe(lambda _c: self.highlight_step(self.scrubber.marked_step()), names="value")
            children.append(self.scrubber)
        super().__init__(children)
        self.add_class("streamsql-steps")
        self.follow(queries=[q], wb=q.wb)
        self.redraw_if_changed()    # the first drawing

    def rows(self) -> list[list[str]]:
        """The step table: a header row, then one row per step."""
        if self.player is not None:
            t = self.player.step_table()
        else:
            t = query_step_table(self.q, base=self.base, last=self.limit)
        if self.limit and len(t) - 1 > self.limit:
            t = [t[0]] + t[-self.limit:]
        return t

    def text(self) -> str:
        """The step table and the held rows as plain text."""
        t = self.rows()
        parts = [text_table(t[0], t[1:])]
        held = held_table(self.q)
        if held:
            parts += ["", self._held_caption(len(held)) + ":", text_table(HELD_HEADER, held)]
        return "\n".join(parts)

    def _held_caption(self, listed: int) -> str:
        n = held_count(self.q)
        return "Held rows" if n <= listed else f"Held rows ({n}; the earliest {listed} shown)"

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order."""
        t = self.rows()
        held = held_table(self.q)
        return [html_table(t[0], t[1:], "streamsql-step-table", caption=f"Steps of query {self.q.name}"),
                html_table(HELD_HEADER, held, "streamsql-held", caption=self._held_caption(len(held))) if held else ""]

    def static_key(self):
        return query_key(self.q) + ((self.player.pos,) if self.player is not None else ())

    def static_queries(self) -> list:
        return [self.q]

    def live_key(self):
        return self.static_key() + (self.highlight,)

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        return snapshot_html(self.static_parts(), f"Steps of query {self.q.name}")

    def highlight_step(self, step: int | None) -> None:
        """Mark the row of ``step`` (the step scrubber's); the static snapshot is not marked."""
        self.highlight = step
        self.mark()

    def refresh(self) -> None:
        """Redraw from the query's current state."""
        steps, held = self.static_parts()
        if self.highlight is not None or self.sticky:
            t = self.rows()
            marks = ["at-step" if self.highlight is not None and r and r[0] == str(self.highlight - self.base) else ""
                     for r in t[1:]]
            steps = ("<style>.streamsql-step-table tr.at-step td{background:#fff3c4}</style>"
                     + html_table(t[0], t[1:], "streamsql-step-table", caption=f"Steps of query {self.q.name}",
                                  row_classes=marks, sticky=self.sticky))
        with self.hold_sync():
            self.steps_html.value, self.held_html.value = steps, held

    def bundle_settle(self) -> None:
        settled(self.q)
        self.refresh()

