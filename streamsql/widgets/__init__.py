"""ipywidgets and Altair views over the engine: a query's live rows, injectors, the timeline, the
step table, scenario stepping, and :func:`workbench`, which composes them.

Every view redraws itself when its query releases rows or an event is injected, and displays
as a live widget in JupyterLab with a deterministic ``text/plain`` form (and the timeline's
Vega-Lite spec) for nbval and plain terminals, beside a static HTML snapshot (tables, the
timeline as SVG) for wherever no kernel runs it (:mod:`streamsql.widgets.static`).

The names below are imported when first used: Altair (the slowest of the imports) loads with
the first timeline, not with ``%load_ext streamsql`` or a query's rows.
"""
from importlib import import_module

_LAZY = {
    "workbench": "compose", "WorkbenchView": "compose", "ScenarioView": "compose",
    "exercise": "exercise", "Exercise": "exercise", "Injector": "injector", "QueryView": "live",
    "Scenario": "scenario", "ScenarioPlayer": "scenario", "StepScrubber": "scrubber", "StepState": "scrubber",
    "StartupView": "startup", "held_rows": "openstate", "StepTable": "steps", "query_step_table": "steps",
    "TimelineView": "timeline", "timeline_chart": "timeline_spec", "timeline_records": "timeline_data",
    "enable_altair": "vegalite",
}

__all__ = ["workbench", "exercise", "Exercise", "WorkbenchView", "ScenarioView", "Injector", "QueryView", "Scenario", "ScenarioPlayer",
           "StepTable", "TimelineView", "timeline_chart", "timeline_records", "query_step_table",
           "held_rows", "enable_altair", "StartupView", "StepScrubber", "StepState"]


def __getattr__(name):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'streamsql.widgets' has no attribute {name!r}")
    module = import_module(f".{where}", __name__)
    value = getattr(module, name)
    globals()[name] = value
    if _LAZY.get(where) == where:       # importing ``exercise`` set the name to the submodule: the function
        globals()[where] = getattr(module, where)
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
