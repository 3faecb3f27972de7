"""Altair charts as Vega-Lite 5 mime bundles, the version JupyterLab 4 renders by itself.

Altair 6's mimetype renderer emits ``application/vnd.vegalite.v6.json``, which JupyterLab 4.x
does not render, and its default HTML renderer loads Vega from a CDN into a randomly named div
(neither offline nor deterministic). Our charts use only Vega-Lite 5 features, so the spec is
handed to JupyterLab's built-in renderer under the v5 mimetype: offline, and byte-identical for
identical data (what nbval compares).
"""
from __future__ import annotations

import altair as alt

MIMETYPE = "application/vnd.vegalite.v5+json"
SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
RENDERER = "streamsql"


def spec_of(chart: alt.TopLevelMixin) -> dict:
    """The chart's Vega-Lite spec, with the v5 schema JupyterLab's renderer expects."""
    spec = chart.to_dict()
    spec["$schema"] = SCHEMA
    return spec


def bundle(chart: alt.TopLevelMixin, text: str = "<Vega-Lite chart>") -> dict:
    return {MIMETYPE: spec_of(chart), "text/plain": text}


def _renderer(spec: dict, **_metadata):
    spec = dict(spec)
    spec["$schema"] = SCHEMA
    return {MIMETYPE: spec, "text/plain": "<Vega-Lite chart>"}, {}


def enable_altair() -> None:
    """Make every Altair chart render through JupyterLab's built-in Vega-Lite 5 renderer."""
    if RENDERER not in alt.renderers.names():
        alt.renderers.register(RENDERER, _renderer)
    alt.renderers.enable(RENDERER)
