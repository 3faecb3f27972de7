"""Static snapshots of the live views, for wherever no kernel runs them: a saved notebook on a
hub's file browser, nbviewer, a code review, ``jupyter nbconvert``, JupyterLab after a restart.

A view displays as two outputs: the live widget (``text/plain`` for terminals and nbval, an empty
``text/html`` so that HTML renderers that cannot run the widget show nothing for it) and beside
it a ``text/html`` snapshot: the rows, clocks and step table as tables and the timeline as SVG
(drawn by vl-convert, deterministic: no ids or times that change from run to run). In a running
JupyterLab a small style rule hides the snapshot while the live widget is on the page, and hides
the widget's "model not found" line when it is not. When the notebook runs in a frontend that
says which cell runs (JupyterLab), a background thread (:class:`SnapshotKeeper`) brings the
snapshot up to date once the view's queries caught up and nothing changed for a moment (1.5 s),
at most once a second, so that the saved notebook shows the last state and no click waits for it;
its charts are drawn in a worker process (:mod:`.svgworker`), since vl-convert holds the GIL.
Batch runs (nbclient, nbval) keep the state at display time, which is what their stored outputs
compare.
"""
from __future__ import annotations

import hashlib
import html
import logging
import re
import threading
import time
import weakref

from ..engine.locks import widget_condition, widget_lock
from .display import TextBundle
from .hooks import ON_MARK, caught_up

log = logging.getLogger("streamsql.widgets")

#: hides the snapshot beside a live view, and the widget's error line beside a snapshot
STYLE = ("<style>.jp-OutputArea:has(.streamsql-live) > .jp-OutputArea-child:has(.streamsql-static)"
         "{display:none}.jp-OutputArea:has(.streamsql-static) .jupyter-widgets:not(:has(*)){display:none}"
         "</style>")
LIVE = "streamsql-live"

#: ``away`` is set on the keeper's thread while it redraws: its charts are drawn in
#: :mod:`.svgworker`'s process (vl-convert holds the GIL while it draws)
_drawing = threading.local()

