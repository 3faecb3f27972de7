"""What a runtime is told when it is made, and nothing later: the settings it reads, declared in
one frozen record (:class:`RuntimeOptions`), so that no setting reaches it by an attribute patched
onto the workbench. ``Workbench(..., options=RuntimeOptions(...))`` or the same names as keyword
arguments build it; the workbench hands it to its runtime with the host
(:mod:`~streamsql.engine.runtime.port`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

READERS = ("simple", "parallel")


@dataclass(frozen=True)
class RuntimeOptions:
    """A runtime's settings. The workbench resolves ``master`` and ``remote`` from the
    environment (``STREAMSQL_MASTER``, ``STREAMSQL_REMOTE``) before it builds them."""

    #: the Spark master URL (None: ``local[*]``); a cluster's workers must read the workspace
    master: str | None = None
    #: a Spark Connect endpoint (``sc://host:port``); None: the shared engine or this process's Spark
    remote: str | None = None
    #: Spark settings for a session this process starts
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    #: how many key buckets every stateful operator is spread over
    buckets: int = 1
    #: at most this many events per Spark micro-batch (None: no cap)
    batch_events: int | None = None
    #: ``simple`` (a driver-side log reader: the quickest one-event steps) or ``parallel``
    #: (parallel Spark tasks: replays of many events)
    reader: str = "simple"
    #: fsync what the workspace writes
    durable: bool = True
    #: keep a per-event trace of every query (operator presents, held rows and why) ...
    trace: bool = True
    #: ... of its last ``trace_steps`` steps
    trace_steps: int = 10_000
    #: render the calculator-error checks in Spark's SQL (False only for a benchmark's baseline
    #: without them: wrap-around and NULLs instead of refused rows)
    check_calc_errors: bool = True
    #: events per partition of the Spark log source's parallel reader (None: its default)
    partition_events: int | None = None
    #: called right before a Spark session starts (it takes seconds): a notebook says so
    on_spark_start: Callable[[], None] | None = None
    #: called with each phase of a Spark start-up a query start waits for (``engine/startup.py``)
    on_spark_phase: Callable[..., None] | None = None

    def __post_init__(self):
        if self.reader not in READERS:
            raise ValueError(f"reader must be 'simple' or 'parallel', not {self.reader!r}")
        # normalised once here, so that every reader of the options sees the same values
        object.__setattr__(self, "buckets", max(1, int(self.buckets)))
        object.__setattr__(self, "spark_conf", dict(self.spark_conf or {}))
        object.__setattr__(self, "trace_steps", max(0, int(self.trace_steps or 0)) if self.trace else 0)
