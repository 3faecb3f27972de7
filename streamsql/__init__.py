"""streamsql: a Jupyter workbench for streaming SQL with exact rowtime-bound semantics, on Spark.

    import streamsql
    wb = streamsql.Workbench("my-workspace")          # engine="spark" (default) or "local"
    wb.execute("CREATE STREAM Orders (ticker VARCHAR(10), amount INTEGER)")
    q = wb.query("SELECT STREAM ROWTIME, ticker FROM Orders WHERE amount > 10")
    wb.insert("Orders", {"ticker": "ORCL", "amount": 20}, rowtime="2006-10-10 10:00:00")
    q.wait().rows

In a notebook: ``%load_ext streamsql`` and ``%%streamsql``.
"""
from importlib import import_module

#: the public names, imported when first used: Spark's Python workers import the package on
#: their way to one module (the log source, a stage), and each query start spawns a few of them
_LAZY = {"Workbench": "engine.workbench", "ContinuousQuery": "engine.workbench", "Event": "engine.catalog",
         "Outcome": "engine.catalog", **{n: "engine.errors" for n in (
             "BadNameError", "EventError", "LateRowError", "NameInUseError", "SqlError", "StreamSqlError",
             "WorkspaceError")}}

__all__ = ["Workbench", "ContinuousQuery", "Event", "Outcome", "SqlError", "EventError", "LateRowError",
           "StreamSqlError", "WorkspaceError", "NameInUseError", "BadNameError", "workbench", "exercise"]
__version__ = "0.1.0"


def workbench(query=None, **kw):
    """The composed notebook view of a running query (rows, injectors, timeline, step table),
    or of a scenario file with ``scenario=PATH``; see :func:`streamsql.widgets.workbench`."""
    from .widgets import workbench as _workbench   # ipywidgets and Altair load only when asked for
    return _workbench(query, **kw)


def exercise(name, **kw):
    """A saved scenario (``%streamsql save NAME``) as an exercise: its output hidden, the student
    predicts the step of each output row, then checks (a :class:`streamsql.widgets.Exercise`)."""
    from .widgets import exercise as _exercise
    return _exercise(name, **kw)


def load_ipython_extension(ipython):
    """``%load_ext streamsql`` registers the ``%%streamsql`` / ``%streamsql`` magics."""
    from .magics import load_ipython_extension as _load
    _load(ipython)


def _jupyter_labextension_paths():
    """JupyterLab's hook for the prebuilt extension inside the package (SQL highlighting of
    ``%%streamsql`` cells, built from labextension/): ``jupyter labextension develop``, which
    scripts/setup.sh runs for the editable install, links it where JupyterLab looks."""
    return [{"src": "labextension", "dest": "streamsql-labextension"}]


def __getattr__(name):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'streamsql' has no attribute {name!r}")
    value = getattr(import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
