"""The step scrubber: a query as it was after step *k* (issue 14), from what the engine kept (the
query's typed trace history, the workbench's event records and the released rows), so moving
the slider changes nothing in the query. Shown: the event of step *k*, the rows released up to
it (those of step *k* marked), each input stream's clock, the output bound, the rows the
operators held and what each waited for, and what was still open (groups, frames, kept rows)."""
from __future__ import annotations

import bisect
import html
import threading

import ipywidgets as widgets

from ..engine.trace import describe_event
from ..engine.types import format_value
from .hooks import Debounced, on_inject, weak_method
from .live import bound_at, snapshot
from .openstate import HEADER as OPEN_HEADER, open_state_rows
from .render import html_lines, html_table, text_table, ts
from .steps import event_outcomes, held_rows


def trace_at(q, step: int):
    """The query's step record for ``step``: the last one at or before it (None when the trace
    history does not reach back that far)."""
    trace = getattr(q, "trace", None)
    if not trace:
        return None
    steps = trace.steps()
    i = bisect.bisect_right(steps, step) - 1
    return trace[i] if i >= 0 else None


def traced_range(q) -> tuple[int, int] | None:
    """The first and last step the scrubber can show (the query's start to the last event)."""
    last = q.wb.last_seq
    first = q.start_seq + 1
    trace = getattr(q, "trace", None)
    if trace:
        steps = trace.steps()
        if steps and trace.limit and len(steps) >= trace.limit:
            first = max(first, steps[0])          # older records were dropped (``trace_steps``)
    return (first, last) if last >= first else None


class StepState:
    """What :class:`StepScrubber` shows for one step, as data (its text and HTML are made from it)."""

    def __init__(self, q, step: int, limit: int = 20):
        self.step = step
        outcomes = event_outcomes(q.wb, step - 1, None)
        mine = [o for o in outcomes if o.seq == step]
        self.event = f"{mine[0].event.stream} {describe_event(mine[0])}" if mine else "(another query's event)"
        snap = snapshot(q)
        released = [r for r in snap.rows if r.step <= step]
        self.released_count = len(released)
        self.rows = [[str(r.step), ts(r.rowtime)] + [format_value(v, f.type) for f, v in zip(snap.fields, r.values)]
                     for r in released[-limit:]] if limit else []
        self.row_classes = ["at-step" if r[0] == str(step) else "" for r in self.rows]
        self.header = ["STEP", "ROWTIME"] + list(q.columns)
        self.bound = bound_at(snap.bounds, step)
        clocks = {}
        for r in q.wb.traced_events(q.start_seq, q.plan.streams):
            if r["step"] > step:
                break
            if r["status"] in ("ok", "eclipsed"):
                clocks[r["stream"]] = r["bound_after"]
        self.clocks = [(s, clocks.get(s, q.start_clocks.get(s) if hasattr(q, "start_clocks") else None))
                       for s in q.plan.streams]
        rec = trace_at(q, step)
        self.traced = rec is not None
        self.held = [[h["operator"], ts(h["rowtime"]), ", ".join(format_value(v) for v in h["values"]),
                      "; ".join(h["waits_for"])] for h in (held_rows(q, rec) if rec is not None else [])]
        self.open = open_state_rows(q, rec) if rec is not None else []

    def lines(self) -> list[str]:
        """The heading lines: the step's event, the rows released so far, the clocks."""
        return [f"After step {self.step}: {self.event}",
                f"{self.released_count} row{'s' if self.released_count != 1 else ''} released up to here, "
                f"output bound {ts(self.bound)}",
                "Clocks: " + ", ".join(f"{s} {ts(c)}" for s, c in self.clocks)]

    def text(self) -> str:
        """The state as plain text (what a terminal prints)."""
        parts = self.lines()
        parts.append(text_table(self.header, self.rows) if self.rows else "(no rows released yet)")
        if not self.traced:
            parts.append("(the trace history does not reach back to this step)")
        if self.held:
            parts += ["Held", text_table(["OPERATOR", "ROWTIME", "VALUES", "WAITS FOR"], self.held)]
        if self.open:
            parts += ["Open", text_table(OPEN_HEADER, self.open)]
        return "\n".join(parts)

    def html(self) -> str:
        """The state as HTML (the scrubber's panel)."""
        out = [html_lines(self.lines(), "streamsql-scrub-status"),
               html_table(self.header, self.rows, "streamsql-scrub-rows", row_classes=self.row_classes)]
        if not self.traced:
            out.append("<div>(the trace history does not reach back to this step)</div>")
        if self.held:
            out.append(html_table(["OPERATOR", "ROWTIME", "VALUES", "WAITS FOR"], self.held, "streamsql-scrub-held",
                                  caption="Held, and what each waits for"))
        if self.open:
            out.append(html_table(OPEN_HEADER, self.open, "streamsql-scrub-open", caption="Open"))
        # rows released at this step stand out
        style = "<style>.streamsql-scrub-rows tr.at-step td{background:#fff3c4}</style>"
        return style + "".join(out)


class StepScrubber(widgets.VBox):
    """A slider (with previous/next buttons; arrow keys move a focused slider) over the steps since
    the query started; below it, the query as it was after the chosen step. At the last step it
    follows new events."""

    def __init__(self, q, limit: int = 20):
        self.q = q
        self.limit = limit
        rng = traced_range(q) or (0, 0)
        self.slider = widgets.IntSlider(value=rng[1], min=rng[0], max=max(rng), description="step",
                                        continuous_update=True, layout=widgets.Layout(width="420px"))
        self.prev = widgets.Button(description="", icon="chevron-left", tooltip="previous step",
                                   layout=widgets.Layout(width="48px"))
        self.next = widgets.Button(description="", icon="chevron-right", tooltip="next step",
                                   layout=widgets.Layout(width="48px"))
        self.prev.add_class("streamsql-prev")
        self.next.add_class("streamsql-next")
        self.prev.on_click(lambda _b: self.move(-1))
        self.next.on_click(lambda _b: self.move(1))
        self.panel = widgets.HTML()
        self.slider.observe(lambda _c: self.show(), names="value")
        super().__init__([widgets.HBox([self.prev, self.slider, self.next]), self.panel])
        self.add_class("streamsql-scrubber")
        self._lock = threading.Lock()
        self._later = Debounced(weak_method(self.extend))
        on_inject(q.wb, self._later.trigger)
        q.on_release(self._later.trigger)
        self.show()

    def move(self, by: int) -> None:
        """Move the slider ``by`` steps (the buttons), within its range."""
        self.slider.value = max(self.slider.min, min(self.slider.max, self.slider.value + by))

    def extend(self) -> None:
        """New events: the slider reaches them, and follows them when it was at the end."""
        rng = traced_range(self.q)
        if rng is None:
            return
        at_end = self.slider.value >= self.slider.max
        self.slider.max = max(rng[1], self.slider.min)
        self.slider.min = min(rng[0], self.slider.max)
        if at_end:
            self.slider.value = self.slider.max
        self.show()

    def state(self) -> StepState | None:
        """What the panel shows, as data (None before any event since the query started)."""
        return StepState(self.q, self.slider.value, self.limit) if traced_range(self.q) else None

    def show(self) -> None:
        """Redraw the panel for the slider's step."""
        with self._lock:
            st = self.state()
            self.panel.value = st.html() if st is not None else html.escape("(no events since the query started)")

    def text(self) -> str:
        """The panel as plain text."""
        st = self.state()
        return st.text() if st is not None else "(no events since the query started)"
