"""The runtimes by name: the one place an engine name is compared. A runtime's module is
imported only when it is chosen, so a local workbench never imports pyspark."""
from __future__ import annotations

from .. import environment
from .base import Runtime
from .options import RuntimeOptions
from .port import RuntimeHost

ENGINES = ("spark", "local")


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"engine must be 'spark' or 'local', not {engine!r}")
    return engine


def make_runtime(engine: str, host: RuntimeHost, options: RuntimeOptions) -> Runtime:
    """The runtime named ``engine`` over workspace ``host``, with ``options``."""
    if check_engine(engine) == "local":
        from .local.driver import LocalRuntime
        return LocalRuntime(host, options)
    from .spark.driver import SparkRuntime
    return SparkRuntime(host, options)


def in_process_query(query, tables: dict, clocks: dict):
    """A query stepped in this process, event by event, inside the step that drives it (what a
    pump runs, whatever engine the workbench's queries run on): the local runtime's query."""
    from .local.stepper import LocalQuery
    return LocalQuery(query, tables, clocks)


def prestart(engine: str, master: str | None = None, conf: dict | None = None, log_dir=None,
             remote: str | None = None) -> bool:
    """Start engine ``engine`` ahead of its first use, in the background, where starting takes
    long (Spark: a JVM and a session, seconds); ``STREAMSQL_PRESTART=0`` turns it off."""
    if check_engine(engine) != "spark":
        return False
    from .spark.prestart import prestart as spark_prestart
    return spark_prestart(master or environment.master(), conf, log_dir, remote or environment.remote())


def engine_command(action: str, idle: float | None = None) -> str:
    """``streamsql engine start|status|stop``: one line saying what was done or found (the shared
    engine is Spark's; raises ``StreamSqlError`` with what to do when it cannot be used)."""
    from .spark import server
    if action == "start":
        return server.start(idle=idle).describe()
    if action == "stop":
        return server.stop()
    info = server.read_info()
    if info is None:
        return f"no shared engine is running ({server.engine_dir()})"
    server.check(info)
    return info.describe()
