"""Windows as bands on their operator's lane of the timeline (the semantics, section 3.7): every
window a window operator (a window table function, a window aggregation, a window Top-N) held
while the trace history reaches back, closed ones pale and the open ones strong, each band from
its start to the clock value that closes (or closed) it.

Overlapping windows are drawn on levels inside the lane, so a shape reads at a glance: tumbling
windows are tiles on one level, a hop's windows step down the levels, a cumulating period's
windows are a staircase from one start, and each key's sessions keep a level of their own and
grow to the right as rows come. A window's tooltip says what it holds and when it closes ("the
window 10:00-11:00 closes when ORDERS's clock reaches 11:00; the clock is 10:42").

The windows come from the trace's typed state records (``WindowsState``), read once per step:
what was read is kept per query (:data:`_SEEN`), so a redraw reads only the steps since the last.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from ..engine.operators.describe import WindowsState
from ..engine.runtime.trace_records import window_text
from ..engine.types import format_value
from .render import ts

#: levels of bands inside one lane; more overlapping windows reuse them, top to bottom
LEVELS = 4
#: vertical distance (pixels) between levels, and a band's height
LEVEL_PX, BAND_PX = 6, 5
#: windows kept per operator (the latest ones, by end), so a long run stays drawable
MAX_WINDOWS = 2000


@dataclass
class _Band:
    start: int
    end: int
    label: str                 # the key values (sessions, grouped windows), as the trace prints them
    first_step: int
    last_step: int
    rows: int | None = None
    partials: tuple = ()
    open: bool = True
    closed_step: int | None = None     # the first traced step it was no longer open at


@dataclass
class _Seen:
    """What one query's trace said so far: per operator (by trace position), its windows."""
    last: int = -1
    shape: dict = field(default_factory=dict)          # operator index -> shape words
    bands: dict = field(default_factory=dict)          # operator index -> {identity: _Band}


_SEEN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _identity(shape: str, w) -> tuple:
    """A window's identity across steps: a session's start and keys (its end grows); any other
    window's start, end and keys."""
    if shape.startswith("SESSION"):
        return (w.start, w.labels)
    return (w.start, w.end, w.labels)


def _read(q) -> _Seen:
    seen = _SEEN.get(q)
    if seen is None:
        seen = _SEEN[q] = _Seen()
    trace = getattr(q, "trace", None)
    if not trace:
        return seen
    steps = trace.steps()
    new = [k for k, s in enumerate(steps) if s > seen.last]
    if not new:
        return seen
    for k in new:
        rec = trace[k]
        for i, op in enumerate(rec.operators):
            st = op.state
            if not isinstance(st, WindowsState):
                continue
            seen.shape[i] = st.shape
            bands = seen.bands.setdefault(i, {})
            now = set()
            for w in st.windows:
                ident = _identity(st.shape, w)
                now.add(ident)
                b = bands.get(ident)
                if b is None:
                    b = bands[ident] = _Band(w.start, w.end, ", ".join(w.labels), rec.step, rec.step)
                b.end, b.rows, b.partials, b.last_step, b.open = w.end, w.rows, w.partials, rec.step, True
            for ident, b in bands.items():
                if b.open and ident not in now:
                    b.open, b.closed_step = False, rec.step     # released at this step
            if len(bands) > MAX_WINDOWS:
                for ident in sorted(bands, key=lambda x: bands[x].end)[:len(bands) - MAX_WINDOWS]:
                    del bands[ident]
    seen.last = steps[-1]
    return seen


def _levels(shape: str, bands: list[_Band]) -> list[int]:
    """A level per band: a session key's own; otherwise the first level free at the band's start."""
    if shape.startswith("SESSION"):
        keys: dict[str, int] = {}
        return [keys.setdefault(b.label, len(keys)) % LEVELS for b in bands]
    order = sorted(range(len(bands)), key=lambda k: (bands[k].start, bands[k].end))
    free_at: list[int] = []
    out = [0] * len(bands)
    for k in order:
        b = bands[k]
        for lv, t in enumerate(free_at):
            if t <= b.start:
                free_at[lv] = b.end
                out[k] = lv
                break
        else:
            free_at.append(b.end)
            out[k] = len(free_at) - 1
    return [lv % LEVELS for lv in out]


def window_band_records(q, ops, op_lanes, make) -> list[dict]:
    """The band records of every window operator of ``q`` (``make`` builds a timeline record:
    ``_rec`` of ``widgets/timeline_data.py``); ``ops`` are the trace's operators after its last step."""
    seen = _read(q)
    out = []
    for i, bands in seen.bands.items():
        if i >= len(op_lanes) or not bands:
            continue
        lane = op_lanes[i]
        op = ops[i] if i < len(ops) else None
        source = op.inputs[0] if op is not None and op.inputs else "its input"
        clock = op.clocks[0] if op is not None and op.clocks else None
        shape = seen.shape.get(i, "")
        listed = sorted(bands.values(), key=lambda b: (b.start, b.end, b.label))
        levels = _levels(shape, listed)
        n = max(levels) + 1 if levels else 1
        for b, lv in zip(listed, levels):
            what = f"the window {window_text(b.start, b.end)}" + (f" of {b.label}" if b.label else "")
            holds = []
            if b.rows is not None:
                holds.append(f"{b.rows} row{'s' if b.rows != 1 else ''}")
            if b.partials:
                holds.append(", ".join(f"{k} = {format_value(v)}" for k, v in b.partials))
            held = f" ({'; '.join(holds)})" if holds else ""
            if b.open:
                now = ts(clock) if clock is not None else "none"
                detail = f"{what}{held} closes when {source}'s clock reaches {ts(b.end)}; the clock is {now}"
            else:
                detail = f"{what}{held} closed when {source}'s clock reached {ts(b.end)}, at step {b.closed_step}"
            r = make("open window" if b.open else "window", lane, b.start, t2=b.end, detail=f"{detail}; {shape}")
            r["band"] = round((lv - (n - 1) / 2) * LEVEL_PX, 1)
            r["level"] = lv
            out.append(r)
    return out


def with_bands(recs: list[dict]) -> list[dict]:
    """Every record gets the fields the window layers read: ``band`` (pixels from the lane's
    middle) and ``level`` (None: not a window band)."""
    for r in recs:
        r.setdefault("band", 0)
        r.setdefault("level", None)
    return recs


#: the filter of the timeline's other open-window marks (join windows, GROUP BY periods, OVER frames)
NOT_A_BAND = "!isValid(datum.level)"


def band_layers(only, base) -> list:
    """The window bands: closed windows pale, open ones strong, each on its level."""
    import altair as alt
    band = alt.YOffset("band:Q", scale=None)
    return [only(base, "window").mark_bar(opacity=0.75, height=BAND_PX, stroke="white", strokeWidth=1).encode(x2="t2:T", yOffset=band),
            only(base, "open window").transform_filter("isValid(datum.level)")
            .mark_bar(opacity=0.9, height=BAND_PX, stroke="white", strokeWidth=1).encode(x2="t2:T", yOffset=band)]
