"""The workbench's side of the runtime port: a :class:`~streamsql.engine.runtime.port.RuntimeHost`
over one workbench. A runtime reaches the workspace through this object alone; each method says
which part of the workbench answers (the commit path, the lifecycle, the log), so the runtime
never climbs into them itself."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable


class WorkbenchHost:
    """The host a workbench gives its runtime (and its foreign readers)."""

    def __init__(self, wb):
        self._wb = wb

    @property
    def path(self) -> Path:
        return self._wb.path

    @property
    def read_only(self) -> bool:
        return self._wb.read_only

    @property
    def catalog(self):
        return self._wb.catalog

    @property
    def log(self):
        return self._wb.log

    @property
    def lock(self):
        return self._wb.lock

    @property
    def last_step(self) -> int:
        return self._wb.last_step

    def last_step_of(self, streams: Iterable[str]) -> int:
        return self._wb.last_step_of(streams)

    def clock(self, stream: str) -> int | None:
        return self._wb.clock(stream)

    def feeds(self, streams, start: int, end: int) -> list:
        return self._wb.commits.feeds(streams, start, end)

    def leaf_rows(self, node) -> list:
        from .relational import leaf_rows
        return leaf_rows(self._wb, node)

    def load(self, stream: str, table):
        return self._wb.load(stream, table)

    def save_catalog(self) -> None:
        self._wb.save_catalog()

    def commit_operator_errors(self, q, errors: list, batch: int | None) -> None:
        self._wb.commits.operator_errors(q, errors, batch)

    def hand_over_operator_errors(self, q, errors: list, batch: int | None) -> None:
        # under the workbench's lock, which a delivery thread must not wait for (a statement
        # holding it may be stopping this query, which waits for this delivery): the lock's
        # holder commits them if it is held
        commits = self._wb.commits
        self._wb.lock.run_when_free(lambda: commits.operator_errors(q, errors, batch))

    def commit_handed_over(self) -> None:
        lock = self._wb.lock
        if not lock.held_by_me():
            with lock:      # its release commits what a delivery handed over (ERRORS)
                pass

    def errors_committed_through(self, query: str) -> int | None:
        return self._wb.lifecycle.errors_committed_through(query)
