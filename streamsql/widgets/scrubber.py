"""The step scrubber: a query as it was after step *k*, from what the engine kept (the
query's typed trace history, the workbench's event records and the released rows), so moving
the slider changes nothing in the query. Shown: the event of step *k*, the rows released up to
it (those of step *k* marked), each input stream's clock, the output bound, the rows the
operators held and what each waited for, and what was still open (groups, frames, kept rows)."""
from __future__ import annotations

import bisect
import html
import ipywidgets as widgets

from ..engine.steps import describe_event
from ..engine.types import format_value
from .hooks import LiveView
from .live import bound_at, snapshot
from .openstate import HEADER as OPEN_HEADER, open_state_rows
from .render import html_lines, html_table, text_table, ts
from .openstate import held_rows
from .steps import event_outcomes


def trace_at(q, step: int):
    """The query's step record for ``step``: the last one at or before it (None when the trace
    history does not reach back that far)."""
    trace = getattr(q, "trace", None)
    if not trace:
        return None
    steps = trace.steps()
    i = bisect.bisect_right(steps, step) - 1
    return trace[i] if i >= 0 else None


def scrub_steps(q) -> list[int]:
    """The steps the scrubber offers: the events on the query's own input streams since it
    started (late and refused ones too: they are part of its story), up to the last one the
    query has traced (or every one, once it caught up with them), and no further back than its
    trace history reaches (``trace_steps``)."""
    steps = [r["step"] for r in q.wb.traced_events(q.start_step, q.plan.streams)]
    trace = getattr(q, "trace", None)
    traced = trace.steps() if trace else []
    if traced and trace.limit and len(traced) >= trace.limit:
        steps = [s for s in steps if s >= traced[0]]          # older records were dropped
    if not q.running or q.wb.runtime.caught_up(q):
        return steps
    last = traced[-1] if traced else q.start_step
    return [s for s in steps if s <= last]


class StepState:
    """What :class:`StepScrubber` shows for one step, as data (its text and HTML are made from it)."""

    def __init__(self, q, step: int, limit: int = 20):
        self.step = step
        outcomes = event_outcomes(q.wb, step - 1, None)
        mine = [o for o in outcomes if o.step == step]
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
        for r in q.wb.traced_events(q.start_step, q.plan.streams):
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


class StepScrubber(LiveView, widgets.VBox):
    """A slider (with previous/next buttons; arrow keys move a focused slider) over the steps of
    the query's input streams, and where it is (:meth:`position`); below it, the query as it was
    after the chosen step. At the last step it follows the query as each step is traced, and
    redraws at every one; elsewhere it holds its step."""

    priority = 4

    def __init__(self, q, limit: int = 20):
        self.q = q
        self.limit = limit
        self.steps: list[int] = scrub_steps(q)
        self.slider = widgets.SelectionSlider(options=self._options(), description="step",
                                              continuous_update=True, layout=widgets.Layout(width="420px"))
        if self.steps:
            self.slider.value = self.steps[-1]
        self.prev = widgets.Button(description="", icon="chevron-left", tooltip="previous step",
                                   layout=widgets.Layout(width="48px"))
        self.next = widgets.Button(description="", icon="chevron-right", tooltip="next step",
                                   layout=widgets.Layout(width="48px"))
        self.prev.add_class("streamsql-prev")
        self.next.add_class("streamsql-next")
        self.prev.on_click(lambda _b: self.move(-1))
        self.next.on_click(lambda _b: self.move(1))
        self.panel = widgets.HTML()
        self.where = widgets.HTML()          # "step 6 of 13 · following" / "· held at step 6"
        self.where.add_class("streamsql-scrub-where")
        self.slider.observe(lambda _c: self.show(), names="value")
        self.panel_box = widgets.Box([self.panel], layout=widgets.Layout(overflow="auto"))
        super().__init__([widgets.HBox([self.prev, self.slider, self.next, self.where],
                                       layout=widgets.Layout(align_items="center")), self.panel_box])
        self.add_class("streamsql-scrubber")
        self.follow(queries=[q], wb=q.wb)
        self.show()

    def _options(self) -> list[tuple[str, int]]:
        return [(str(s), s) for s in self.steps] or [("none", 0)]

    @property
    def first(self) -> int | None:
        """The earliest step it can show (None before any)."""
        return self.steps[0] if self.steps else None

    @property
    def last(self) -> int | None:
        """The latest step it can show: the last one traced."""
        return self.steps[-1] if self.steps else None

    def at_end(self) -> bool:
        """Whether it shows the latest step (then it follows new ones)."""
        return not self.steps or self.slider.value == self.steps[-1]

    def marked_step(self) -> int | None:
        """The step shown, when it is not the last one (the step table and timeline mark it)."""
        return None if self.at_end() else self.slider.value

    def move(self, by: int) -> None:
        """Move ``by`` steps (the buttons), within the query's steps."""
        if not self.steps:
            return
        i = self.steps.index(self.slider.value) if self.slider.value in self.steps else len(self.steps) - 1
        self.slider.value = self.steps[max(0, min(len(self.steps) - 1, i + by))]

    def live_key(self):
        trace = getattr(self.q, "trace", None)
        steps = trace.steps() if trace else []
        return (self.q.wb.last_step, self.q.processed_step, self.q.row_count, self.q.running,
                steps[-1] if steps else None, self.slider.value)

    def refresh(self) -> None:
        """Follow the query: see :meth:`extend`."""
        self.extend()

    def extend(self) -> None:
        """New steps traced: the slider reaches them, and follows them when it was at the end;
        the panel is redrawn either way (the step shown may have been traced only now)."""
        steps = scrub_steps(self.q)
        if steps != self.steps:
            follow = self.at_end()
            value = self.slider.value
            self.steps = steps
            self.slider.options = self._options()
            if steps:
                self.slider.value = steps[-1] if follow or value not in steps else value
        self.show()

    def position(self) -> str:
        """Where the slider is: ``step 6 of 13 · following`` at the last step (it moves on with the
        query), else ``step 6 of 13 · held at step 6`` (it stays there as the query goes on)."""
        if not self.steps:
            return "no steps yet · following"
        k, n = self.slider.value, self.steps[-1]
        return f"step {k} of {n} · " + ("following" if self.at_end() else f"held at step {k}")

    def state(self) -> StepState | None:
        """What the panel shows, as data (None before any event since the query started)."""
        return StepState(self.q, self.slider.value, self.limit) if self.steps else None

    def show(self) -> None:
        """Redraw the panel for the slider's step."""
        self.where.value = (f'<span style="font-family:monospace;font-size:12px;margin-left:8px;'
                            f'white-space:nowrap">{html.escape(self.position())}</span>')
        st = self.state()
        self.panel.value = st.html() if st is not None else html.escape("(no events since the query started)")

    def text(self) -> str:
        """The position and the panel as plain text."""
        st = self.state()
        return self.position() + "\n" + (st.text() if st is not None else "(no events since the query started)")
