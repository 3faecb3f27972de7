"""ipywidgets and Altair views over the engine: a query's live rows, injectors, the timeline, the
step table, scenario stepping, and :func:`workbench`, which composes them.

Every view redraws itself when its query releases rows or an event is injected, and displays
as a live widget in JupyterLab with a deterministic ``text/plain`` form (and the timeline's
Vega-Lite spec) for nbval and plain terminals, beside a static HTML snapshot (tables, the
timeline as SVG) for wherever no kernel runs it (:mod:`streamsql.widgets.static`).
"""
from .compose import ScenarioView, WorkbenchView, workbench
from .exercise import Exercise, exercise
from .injector import Injector
from .live import QueryView
from .scenario import Scenario, ScenarioPlayer
from .scrubber import StepScrubber, StepState
from .startup import StartupView
from .openstate import held_rows
from .steps import StepTable, query_step_table
from .timeline import TimelineView, timeline_chart, timeline_records
from .vega import enable_altair

#: the old name of :class:`TimelineView`, kept for notebooks that use it
Timeline = TimelineView

__all__ = ["workbench", "exercise", "Exercise", "WorkbenchView", "ScenarioView", "Injector", "QueryView", "Scenario", "ScenarioPlayer",
           "StepTable", "TimelineView", "Timeline", "timeline_chart", "timeline_records", "query_step_table",
           "held_rows", "enable_altair", "StartupView", "StepScrubber", "StepState"]
