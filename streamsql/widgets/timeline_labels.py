"""The step labels of a query's timeline: which marks get one (the steps of the event marks at
one spot), the size of each kind of mark as drawn, and each label's place and the zoom from which
it is drawn, by :func:`.labels.place` (the placement rules, for any chart zoomed along time)."""
from __future__ import annotations

import math

from .labels import Box, place

#: kinds whose marks are events: they carry the step that caused them
EVENT_KINDS = ("row", "late row", "calc error", "pending row", "bound", "eclipsed bound", "backwards bound", "released row")
#: kinds whose marks get step labels: the events, and the native twin's marks (on its own lane,
#: not on the step strip)
LABELLED_KINDS = EVENT_KINDS + ("spark watermark", "spark row", "spark dropped row")


def _steps_text(steps: list[int]) -> str:
    """``8``, ``8,9``, ``8–10`` (a run), ``8…31`` (many): the steps of the marks at one spot."""
    steps = sorted(set(steps))
    if len(steps) == 1:
        return str(steps[0])
    if steps[-1] - steps[0] == len(steps) - 1 and len(steps) > 2:
        return f"{steps[0]}–{steps[-1]}"
    return ",".join(map(str, steps)) if len(steps) <= 3 else f"{steps[0]}…{steps[-1]}"


def label_spots(spots: dict) -> None:
    """One label per spot (lane and time) that has event marks: their steps, on the spot's top
    mark (the rest are in the tooltips and the step strip)."""
    for (_lane, _t), group in spots.items():
        events = [r for r in group if r["what"] in LABELLED_KINDS and r["step"] is not None]
        if events:
            events[0]["label"] = _steps_text([r["step"] for r in events])


#: each kind of point mark's half width and half height (px) as drawn (a symbol of area ``size``
#: is about ``sqrt(size)`` across, a circle ``2 * sqrt(size / pi)``, plus half its stroke; a tick
#: is ``thickness`` wide and ``size`` tall); the bars (open windows, binned rows) are not here:
#: labels may lie over them
EXTENT = {
    "row": (4.8, 4.8), "released row": (4.8, 4.8), "pending row": (5.3, 5.3), "spark row": (4.8, 4.8),
    "late row": (5.3, 5.3), "calc error": (5.3, 5.3), "spark dropped row": (5.3, 5.3),
    "kept row": (4.9, 4.9), "clock": (5.5, 5.5), "held row": (6.9, 6.9), "waits for": (6.3, 6.3),
    "bound": (1.5, 11.0), "output bound": (1.5, 11.0), "eclipsed bound": (1.0, 11.0),
    "backwards bound": (1.0, 11.0), "spark watermark": (1.5, 11.0),
}
#: the chart's first layers, bars (open windows, binned rows, window bands), which a step label
#: may cover; :func:`place_labels` keeps labels clear of every mark after them
COVERABLE_LAYERS = 4

#: pixels between two lanes (the chart's height is this times the number of lanes, at least 60)
LANE_PX = 28


def chart_height(lanes: list[str]) -> int:
    return max(60, LANE_PX * len(lanes))


def place_labels(lanes: list[str], recs: list[dict], width: int) -> None:
    """Each label's place beside its mark (``lx``, ``ly``: px from the lane's centre line at its
    time) and the zoom (``kmin``, px per ms) from which it is drawn, clear of every drawn mark
    and of the labels placed before it, the newest steps first (:func:`.labels.place`); a chart
    ``width`` px wide shows them first at :func:`first_zoom`."""
    height = chart_height(lanes)
    step = height / len(lanes)                       # the point scale's step (padding 0.5)
    centre = {lane: step * (i + 0.5) for i, lane in enumerate(lanes)}
    shown = [r for r in recs if r["what"] in EXTENT and not r.get("stacked") and r["lane"] in centre]
    marks = [Box(r["t"], centre[r["lane"]] + r["dy"], *EXTENT[r["what"]]) for r in shown]
    order = sorted((i for i, r in enumerate(shown) if r["label"]), key=lambda i: -shown[i]["step"])
    for i, p in zip(order, place(marks, [(i, shown[i]["label"]) for i in order], height, first_zoom(recs, width))):
        r = shown[i]
        r["lx"], r["ly"], r["kmin"] = p.dx, round(r["dy"] + p.dy, 1), p.kmin


#: the x axis keeps this many pixels free at each end (its scale's padding)
X_PADDING = 24


def first_zoom(recs: list[dict], width: int) -> float:
    """Pixels per millisecond of a chart ``width`` px wide as first drawn: its x scale spans the
    drawn marks' times (bars' ends too), less :data:`X_PADDING` at each end."""
    ts = [v for r in recs if not r.get("stacked") for v in (r["t"], r["t2"]) if v is not None]
    span = (max(ts) - min(ts)) if ts else 0
    return (width - 2 * X_PADDING) / span if span > 0 else math.inf


def label_fits(r: dict, px_per_ms: float) -> bool:
    """Whether record ``r``'s label is drawn when the x axis shows ``px_per_ms`` pixels per
    millisecond (the chart's own test, :func:`label_test`, in Python)."""
    return bool(r["label"]) and r["kmin"] is not None and px_per_ms >= r["kmin"]


def label_test(width: int) -> str:
    """:func:`label_fits` as a Vega expression over the main chart's x scale as zoomed."""
    span = "max(1, domain('main_x')[1] - domain('main_x')[0])"
    return f"isValid(datum.kmin) && {width} / {span} >= datum.kmin"
