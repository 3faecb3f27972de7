"""The start-up line of the first query: the JVM, the Spark session, the plan and the first batch,
each with the seconds it took, counting up live until the first result is in. Its stored form
(``text/plain``, ``text/html``) names the phases without times, so notebooks stay deterministic."""
from __future__ import annotations

import html
import threading

import ipywidgets as widgets

from ..engine.startup import StartupPhases
from .static import STYLE, StaticMixin

_STYLE = "font-family:monospace;font-size:12px;color:#555"


class StartupView(StaticMixin, widgets.HTML):
    """Shows a :class:`~streamsql.engine.startup.StartupPhases` as it goes."""

    def __init__(self, phases: StartupPhases, tick: float = 0.5):
        super().__init__()
        self.add_class("streamsql-startup")
        self.phases = phases
        self._stop = threading.Event()
        phases.listen(lambda _p: self.refresh())
        self.refresh()
        threading.Thread(target=self._ticker, args=(tick,), daemon=True, name="streamsql-startup").start()

    def _ticker(self, tick: float) -> None:
        while not self._stop.wait(tick):
            if self.phases.done:
                break
            self.refresh()

    def refresh(self) -> None:
        """Redraw the phases so far (called on a timer while Spark starts)."""
        self.value = f'<div style="{_STYLE}">{html.escape(self.phases.text())}</div>'
        if self.phases.done:
            self._stop.set()

    def static_key(self):
        return self.phases.done

    def static_html(self) -> str:
        """The phases without times when displayed (what a notebook run in batch keeps); with
        their times in the updates a live frontend gets."""
        times = getattr(self, "_static_handle", None) is not None and self.phases.done
        return STYLE + (f'<div class="streamsql-startup streamsql-static" style="{_STYLE}">'
                        f'{html.escape(self.phases.text(times=times))}</div>')

    def bundle_text(self) -> str:
        return self.phases.text(times=False)
