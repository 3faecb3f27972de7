"""The runtimes by name: the one place an engine name is compared. A runtime's module is
imported only when it is chosen, so a local workbench never imports pyspark."""
from __future__ import annotations

from .base import Runtime

ENGINES = ("spark", "local")


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"engine must be 'spark' or 'local', not {engine!r}")
    return engine


def make_runtime(engine: str, wb) -> Runtime:
    """The runtime named ``engine`` for workbench ``wb``."""
    if check_engine(engine) == "local":
        from .local.driver import LocalRuntime
        return LocalRuntime(wb)
    from .spark.driver import SparkRuntime
    return SparkRuntime(wb)
