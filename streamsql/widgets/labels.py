"""Where a chart's text labels go so that they overlap neither the marks nor each other, at
every zoom along x: placement rules, computed here once per drawing, for charts whose x axis is
a time zoomed and panned by the user (the timeline; later marks of other kinds can use them).

Vega's label transform does this in a browser, but it needs a canvas, which the static snapshots'
renderer (vl-convert) does not have, and it does not run again when a zoom moves the marks; the
rules here give the live chart and its snapshot the same labels.

Geometry: a mark or label is a box around an anchor: the anchor's x is a time (ms), scaled by the
zoom (``k`` pixels per millisecond), its y and the box's extents are pixels. Zooming in moves two
boxes apart along x only when the one whose anchor is to the left is also the one to the left:
so each label gets, for its chosen place, the smallest ``k`` from which it clears every mark and
every label drawn with it (``kmin``), and the chart draws it only while ``k >= kmin``. A label
that cannot clear a mark at the same time (above, below or beside it) at any zoom gets none.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: a label's font size (px) and the width of one of its characters (digits, dashes: the sans-serif
#: of Vega's default font, a little over; a label is a step number or a range of them)
FONT_SIZE = 9
CHAR_PX = 6.0
#: the height of a label's box (px), and the gap kept between a label and any other box
LABEL_H = 10.0
GAP = 1.0


def label_width(text: str) -> float:
    """A label's width in pixels (an ellipsis counts as two characters)."""
    return CHAR_PX * (len(text) + text.count("…")) + 1.0


@dataclass
class Box:
    """A mark's box: its anchor (``t`` in ms, ``y`` in px) and half extents (px)."""
    t: float
    y: float
    hw: float
    hh: float


#: where a label may go around its mark, in order of preference, as (name, box left edge, box top
#: edge), from the mark's half extents (hw, hh) and the label's width and height (w, h)
PLACES = [
    ("right", lambda hw, hh, w, h: (hw + GAP + 1, -h / 2)),
    ("top-right", lambda hw, hh, w, h: (1.0, -hh - GAP - h)),
    ("bottom-right", lambda hw, hh, w, h: (1.0, hh + GAP)),
    ("top", lambda hw, hh, w, h: (-w / 2, -hh - GAP - h)),
    ("bottom", lambda hw, hh, w, h: (-w / 2, hh + GAP)),
    ("left", lambda hw, hh, w, h: (-hw - GAP - 1 - w, -h / 2)),
]


@dataclass
class Placed:
    """A label's place: its box's left edge and vertical centre, relative to its mark's anchor
    (px), and the smallest pixels-per-millisecond at which it is drawn (None: never)."""
    dx: float
    dy: float
    kmin: float | None
    where: str


def _thresholds(ax: float, a0: float, a1: float, bt: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """For a box [ax*k + a0, ax*k + a1] against boxes [bt*k + b0, bt*k + b1] (all overlapping it
    in y): the smallest k from which each is clear of it along x (0: always; inf: never)."""
    d = bt - ax
    out = np.zeros(len(bt))
    right = d > 0                 # b's anchor right of a's: a must end before b starts
    left = d < 0
    same = ~right & ~left
    out[right] = np.maximum(0.0, (a1 - b0[right]) / d[right])
    out[left] = np.maximum(0.0, (b1[left] - a0) / -d[left])
    out[same] = np.where((a1 > b0[same]) & (b1[same] > a0), np.inf, 0.0)
    return out


def place(marks: list[Box], labels: list[tuple[int, str]], height: float, k0: float) -> list[Placed]:
    """A place for each label ``(i, text)``, which labels mark ``marks[i]``, clear of every mark
    in ``marks`` and of the labels placed before it (earlier labels win), inside ``[0, height]``
    along y: the first of :data:`PLACES` where it is drawn at the zoom ``k0`` (px per ms: the
    chart as first drawn), else the one where it is drawn from the smallest zoom on."""
    if not labels:
        return []
    mt = np.array([m.t for m in marks], dtype=float)
    my = np.array([m.y for m in marks], dtype=float)
    mhw = np.array([m.hw for m in marks], dtype=float)
    mhh = np.array([m.hh for m in marks], dtype=float)
    # the labels placed so far (anchor time, box edges relative to it, vertical extent, kmin)
    lt: list[float] = []
    l0: list[float] = []
    l1: list[float] = []
    ly0: list[float] = []
    ly1: list[float] = []
    lk: list[float] = []
    out = []
    for i, text in labels:
        m = marks[i]
        w, h = label_width(text), LABEL_H
        best: tuple[float, int, float, float, str] | None = None
        for rank, (name, where) in enumerate(PLACES):
            x0, top = where(m.hw, m.hh, w, h)
            y0, y1 = m.y + top, m.y + top + h
            if y0 < 0 or y1 > height:
                continue
            # marks that overlap it in y (its own among them)
            near = (my - mhh < y1 + GAP) & (my + mhh > y0 - GAP)
            k = _thresholds(m.t, x0 - GAP, x0 + w + GAP, mt[near], -mhw[near], mhw[near])
            kmin = float(k.max()) if len(k) else 0.0
            if lt:
                lab_t = np.array(lt)
                ov = (np.array(ly0) < y1 + GAP) & (np.array(ly1) > y0 - GAP)
                if ov.any():
                    kl = _thresholds(m.t, x0 - GAP, x0 + w + GAP, lab_t[ov], np.array(l0)[ov], np.array(l1)[ov])
                    # a placed label drawn from its own kmin on: only where it is drawn below ours
                    kl = np.where(np.array(lk)[ov] >= kl, 0.0, kl)
                    kmin = max(kmin, float(kl.max()))
            if math.isinf(kmin):
                continue
            if best is None or kmin < best[0] * 0.999:
                best = (kmin, rank, x0, top + h / 2, name)
            if kmin <= k0:
                best = (kmin, rank, x0, top + h / 2, name)
                break
        if best is None:
            out.append(Placed(0.0, 0.0, None, ""))
            continue
        kmin, _rank, x0, mid, name = best
        out.append(Placed(round(x0, 1), round(mid, 1), kmin, name))
        lt.append(m.t)
        l0.append(x0)
        l1.append(x0 + w)
        ly0.append(m.y + mid - h / 2)
        ly1.append(m.y + mid + h / 2)
        lk.append(kmin)
    return out
