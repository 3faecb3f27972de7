"""The kernel's workbench: one per kernel, opened on first use from the ``%config StreamSql``
settings, reopened empty by ``%streamsql reset``. Spark itself starts once per process, on the
first Spark query, after a visible "starting Spark…" line."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class KernelWorkbench:
    def __init__(self, settings):
        self.settings = settings          # the StreamSql magics (a Configurable)
        self._wb: Workbench | None = None
        self._log_handler: logging.Handler | None = None
        self.spark_starts = 0
        self._phases = None

    @property
    def is_open(self) -> bool:
        return self._wb is not None

    @property
    def wb(self):
        if self._wb is None:
            self._wb = self._open()
        return self._wb

    def _open(self):
        from .warmup import imports_ready
        imports_ready()
        from ..engine.workbench import Workbench     # imported in the background since %load_ext
        s = self.settings
        wb = Workbench(s.workspace or None, engine=s.engine, master=s.master or None, buckets=s.buckets,
                       remote=s.remote or None, on_spark_start=self.spark_starting, on_spark_phase=self.spark_phase)
        self._log_to(wb.path / "logs" / "streamsql.log")
        return wb

    def spark_starting(self) -> None:
        """Called by the engine right before the SparkSession starts (it takes seconds), under
        its locks: the line is printed aside (``locks.callout_aside``), now, into the cell."""
        self.spark_starts += 1
        master = self._wb.master if self._wb is not None else self.settings.master
        url = getattr(self._wb.started_runtime, "url", None) if self._wb is not None else None
        if url:      # the shared engine or a remote endpoint: a Spark Connect session, no JVM here
            text = f"connecting to Spark ({url.split(';')[0].rstrip('/')})…"
        else:
            text = f"starting Spark ({master or 'local[*]'})…"
        from ..engine.locks import callout_aside
        callout_aside(_say, text)

    def spark_phase(self, name: str | None, at: float | None = None) -> None:
        """Called by the engine as each start-up phase begins (``None``: the first result is in;
        ``at``: when a phase done ahead began), under its locks; the first call shows the live
        start-up line, aside (``locks.callout_aside``), which then follows the phases itself."""
        from ..engine.startup import StartupPhases
        if self._phases is None or self._phases.done:
            if name is None:
                return
            self._phases = StartupPhases()
            from ..engine.locks import callout_aside
            callout_aside(_show_startup, self._phases)
        self._phases(name, at)

    def _log_to(self, path: Path) -> None:
        """The engine's log (late-row counts and the like) goes to the workspace, not the cell."""
        logger = logging.getLogger("streamsql")
        if self._log_handler is not None:
            logger.removeHandler(self._log_handler)
            self._log_handler.close()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._log_handler = logging.FileHandler(path, delay=True)
        self._log_handler.setFormatter(logging.Formatter(_LOG_FORMAT))
        logger.addHandler(self._log_handler)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.INFO)

    def reset(self) -> str:
        """Stop every query and start over in a new, empty workspace."""
        old = self._wb
        self._wb = None
        configured = self.settings.workspace
        if old is not None:
            old.close()
        if configured:
            p = Path(configured).expanduser().resolve()
            if (p / "catalog.json").exists():
                from ..engine.workspace import clear_workspace
                clear_workspace(p)      # refused while another process writes it
        wb = self.wb
        where = str(wb.path) if configured else "a temporary directory"
        return f"Workbench reset: new empty workspace in {where}"

    def close(self) -> None:
        if self._wb is not None:
            self._wb.close()
            self._wb = None


def _say(text: str) -> None:
    print(text, flush=True)
    sys.stdout.flush()


def _show_startup(phases) -> None:
    try:
        from IPython.display import display
        from ..widgets.startup import StartupView
        display(StartupView(phases))
    except Exception:       # no frontend to show it in: the phases are still recorded
        pass
