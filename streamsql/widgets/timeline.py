"""The timeline of a query: one lane per input stream, per stateful operator (an operator with
several inputs, a join or a union, also gets one lane per input: the clock it has for that
input and the rows it keeps) and for the output, time across. Rows by rowtime, each stream's
clock, the bounds it received (eclipsed ones grey, backwards ones refused), late rows, rows a
stream holds back for a slower producer, open windows (join windows, aggregation periods, OVER
frames) as intervals, released and held output rows, and for each held row the clock it waits
for. Every event mark carries its step number (the step table's Step), drawn beside it and
again on a step axis under the chart; marks at the same place are spread apart; many loaded
rows are drawn binned. Rows refused for a calculator error are marked like late rows, on
their stream's lane, with the message in the tooltip.

:func:`.timeline_data.timeline_records` is the data (plain dicts, also what tests check),
:mod:`.timeline_labels` places its step labels, :func:`.timeline_spec.timeline_chart` draws it with
Altair; :class:`TimelineView` here keeps the drawing current as the query runs."""
from __future__ import annotations

import altair as alt
import ipywidgets as widgets

from . import vega
from .hooks import LiveView
from .live import query_key, settled
from .static import StaticMixin, snapshot_html, spec_html
from .timeline_spec import ZOOM, chart_for, chart_layout, scrub_record, timeline_chart, timeline_summary
from .timeline_data import drawn, timeline_records


class TimelineView(LiveView, StaticMixin, widgets.VBox):
    """The timeline chart of a query, live: the chart is drawn once in the browser
    (a ``VegaView`` of ``streamsql.widgets.vega``) and then given new data as the query runs,
    so zoom, pan and brushed steps stay put; a new shape (a lane, a kind of mark) redraws it."""

    priority = 6
    #: a click's Spark micro-batches and row tables first (``Redrawer`` in ``widgets/hooks.py``)
    waits_for_quiet = True

    def __init__(self, q, width: int = 640, scrubber=None):
        """``scrubber``: a :class:`~streamsql.widgets.scrubber.StepScrubber` to show under the
        chart (as ``%streamsql timeline`` does); the chart marks its step."""
        self.q = q
        self.width = width
        self.view = vega.VegaView(kept=[ZOOM])        # a new shape keeps the user's zoom
        self.scrubber = scrubber
        self._layout_shown = None
        self._spec_cache: tuple | None = None       # (layout, the chart's spec with named data)
        super().__init__([self.view] + ([self.scrubber] if self.scrubber is not None else []))
        if self.scrubber is not None:
            self.scrubber.slider.observe(lambda _c: self.mark(), names="value")
        self.add_class("streamsql-timeline")
        self.follow(queries=[q], wb=q.wb)
        self.redraw_if_changed()    # the first drawing

    def chart(self) -> alt.VConcatChart:
        """The timeline as an Altair chart (:func:`timeline_chart` of this view's query), with the
        step scrubber's step marked when the scrubber is not at the last step."""
        return timeline_chart(self.q, self.width, self.marked_step())

    def marked_step(self) -> int | None:
        """The step a scrubber shows (its own, or the workbench's), when not the last one."""
        s = self.scrubber or getattr(self, "linked_scrubber", None)
        return None if s is None else s.marked_step()

    def spec(self) -> dict:
        """The chart's Vega-Lite spec (schema v5)."""
        return vega.spec_of(self.chart())

    def _spec_for(self, layout: tuple) -> dict:
        """The chart's spec for a shape, over the named data source: Altair builds it once per
        shape (a few hundred milliseconds of the kernel's CPU), the live chart and the snapshots
        then only change its data."""
        cached = self._spec_cache
        if cached is None or cached[0] != layout:
            cached = self._spec_cache = (layout, vega.spec_of(chart_for(f"Timeline of query {self.q.name}", *layout,
                                                                      self.width, alt.Data(name=vega.DATA))))
        return cached[1]

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order: the live chart's spec with
        its data inline (the same drawing as :meth:`chart`'s)."""
        lanes, recs = timeline_records(self.q, width=self.width)
        spec = dict(self._spec_for(chart_layout(self.q, lanes, recs)))
        spec["data"] = {"values": drawn(recs) + scrub_record(self.marked_step())}
        return [spec_html(spec)]

    def static_key(self):
        return query_key(self.q)

    def static_queries(self) -> list:
        return [self.q]

    def live_key(self):
        return self.static_key() + (self.marked_step(),)

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        return snapshot_html(self.static_parts(), f"Timeline of query {self.q.name}")

    def refresh(self) -> None:
        """Give the chart the query's current data (a new spec only when its shape changed)."""
        lanes, recs = timeline_records(self.q, width=self.width)
        layout = chart_layout(self.q, lanes, recs)
        values = drawn(recs) + scrub_record(self.marked_step())
        if layout != self._layout_shown:
            spec = self._spec_for(layout)
            self.view.show(spec, values)
            self._layout_shown = layout
        else:
            self.view.values = values
        self.view.summary = timeline_summary(self.q)

    def bundle_settle(self) -> None:
        settled(self.q)
        self.refresh()

    def bundle_extra(self) -> dict:
        return vega.bundle(self.chart(), timeline_summary(self.q))

    def bundle_text(self) -> None:
        return None            # the chart's summary (vega.bundle's text/plain)
