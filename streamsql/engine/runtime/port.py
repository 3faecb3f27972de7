"""What a runtime may ask of the workspace it runs in: the :class:`RuntimeHost`. A runtime is made
with a host and its :class:`~streamsql.engine.runtime.options.RuntimeOptions`, never with the
workbench, so what it reads and what it changes of the workspace is this list and no more
(the workbench's side is :mod:`streamsql.engine.runtime_host`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Protocol


class RuntimeHost(Protocol):
    """The workspace as a runtime sees it."""

    @property
    def path(self) -> Path:
        """The workspace directory (queries' checkpoints and sinks live under it)."""

    @property
    def read_only(self) -> bool:
        """Whether this process only reads the workspace (no logs, no query folders written)."""

    @property
    def catalog(self):
        """The current :class:`~streamsql.engine.catalog.Catalog` (replaced by an undo: ask
        each time, never keep it)."""

    @property
    def log(self):
        """The workspace's :class:`~streamsql.engine.log.EventLog` (HEAD, holds)."""

    @property
    def lock(self):
        """The workbench's lock, for the foreign readers' loads (taken first: docs/design.md,
        "Threads and locks")."""

    @property
    def last_step(self) -> int:
        """The last committed step (0 before any)."""

    def last_step_of(self, streams: Iterable[str]) -> int:
        """The last committed step with an event of one of ``streams``; never waits for the lock."""

    def clock(self, stream: str) -> int | None:
        """The clock of ``stream`` (None before its first row or bound)."""

    def feeds(self, streams, start: int, end: int) -> list:
        """The committed log entries of ``streams`` with ``start < step <= end``, by event."""

    def leaf_rows(self, node) -> list:
        """The rows of a relational leaf (a table, VALUES, a stream's history)."""

    def load(self, stream: str, table) -> Any:
        """A bulk load into ``stream`` (a foreign reader's file), under :attr:`lock`."""

    def save_catalog(self) -> None:
        """Write the catalog snapshot (a foreign reader's files done), under :attr:`lock`."""

    def commit_operator_errors(self, q, errors: list, batch: int | None) -> None:
        """Commit rows ``q``'s operators refused (``(stream, OperatorError)``) to the error stream
        now, taking the workbench's lock (a resumed query's deliveries a crash cut off)."""

    def hand_over_operator_errors(self, q, errors: list, batch: int | None) -> None:
        """The same from a delivery thread, which must not wait for the lock: committed now if
        it is free, else by its holder when it lets go."""

    def commit_handed_over(self) -> None:
        """Let the commits handed over so far run (a wait's end), unless this thread holds the
        lock (its own release runs them)."""

    def errors_committed_through(self, query: str) -> int | None:
        """The last delivery of ``query`` whose refused rows are committed (None: none recorded)."""