_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(\bid="|url\(#|href="#)([^")]+)')


def svg_of(chart) -> str | None:
    """The chart as SVG, its ids made unique to it (several charts share a page), or None when
    vl-convert is not installed."""
    from .vega import spec_of
    return svg_of_spec(spec_of(chart))


def svg_of_spec(spec: dict) -> str | None:
    """:func:`svg_of` a Vega-Lite spec."""
    try:
        import vl_convert as vlc
    except ImportError:  # pragma: no cover - a dependency; the snapshot then says so
        return None
    svg = None
    if getattr(_drawing, "away", False):          # the keeper's thread: drawn without the GIL
        from .svgworker import WORKER, WorkerFailed
        try:
            svg = WORKER.svg(spec)
        except WorkerFailed as e:
            log.warning("drawing a snapshot's chart in its worker failed (%s); drawing it here", e)
    if svg is None:
        svg = vlc.vegalite_to_svg(spec)
    # Vega numbers clip paths with a counter that runs on across charts: number them per chart,
    # then prefix them with the chart's own hash (unique on a page, the same on every run)
    names = list(dict.fromkeys(_ID.findall(svg)))
    marked = _REF.sub(lambda m: m.group(0).replace(m.group(2), f"\0{names.index(m.group(2))}\0")
                      if m.group(2) in names else m.group(0), svg)
    tag = hashlib.sha1(marked.encode()).hexdigest()[:8]
    return re.sub("\0(\\d+)\0", lambda m: f"{tag}-{m.group(1)}", marked)


def spec_html(spec: dict) -> str:
    """A Vega-Lite chart as the snapshot's HTML (its SVG)."""
    svg = svg_of_spec(spec)
    if svg is None:
        return "<div>(the chart is drawn by vl-convert-python, which is not installed)</div>"
    return f'<div class="streamsql-static-chart" style="overflow-x:auto">{svg}</div>'


def snapshot_html(parts: list[str], title: str) -> str:
    """One static snapshot: its parts under a one-line title."""
    head = (f'<div style="font-family:monospace;font-size:11px;color:#777">{html.escape(title)} '
            f'(a snapshot: run the notebook for the live view)</div>')
    return STYLE + f'<div class="streamsql-static">{head}' + "".join(parts) + "</div>"


# --------------------------------------------------------------------------- display

_shown: "weakref.WeakSet" = weakref.WeakSet()
_hooked: set[int] = set()
_lock = widget_lock("snapshot-views")


class StaticMixin(TextBundle):
    """For a view (an ipywidgets DOM widget) with ``static_html()`` and ``static_key()``: display it
    as the live widget plus its snapshot, and keep the snapshot current in live frontends."""

    def static_html(self) -> str:  # pragma: no cover - every view defines it
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        raise NotImplementedError

    def static_key(self):
        """Changes whenever the snapshot would (it is redrawn only then)."""
        return None

    def static_queries(self) -> list:
        """The queries whose rows the snapshot shows: it is redrawn only once they caught up."""
        return []

    def _ipython_display_(self, **kwargs):
        from IPython.display import display
        self.add_class(LIVE)
        data = self._repr_mimebundle_()
        data["text/html"] = ""                  # HTML-only renderers show the snapshot instead
        display(data, raw=True)
        self._static_handle = display({"text/html": self.static_html()}, raw=True, display_id=True)
        self._static_last = self.static_key()
        self._static_at = time.monotonic()
        if live_frontend():
            with _lock:
                _shown.add(self)
            _hook()

    def update_static(self, force: bool = False) -> bool:
        """Redraw the snapshot beside the displayed view when its state changed."""
        handle = getattr(self, "_static_handle", None)
        if handle is None:
            return False
        key = self.static_key()
        if not force and key is not None and key == getattr(self, "_static_last", None):
            return False
        self._static_last = key
        self._static_at = time.monotonic()
        handle.update({"text/html": self.static_html()}, raw=True)
        return True


def live_frontend() -> bool:
    """Whether the request being served comes from a frontend that renders the widgets and says
    which cell runs (JupyterLab sends the cell id), or is a click in such a frontend."""
    try:
        from IPython import get_ipython
        ip = get_ipython()
        parent = ip.get_parent() if ip is not None and hasattr(ip, "get_parent") else None
    except Exception:
        return False
    if not parent:
        return False
    if (parent.get("header") or {}).get("msg_type") == "comm_msg":
        return True
    return bool((parent.get("metadata") or {}).get("cellId"))


class SnapshotKeeper:
    """Brings the snapshots of views displayed in live frontends up to date, on a thread of its
    own: a view's snapshot is redrawn when its state changed, once its queries caught up, at
    most once a second; so the saved notebook shows the last state about a second after it
    settled, and no click or cell waits for a snapshot."""

    PERIOD = 1.0        # at most one redraw per view per PERIOD seconds
    QUIET = 1.5         # ... and only once nothing changed for QUIET seconds (a student between clicks);
    #                     a sweep that a new event interrupts stops there, and goes on at the next quiet spell
    LONGEST = 30.0      # ... or once it waited that long (views that change all the time: a pump, a
    #                     student clicking on without a pause: every snapshot costs the browser and the
    #                     kernel), then one per pass, between two clicks' micro-batches
    TICK = 0.25

    def __init__(self):
        self._cv = widget_condition("snapshot-keeper")
        self._poked = False
        self._poked_at = 0.0
        self._stale_since: float | None = None
        self._thread: threading.Thread | None = None

    def poke(self, *_args) -> None:
        """Something may have changed: look at the displayed snapshots soon."""
        with _lock:
            if not _shown:
                return
        with self._cv:
            self._poked = True
            self._poked_at = time.monotonic()
            if self._stale_since is None:
                self._stale_since = self._poked_at
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="streamsql-snapshots", daemon=True)
                self._thread.start()
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._poked:
                    self._cv.wait()
                self._poked = False
            while not self.sweep():
                time.sleep(self.TICK)

    def sweep(self) -> bool:
        """One pass; True when every displayed snapshot is current. While views keep changing
        (clicks a second apart) nothing is drawn: a snapshot is for the saved notebook, and
        drawing one costs the busy cores a few hundred milliseconds. Past ``LONGEST`` one
        snapshot is drawn per pass, and only while every displayed view's queries have caught
        up: in the gaps between clicks, one at a time."""
        with _lock:
            views = list(_shown)
        now = time.monotonic()
        quiet = now - self._poked_at >= self.QUIET
        overdue = now - (self._stale_since or now) >= self.LONGEST
        if not quiet and not overdue:
            return False
        if not quiet and not all(caught_up(v.static_queries()) for v in views):
            return False
        _drawing.away = True
        try:
            current = self._sweep(views, now, 1 if not quiet else len(views), overdue)
        finally:
            _drawing.away = False
        if current:
            with self._cv:
                if not self._poked:
                    self._stale_since = None
        return current

    def _sweep(self, views, now: float, most: int, overdue: bool) -> bool:
        """Draws up to ``most`` stale snapshots; stops at a new event (the rest wait for the next
        quiet spell) unless the snapshots are overdue."""
        current = True
        for v in views:
            try:
                if v.static_key() == getattr(v, "_static_last", None):
                    continue
                if most <= 0 or (self._poked_at > now and not overdue):
                    return False      # the rest at the next pass
                if now - getattr(v, "_static_at", 0.0) < self.PERIOD or not caught_up(v.static_queries()):
                    current = False
                    continue
                v.update_static()
                most -= 1
            except Exception:  # a snapshot must never break anything
                log.exception("static snapshot update failed")
        return current


#: the process's snapshot keeper: it looks whenever a live view is marked
KEEPER = SnapshotKeeper()
ON_MARK.append(KEEPER.poke)


def update_all() -> None:
    """Ask for every displayed snapshot to be brought up to date (off this thread)."""
    KEEPER.poke()


def _hook() -> None:
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except Exception:
        return
    if ip is None or id(ip) in _hooked:
        return
    _hooked.add(id(ip))
    ip.events.register("post_run_cell", lambda _result: update_all())
