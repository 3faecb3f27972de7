"""A query beside its native Spark twin, step by step: the rows this query released
and the rows plain Spark Structured Streaming emitted (with their micro-batch), Spark's
watermark after each step, the rows Spark dropped as late, and for each row released at
different steps one line on why. It renders the engine's typed
:class:`~streamsql.engine.native.Comparison`; nothing here decides anything."""
from __future__ import annotations

import ipywidgets as widgets

from ..engine.native import Comparison, delay_text
from .render import html_lines, html_table, short, text_table
from .static import StaticMixin, snapshot_html

STEP_HEADER = ["Step", "Event", "This query released", "Spark emitted (batch)", "Spark watermark after",
               "Spark dropped"]
#: steps where the two sides released different rows are tinted, a row Spark dropped more so
STYLE = ("<style>.streamsql-native-steps tr.differs td{background:#fff3c4}"
         ".streamsql-native-steps tr.dropped td{background:#fde0dd}</style>")
#: (under a step whose rows differ, a row across the table says why: ``tr.note``)


def step_rows(c: Comparison) -> list[list[str]]:
    """One row per step of the side-by-side table."""
    out = []
    for s in c.steps:
        ours = "; ".join(c.row_text(r) for r in s.ours)
        spark = "; ".join(f"{c.row_text(r)} (batch {r.batch})" for r in s.spark)
        event = s.event + (" (late: to ERRORS)" if s.late_here else "")
        out.append([str(s.step), event, ours, spark, short(s.watermark), "the row, as late" if s.dropped else ""])
    return out


def diff_rows(c: Comparison) -> list[list[str]]:
    """One row per output row released at different steps (or by one side only)."""
    return [[c.row_text(r), "-" if r.ours is None else str(r.ours), "-" if r.spark is None else str(r.spark), r.why]
            for r in c.differing]


def why_notes(c: Comparison) -> dict[int, list[str]]:
    """The why-lines by the index of the step row they go under: the first step at which either
    side released the row (where the step table first differs for it)."""
    index = {s.step: i for i, s in enumerate(c.steps)}
    out: dict[int, list[str]] = {}
    for r in c.differing:
        first = min(x for x in (r.ours, r.spark) if x is not None)
        here = "-" if r.ours is None else f"step {r.ours}"
        spark = "-" if r.spark is None else f"step {r.spark}"
        out.setdefault(index.get(first, len(c.steps) - 1), []).append(
            f"Why {c.row_text(r)} (this query: {here}, Spark: {spark}): {r.why}")
    return out


def why_lines(c: Comparison) -> list[str]:
    """One line per row released at different steps: the row, both steps, why."""
    return [f"- {row} (this query: step {here}, Spark: step {spark}): {why}" for row, here, spark, why in diff_rows(c)]


def title(c: Comparison) -> str:
    return f"Query {c.query} beside its native Spark twin (watermark delay {delay_text(c.delay_ms)})"


def summary(c: Comparison) -> str:
    n = len(c.differing)
    same = sum(1 for r in c.rows if not r.why)
    return (f"{same} row{'s' if same != 1 else ''} released at the same step, "
            f"{n} at different steps or by one side only")


def _differs(s) -> bool:
    """Whether the two sides released different rows at this step."""
    return sorted((r.rowtime, repr(r.values)) for r in s.ours) != sorted((r.rowtime, repr(r.values)) for r in s.spark)


class NativeView(StaticMixin, widgets.VBox):
    """The side-by-side view of a :class:`~streamsql.engine.twin.NativeTwin` (``q.native()``),
    as it was when the view was made (``%streamsql native NAME`` again brings it up to date)."""

    def __init__(self, twin):
        self.twin = twin
        self.comparison = twin.comparison
        self.html = widgets.HTML(self._html())
        super().__init__([self.html])
        self.add_class("streamsql-native")

    def _parts(self, head: bool = True) -> list[str]:
        c = self.comparison
        marks = ["dropped" if s.dropped else "differs" if _differs(s) else "" for s in c.steps]
        # each row released at different steps is explained under the step where it first shows
        return [html_lines(([title(c)] if head else []) + [summary(c)], "streamsql-native-title"),
                STYLE + html_table(STEP_HEADER, step_rows(c), "streamsql-native-steps", caption="Step by step",
                                   row_classes=marks, notes=why_notes(c))]

    def _html(self) -> str:
        return "".join(self._parts())

    def text(self) -> str:
        """The view as plain text (terminals, nbval)."""
        c = self.comparison
        out = [title(c), summary(c), "", text_table(STEP_HEADER, step_rows(c))]
        if c.differing:
            out += ["", "Rows released at different steps, and why:"] + why_lines(c)
        return "\n".join(out)

    def static_key(self):
        return (len(self.twin.steps), id(self.comparison))

    def static_html(self) -> str:
        return snapshot_html(self._parts(head=False), title(self.comparison))
