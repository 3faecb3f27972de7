"""A query's timeline as Altair charts: the lanes across rowtime (zoomed and panned along it),
and under them the same events across steps, drawn from :func:`.timeline_data.timeline_records`."""
from __future__ import annotations

import altair as alt
import pandas  # noqa: F401 - Altair imports it on first use: here, on the importing thread, not half-way on the redrawing one

from .labels import FONT_SIZE
from .timeline_labels import EVENT_KINDS, X_PADDING, chart_height, label_test
from .timeline_data import NATIVE_LANE, drawn, timeline_records
from .windowbands import NOT_A_BAND, band_layers

#: (what, colour) in legend order; ``what`` is the value of the records' ``what`` field
KINDS = [
    ("row", "#1f77b4"),
    ("rows (binned)", "#9ecae1"),
    ("late row", "#d62728"),
    ("pending row", "#aec7e8"),
    ("bound", "#17becf"),
    ("eclipsed bound", "#b0b0b0"),
    ("backwards bound", "#e7969c"),
    ("clock", "#000000"),
    ("kept row", "#bcbd22"),
    ("window", "#c5b0d5"),             # a window operator's closed windows (windowbands.py)
    ("open window", "#9467bd"),
    ("released row", "#2ca02c"),
    ("held row", "#ff7f0e"),
    ("waits for", "#e377c2"),
    ("output bound", "#8c564b"),
    ("calc error", "#7f0000"),         # in the legend only when a chart has one
    # the native twin's lane (native_records), only when the query has a twin
    ("spark watermark", "#e6550d"),
    ("spark row", "#7570b3"),
    ("spark dropped row", "#a50f15"),
]
#: what a legend entry means, where the name alone does not say it
MEANING = {
    "eclipsed bound": "eclipsed bound: says nothing new",
    "backwards bound": "backwards bound: refused",
    "kept row": "kept row: for partners to come",
    "window": "window: closed, released",
    "rows (binned)": "rows (binned): counted per bin",
    "spark watermark": "spark watermark: the twin's, after a step",
    "spark row": "spark row: emitted by the twin",
    "spark dropped row": "spark dropped row: dropped as late",
}

#: the name of the timeline's zoom and pan along rowtime (a selection bound to its x scale)
ZOOM = "zoom"


def native_layers(only, points) -> list:
    """The marks of the twin's lane: Spark's watermark (ticks), its rows, the rows it dropped."""
    return [only(points, "spark watermark").mark_tick(thickness=3, size=22),
            only(points, "spark row").mark_circle(size=70),
            only(points, "spark dropped row").mark_point(shape="cross", size=110, filled=True)]


#: events outside the step strip's brushed range fade (marks without a step never do)
_BRUSHED = "!isValid(datum.step) || !length(data('steps_store')) || vlSelectionTest('steps_store', datum)"


def chart_layout(q, lanes: list[str], recs: list[dict]) -> tuple:
    """What the chart's shape depends on (data changes within one shape update it in place)."""
    present = tuple(k for k, _c in KINDS if any(r["what"] == k for r in recs))
    step_lanes = tuple(lane for lane in lanes if lane in set(q.plan.streams) or lane == "output")
    return tuple(lanes), step_lanes, present


