"""What ``%load_ext streamsql`` leaves running in the background while the user writes the first
cell: Spark's start (or its Connect session) and the import of the engine's modules, so that the
extension loads at once and the first cell does not pay for them (docs/benchmarks.md has the
figures)."""
from __future__ import annotations

import threading

#: what the first cell needs (the engine with its SQL parser and pyarrow, the rows' view), imported
#: in the background from ``%load_ext`` on, while the user writes that cell
WARM_MODULES = ("streamsql.engine.workbench", "streamsql.engine.sql", "streamsql.engine.events",
                "streamsql.widgets.live")
_warming: threading.Thread | None = None


def warm_up(engine: str, master: str | None, remote: str | None) -> None:
    """In a background thread (once per process): start the engine ahead of its first use
    (``prestart``: Spark's own background start, or the Connect session), then import
    :data:`WARM_MODULES`. Nothing is reported here: the first real use reports a failure."""
    global _warming
    if _warming is not None:
        return

    def run():
        import importlib
        try:
            from ..engine.runtime.engines import prestart
            prestart(engine, master, remote=remote)
            for name in WARM_MODULES:
                importlib.import_module(name)
        except Exception:  # imported again, and reported, by the cell that needs it
            return
    _warming = threading.Thread(target=run, daemon=True, name="streamsql-warm-up")
    _warming.start()


def imports_ready() -> None:
    """Wait for :func:`warm_up` (a cell never imports a module the thread is importing)."""
    t = _warming
    if t is not None and t.is_alive() and t is not threading.current_thread():
        t.join()
