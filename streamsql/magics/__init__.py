"""IPython magics: ``%load_ext streamsql``, then ``%%streamsql`` cells and ``%streamsql`` lines.

Loading the extension also makes Altair charts render through JupyterLab's built-in Vega-Lite
renderer (see :mod:`streamsql.widgets.vegalite`), from the moment Altair is imported. It imports no
view and no Altair: the views load when a cell first shows one."""
from __future__ import annotations

from .literals import interpolate, sql_literal
from .magic import StreamSql

__all__ = ["StreamSql", "load_ipython_extension", "current_workbench", "session_queries", "interpolate",
           "sql_literal"]

_loaded: dict[int, StreamSql] = {}


def load_ipython_extension(ip) -> None:
    """Register the magics once per shell (``%reload_ext`` keeps the same workbench). Quick: the
    engine's modules and Spark's session come in a background thread, started last (it takes the
    interpreter's lock from the rest of this call), and the views load when first shown."""
    from ..widgets.sources import SESSION_QUERY_SOURCES
    from ..widgets.vegalite import enable_altair_when_imported
    if session_queries not in SESSION_QUERY_SOURCES:    # streamsql.workbench("name") finds them
        SESSION_QUERY_SOURCES.append(session_queries)
    enable_altair_when_imported()         # Altair itself loads with the first chart
    if id(ip) in _loaded:
        return
    magics = StreamSql(ip)
    ip.register_magics(magics)
    _loaded[id(ip)] = magics
    completer = getattr(ip, "Completer", None)
    if completer is not None:               # Tab in %%streamsql cells and %streamsql lines
        from .completion import make_matcher
        completer.custom_matchers.append(make_matcher(magics))
    from .warmup import warm_up
    # in the background, while the user writes the first query: Spark starts (or its Connect
    # session opens) and the engine's modules are imported
    warm_up(magics.engine, magics.master, magics.remote)


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
