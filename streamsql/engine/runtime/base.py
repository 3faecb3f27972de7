"""The one seam between the workbench and an engine: everything a query needs from a runtime.

The workbench picks its runtime once (:func:`~streamsql.engine.runtime.engines.make_runtime`);
nothing else compares engine names. A runtime is made with a host (``runtime/port.py``: what it
may ask of the workspace) and its options (``runtime/options.py``), never with the workbench. It
runs continuous queries (``start``/``stop``/``wait``), may see each event before its commit (``in_process``: the local runtime steps its
queries inline so that rows an operator refuses reach the error stream at their own step), and
hosts the engine-specific parts of relational queries, foreign streams, file sinks and explain.
The engine-independent parts of those stay in the engine: the order rules of relational
evaluation (:mod:`~streamsql.engine.relational`), the options, typing and stamping of foreign
files (:mod:`~streamsql.engine.foreign`), the naming and idempotence of sink files
(:mod:`~streamsql.engine.sinks`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from .options import RuntimeOptions
from .port import RuntimeHost


class Runtime(ABC):
    #: the name users give it (``Workbench(engine=...)``, ``--engine``)
    name: str = ""
    #: how the notebooks and tutorials name it ("streamsql on Spark")
    label: str = ""

    def __init__(self, host: RuntimeHost, options: RuntimeOptions):
        #: what the runtime may ask of the workspace (runtime/port.py): never the workbench itself
        self.host = host
        self.options = options

    # ------------------------------------------------------------------ continuous queries

    @abstractmethod
    def start(self, q, resume: bool = False) -> None:
        """Start ``q`` (a :class:`~streamsql.engine.continuous_query.ContinuousQuery`); with ``resume``,
        carry on from what the workspace kept of it."""

    @abstractmethod
    def stop(self, q) -> None:
        """Stop ``q``; its rows so far stay with it."""

    @abstractmethod
    def wait(self, q, timeout: float | None = None) -> None:
        """Block until ``q`` has processed every committed event."""

    def caught_up(self, q) -> bool:
        """Whether ``q`` has processed every committed event, without waiting (views refresh
        their saved snapshots only then); an in-process runtime always has."""
        return True

    def close(self) -> None:
        """Stop every query of this runtime (the workspace keeps their definitions)."""

    # ------------------------------------------------------------------ the commit path

    @property
    def in_process(self) -> bool:
        """Whether :meth:`process_inline` must see events before their commit."""
        return False

    def process_inline(self, step: int, feed: dict, readers_of_errors: bool) -> list:
        """Step in-process queries through one event before its commit; returns ``(query,
        stream, OperatorError)`` for rows an operator refused."""
        return []

    def write_head(self, head: int, first: str | None, before: int, streams) -> None:
        """Step 3 of a commit of the steps ``(before, head]`` (events of ``streams``): let
        queries read them. ``first``: the query of the view whose injector sent them, which a
        runtime may run before the others (only its timing changes); here every query at once."""
        self.host.log.write_head(head)

    def notify(self, feeds: list, head: int) -> None:
        """After a commit: ``feeds`` are the events just committed, ``head`` the last step."""

    def rebuild(self, head: int) -> None:
        """An append failed before its commit: state that saw its events in-process goes back to
        step ``head`` (rebuilt from the log), and nothing of it is delivered."""

    # ------------------------------------------------------------------ the rest of a session

    @abstractmethod
    def relational(self, root) -> list[tuple]:
        """The rows of a relational (non-STREAM) plan ``root``, as ``(rowtime or None, values)``
        in the order :mod:`~streamsql.engine.relational` defines."""

    @abstractmethod
    def foreign_reader(self, stream: str):
        """A :class:`~streamsql.engine.foreign.FileReader` for foreign stream ``stream``
        (not started)."""

    @abstractmethod
    def file_sink(self, q, path, fmt: str):
        """A :class:`~streamsql.engine.sinks.FileSink` writing ``q``'s released rows to
        ``path`` in ``fmt`` (``parquet`` or ``csv``)."""

    def native_twin(self, q, shape, delay_ms: int, start: int):
        """A running native twin of ``q`` (``shape``: a :class:`~streamsql.engine.native.NativeShape`),
        reading the events after step ``start``: an object with ``feed(events) -> [NativeStep]``
        and ``stop()``. Only Spark has one."""
        from ..native import NativeUnsupported
        raise NativeUnsupported(f"no native Spark twin on the {self.name} engine: it runs on the Spark engine")

    @abstractmethod
    def explain(self, q) -> str:
        """The plan this engine runs for ``q``, as stable text (no ids, hashes or paths)."""
