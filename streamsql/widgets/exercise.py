"""A saved scenario as an exercise (``streamsql.exercise(NAME)``): the query and its events are
shown, the expected output is hidden; the student predicts the step that releases each output
row, then Check marks each prediction and shows the real step table.

Answers come from ``NAME.expected.jsonl`` (what the recorded query released); the step table
shown after Check comes from replaying the scenario on the local runtime.
"""
from __future__ import annotations

import html

import ipywidgets as widgets

from ..engine import time as sqltime
from ..engine.errors import StreamSqlError
from ..engine.types import format_value
from ..engine.steps import event_text
from .render import html_lines, html_table, text_table
from .scenario import Scenario, ScenarioPlayer
from .form import ClickForm
from .static import StaticMixin, snapshot_html

QUESTION = "released at step?"


def _time(text: str) -> str:
    return sqltime.format_time_of_day(sqltime.parse_timestamp(text))


def _event_cell(ev) -> str:
    return event_text(ev)


class Exercise(StaticMixin, widgets.VBox):
    """One input per expected output row ("released at step?"), a Check button, the marks."""

    def __init__(self, scenario, *, engine: str = "local"):
        self.scenario = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
        self.engine = engine
        exp = self.scenario.expected
        if exp is None:
            raise StreamSqlError(f"scenario {self.scenario.name} has no expected output "
                                 f"({self.scenario.name}.expected.jsonl) to check predictions against")
        #: the output rows to predict, in release order, and the step that released each
        self.rows = [e for e in exp if "rowtime" in e and "values" in e]
        self.answers = [int(e["step"]) for e in self.rows]
        if not self.rows:
            raise StreamSqlError(f"scenario {self.scenario.name} releases no rows: nothing to predict")
        self.marks: list[bool | None] | None = None
        self.step_rows: list[list[str]] | None = None
        # the answers and Check: a form whose click carries the answers as they are on screen
        self.form = ClickForm(
            fields=[{"name": f"a{i}", "label": f"{self.row_text(i)}  {QUESTION}", "placeholder": "step",
                     "width": "6em", "enter": "check"} for i in range(len(self.rows))],
            buttons=[{"name": "check", "label": "Check", "primary": True}],
            on_click=self._clicked, stacked=True)
        self.inputs = [self.form.field(f"a{i}") for i in range(len(self.rows))]
        self.result = widgets.HTML()
        head = widgets.HTML(
            f"<b>Exercise {html.escape(self.scenario.name)}</b>: the query below reads the events of the table; "
            "for each row it releases, predict the step (the event) that releases it."
            f"<pre>{html.escape(self.scenario.sql.strip())}</pre>"
            + html_table(self.events_table()[0], self.events_table()[1:], "streamsql-exercise-events",
                         caption="Events"))
        super().__init__([head, widgets.HTML("<b>Output rows</b>"), self.form, self.result])
        self.add_class("streamsql-exercise")

    # ------------------------------------------------------------------ content

    def streams(self) -> list[str]:
        """The streams of the scenario, in order of their first event."""
        return list(dict.fromkeys(ev.stream for ev in self.scenario.events))

    def events_table(self) -> list[list[str]]:
        """Header, then one row per event: its step and what it is, under its stream."""
        streams = self.streams()
        rows = [["Step"] + streams]
        for i, ev in enumerate(self.scenario.events, 1):
            cells = [""] * len(streams)
            cells[streams.index(ev.stream)] = _event_cell(ev)
            rows.append([str(i)] + cells)
        return rows

    def row_text(self, i: int) -> str:
        """Output row ``i`` as the form shows it (rowtime and values)."""
        e = self.rows[i]
        vals = ", ".join(f"{k}={format_value(v)}" for k, v in e["values"].items())
        return f"{i + 1}. {_time(e['rowtime'])} {vals}"

    # ------------------------------------------------------------------ checking

    def predictions(self) -> list[int | None]:
        """The student's predicted step of each output row (None where left blank or not a number)."""
        out = []
        for w in self.inputs:
            t = str(w.value).strip()
            out.append(int(t) if t.isdigit() else None)
        return out

    def _clicked(self, _name: str, values: dict) -> None:
        """Check, with the answers the click carried."""
        self.form.values = {**self.form.values, **values}
        self.check()

    def predict(self, steps: list[int | None]) -> "Exercise":
        """Fill the inputs (as a student would type them)."""
        for w, s in zip(self.inputs, steps):
            w.value = "" if s is None else str(s)
        return self

    def check(self) -> list[bool | None]:
        """Mark each prediction (None: no answer), show the marks and the real step table."""
        preds = self.predictions()
        self.marks = [None if p is None else p == a for p, a in zip(preds, self.answers)]
        if self.step_rows is None:
            player = ScenarioPlayer(self.scenario, engine=self.engine)
            try:
                self.step_rows = player.goto(player.total).step_table()
            finally:
                player.close()
        right = sum(1 for m in self.marks if m)
        header = ["Row", "Your step", "Released at", ""]
        rows = [[self.row_text(i), "" if p is None else str(p), str(a),
                 "right" if m else "no answer" if m is None else "wrong"]
                for i, (p, a, m) in enumerate(zip(preds, self.answers, self.marks))]
        classes = ["streamsql-right" if m else "streamsql-wrong" for m in self.marks]
        self.result.value = (
            f"<b>{right} of {len(self.answers)} right</b>"
            + html_table(header, rows, "streamsql-exercise-marks", row_classes=classes)
            + html_table(self.step_rows[0], self.step_rows[1:], "streamsql-step-table", caption="The real steps"))
        self.form.marks = {f"a{i}": ("good" if m else "bad") for i, m in enumerate(self.marks) if m is not None}
        return self.marks

    # ------------------------------------------------------------------ display

    def text(self) -> str:
        """The exercise as plain text (query, events by step, the rows to place)."""
        t = self.events_table()
        parts = [f"Exercise {self.scenario.name}: predict the step that releases each output row.",
                 self.scenario.sql.strip(), "", "Events:", text_table(t[0], t[1:]), "", "Output rows:"]
        parts += [f"{self.row_text(i)}  {QUESTION} {w.value or '_'}" for i, w in enumerate(self.inputs)]
        if self.marks is not None:
            right = sum(1 for m in self.marks if m)
            parts += ["", f"{right} of {len(self.answers)} right", text_table(self.step_rows[0], self.step_rows[1:])]
        return "\n".join(parts)


    def static_html(self) -> str:
        """The exercise as a static snapshot: the query, the events, the predictions and, once
        checked, the marks and the real steps."""
        t = self.events_table()
        parts = [f"<pre>{html.escape(self.scenario.sql.strip())}</pre>",
                 html_table(t[0], t[1:], "streamsql-step-table", caption="Events"),
                 html_lines([f"{self.row_text(i)}  {QUESTION} {w.value or '_'}" for i, w in enumerate(self.inputs)],
                            "streamsql-exercise-rows")]
        if self.marks is not None:
            parts.append(self.result.value)
        return snapshot_html(parts, f"Exercise {self.scenario.name}")

    def static_key(self):
        return tuple(w.value for w in self.inputs), tuple(self.marks or ())


def exercise(name, *, engine: str = "local") -> Exercise:
    """Open the saved scenario ``name`` (``NAME`` of ``NAME.sql``, ``NAME.events.jsonl`` and
    ``NAME.expected.jsonl``) as an exercise with its output hidden."""
    return Exercise(name, engine=engine)
