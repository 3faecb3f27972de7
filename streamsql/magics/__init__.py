"""IPython magics: ``%load_ext streamsql``, then ``%%streamsql`` cells and ``%streamsql`` lines.

Loading the extension also makes Altair charts render through JupyterLab's built-in Vega-Lite
renderer (see :mod:`streamsql.widgets.vega`)."""
from __future__ import annotations

from .literals import interpolate, sql_literal
from .magic import StreamSql

__all__ = ["StreamSql", "load_ipython_extension", "current_workbench", "session_queries", "interpolate",
           "sql_literal"]

_loaded: dict[int, StreamSql] = {}


def load_ipython_extension(ip) -> None:
    """Register the magics once per shell (``%reload_ext`` keeps the same workbench)."""
    from ..widgets.compose import SESSION_QUERY_SOURCES
    from ..widgets.vega import enable_altair
    if session_queries not in SESSION_QUERY_SOURCES:    # streamsql.workbench("name") finds them
        SESSION_QUERY_SOURCES.append(session_queries)
    if id(ip) not in _loaded:
        magics = StreamSql(ip)
        ip.register_magics(magics)
        _loaded[id(ip)] = magics
        # Spark starts now, in the background, while the user writes the first query
        from ..engine.runtime.engines import prestart
        prestart(magics.engine, magics.master, remote=magics.remote)
        completer = getattr(ip, "Completer", None)
        if completer is not None:               # Tab in %%streamsql cells and %streamsql lines
            from .completion import make_matcher
            completer.custom_matchers.append(make_matcher(magics))
    enable_altair()


def current_workbench():
    """The workbench the magics of the running IPython use (opened if needed), for the Python API."""
    from IPython import get_ipython
    ip = get_ipython()
    if ip is None or id(ip) not in _loaded:
        raise RuntimeError("%load_ext streamsql first")
    return _loaded[id(ip)].kernel.wb


def session_queries() -> dict:
    """The continuous queries of this session's workbench by name (none when the magics are not
    loaded or their workbench was never opened: nothing is opened here)."""
    from IPython import get_ipython
    ip = get_ipython()
    m = _loaded.get(id(ip)) if ip is not None else None
    return dict(m.kernel.wb.queries) if m is not None and m.kernel.is_open else {}