def chart_for(name: str, lanes, step_lanes, present, width: int, data) -> alt.VConcatChart:
    """The timeline as Altair charts over one data set (``data``: inline values or a named
    source): the lanes across rowtime, zoomed and panned along it, and under them the same
    events across steps (the step table's Step), where a dragged range brushes the steps above."""
    present = set(present)
    refused = ["late row"] + (["calc error"] if "calc error" in present else [])   # marked alike
    kinds = [(k, c) for k, c in KINDS if k in present] or KINDS[:1]
    whats = [k for k, _c in kinds]
    legend_labels = " : ".join(f"datum.label == {k!r} ? {MEANING[k]!r}" for k, _c in kinds if k in MEANING)
    legend = alt.Legend(title=None, orient="right", columns=1, labelLimit=210, symbolOpacity=1,
                        labelExpr=(legend_labels + " : datum.label") if legend_labels else alt.Undefined)
    color = alt.Color("what:N", scale=alt.Scale(domain=whats, range=[c for _k, c in kinds]), legend=legend)
    tooltip = [alt.Tooltip("what:N"), alt.Tooltip("lane:N"), alt.Tooltip("at:N", title="step"),
               alt.Tooltip("time:N", title="rowtime"), alt.Tooltip("producer:N"), alt.Tooltip("values:N"),
               alt.Tooltip("detail:N")]
    # a point scale: every mark is centred on its lane, and ``dy`` spreads marks from there
    y = alt.Y("lane:N", scale=alt.Scale(domain=list(lanes), type="point", padding=0.5), sort=list(lanes), title=None)
    dy = alt.YOffset("dy:Q", scale=None)
    x = alt.X("t:T", scale=alt.Scale(type="utc", padding=X_PADDING, nice=False),
              axis=alt.Axis(format="%H:%M:%S", title="rowtime (UTC): drag to pan, wheel to zoom, double-click to reset",
                            labelOverlap=True))
    faded = alt.condition(_BRUSHED, alt.value(1), alt.value(0.15))
    base = alt.Chart().encode(x=x, y=y, color=color, tooltip=tooltip)

    def only(chart, *what):
        return chart.transform_filter(alt.FieldOneOfPredicate(field="what", oneOf=list(what)))

    zoom = alt.selection_interval(bind="scales", encodings=["x"], name=ZOOM)
    points = base.encode(yOffset=dy, opacity=faded)
    layers = [     # the first COVERABLE_LAYERS (bars) are the only marks step labels may cover
        only(base, "open window").transform_filter(NOT_A_BAND).mark_bar(opacity=0.3, height=16)
            .encode(x2="t2:T").add_params(zoom),
        only(base, "rows (binned)").mark_bar(opacity=0.45, height=10).encode(x2="t2:T"),
        *band_layers(only, base),
        only(points, "row", "released row").mark_circle(size=70),
        only(points, *refused).mark_point(shape="cross", size=110, filled=True),
        only(points, "pending row").mark_circle(size=70, stroke="#1f77b4", strokeWidth=1, fillOpacity=0.5),
        only(points, "kept row").mark_point(shape="square", size=60, filled=False, strokeWidth=2),
        only(points, "bound", "output bound").mark_tick(thickness=3, size=22),
        only(points, "eclipsed bound").mark_tick(thickness=2, size=22, strokeDash=[2, 2]),
        only(points, "backwards bound").mark_tick(thickness=2, size=22, strokeDash=[1, 3]),
        only(points, "clock").mark_point(shape="triangle-left", filled=True, size=120),
        only(points, "held row").mark_point(filled=False, size=110, strokeWidth=2),
        only(points, "waits for").mark_point(shape="diamond", filled=False, size=110, strokeWidth=2),
    ]
    if NATIVE_LANE in lanes:
        layers += native_layers(only, points)
    # the step labels, each where :func:`.timeline_labels.place_labels` put it, drawn from the zoom it needs on
    # (an offset along a time axis is the text's ``dx``: Vega-Lite's xOffset channel needs a band scale)
    layers.append(base.encode(yOffset=alt.YOffset("ly:Q", scale=None))
                  .transform_filter("datum.label != ''")
                  .mark_text(align="left", baseline="middle", fontSize=FONT_SIZE, dx=alt.ExprRef("datum.lx"))
                  .encode(text="label:N", color=alt.value("#444"),
                          opacity=alt.condition(f"({label_test(width)}) && ({_BRUSHED})", alt.value(1),
                                                alt.value(0))))
    main = alt.layer(*layers).properties(name="main", width=width, height=chart_height(list(lanes)), title=name)
    brush = alt.selection_interval(encodings=["x"], name="steps")
    step_x = alt.X("step:Q", scale=alt.Scale(padding=12, zero=False, nice=False),
                   axis=alt.Axis(format="d", tickMinStep=1, labelExpr="datum.value % 1 ? '' : datum.label",
                                 title="step (as in the step table): drag to brush steps"))
    step_y = alt.Y("lane:N", scale=alt.Scale(domain=list(step_lanes), type="point", padding=0.5),
                   sort=list(step_lanes), title=None)
    events = [k for k in EVENT_KINDS if k != "calc error" or k in present]
    dots = (alt.Chart().transform_filter(alt.FieldOneOfPredicate(field="what", oneOf=events))
            .transform_filter("datum.step != null")
            .mark_circle(size=40, opacity=1)
            .encode(x=step_x, y=step_y, color=color, tooltip=tooltip).add_params(brush))
    scrub = (alt.Chart().transform_filter("datum.what == 'scrubber step'")
             .mark_rule(color="#e6a700", strokeWidth=3).encode(x=step_x))
    strip = alt.layer(dots, scrub).properties(name="strip", width=width, height=max(40, 20 * len(step_lanes)))
    # room on the right: the legend's labels are measured once, when the chart is drawn, and a font
    # that renders a few pixels wider than measured would be cut at the chart's edge
    return (alt.vconcat(main, strip, data=data, spacing=6).resolve_scale(color="shared")
            .properties(padding={"left": 5, "top": 5, "right": 16, "bottom": 5}))


def scrub_record(step: int | None) -> list[dict]:
    return [] if step is None else [{"what": "scrubber step", "step": step, "lane": None, "t": None}]


def timeline_chart(q, width: int = 640, step: int | None = None) -> alt.VConcatChart:
    """The timeline as Altair charts over one inline data set (``spec["data"]["values"]``): the
    lanes across rowtime, and under them the same events across steps (the step table's Step);
    ``step`` (the step scrubber's) is marked on the step axis."""
    lanes, recs = timeline_records(q, width=width)
    return chart_for(f"Timeline of query {q.name}", *chart_layout(q, lanes, recs), width,
                  alt.Data(values=drawn(recs) + scrub_record(step)))


def timeline_summary(q) -> str:
    """One deterministic line counting what the chart shows (its text/plain form)."""
    lanes, recs = timeline_records(q)
    counts = {k: 0 for k, _c in KINDS}
    for r in recs:
        counts[r["what"]] += 1
    shown = ", ".join(f"{k} {n}" for k, n in counts.items() if n)
    return f"Timeline of query {q.name} (lanes: {', '.join(lanes)}): {shown or 'nothing yet'}"
