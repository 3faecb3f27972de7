"""Altair charts as Vega-Lite 5 mime bundles, the version JupyterLab 4 renders by itself.

Altair 6's mimetype renderer emits ``application/vnd.vegalite.v6.json``, which JupyterLab 4.x
does not render, and its default HTML renderer loads Vega from a CDN into a randomly named div
(neither offline nor deterministic). Our charts use only Vega-Lite 5 features, so the spec is
handed to JupyterLab's built-in renderer under the v5 mimetype: offline, and byte-identical for
identical data (what nbval compares).

Altair is imported only by the views that draw a chart (its imports are the slowest of all):
loading the magics arranges for :func:`enable_altair` to run when Altair is first imported,
by them or by the user's own code (:func:`enable_altair_when_imported`). This module imports
neither Altair nor the widgets.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from typing import TYPE_CHECKING

MIMETYPE = "application/vnd.vegalite.v5+json"
SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
RENDERER = "streamsql"

if TYPE_CHECKING:
    import altair as alt


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
    import altair as alt
    if RENDERER not in alt.renderers.names():
        alt.renderers.register(RENDERER, _renderer)
    alt.renderers.enable(RENDERER)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``then()`` once module ``name`` has been imported for the first time: it finds the
    module's spec with the other finders and runs ``then`` after the module's own code."""

    def __init__(self, name: str, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name or self not in sys.meta_path:
            return None
        sys.meta_path.remove(self)          # once; and find_spec below does not come back here
        spec = importlib.util.find_spec(fullname)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            self.then()
        loader.exec_module = exec_module    # this module's loader only (each module has its own)
        return spec


def enable_altair_when_imported() -> None:
    """:func:`enable_altair` now when Altair is imported, else as soon as it is."""
    if "altair" in sys.modules:
        enable_altair()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("altair", enable_altair))
