"""The start-up line of the first query: the JVM, the Spark session, the plan and the first batch,
each with the seconds it took, counting up live until the first result is in. Its stored form
(``text/plain``, ``text/html``) names the phases without times, so notebooks stay deterministic."""
from __future__ import annotations

import html
import threading

import ipywidgets as widgets

from ..engine.startup import StartupPhases

_STYLE = "font-family:monospace;font-size:12px;color:#555"


class StartupView(widgets.HTML):
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
        self.value = f'<div style="{_STYLE}">{html.escape(self.phases.text())}</div>'
        if self.phases.done:
            self._stop.set()

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        still = self.phases.text(times=False)
        data["text/plain"] = still
        data["text/html"] = f'<div class="streamsql-startup" style="{_STYLE}">{html.escape(still)}</div>'
        return data
