"""Errors a user can cause. Each one says what is wrong and where, and none of them leaves the
workbench in a half-changed state (the operation that raised changed nothing)."""
from __future__ import annotations

import re

from . import time as sqltime

_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def one_line(message: str, quoted: int = 80, limit: int = 500) -> str:
    """A message on one line: line breaks inside it (a multi-line snippet of SQL) become spaces,
    a quoted part longer than ``quoted`` characters keeps its start and end, and the whole stays
    under ``limit`` characters (a 10 MB value is not repeated in its error)."""
    if "\n" in message or "\r" in message:
        message = re.sub(r"\s*[\r\n]+\s*", " ", message)

    def shorten(m):
        t = m.group(1)
        return m.group(0) if len(t) <= quoted else f"'{t[:quoted // 2 - 2]} ... {t[-(quoted // 2 - 3):]}'"
    if len(message) > quoted:
        message = _QUOTED.sub(shorten, message)
    if len(message) > limit:
        message = f"{message[:limit // 2 - 10]} ...({len(message)} characters)... {message[-(limit // 2 - 20):]}"
    return message


class StreamSqlError(Exception):
    """Base of every error caused by user input (SQL, rows, bounds, files)."""


class SqlError(StreamSqlError):
    """A statement that does not parse or does not validate, with its position."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None,
                 sql: str | None = None):
        message = one_line(message)
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.sql = sql

    def located(self, sql: str, line_offset: int = 0, col_offset: int = 0) -> "SqlError":
        """The same error with its position moved into a larger text (a cell or a file)."""
        line = None if self.line is None else self.line + line_offset
        col = None if self.col is None else (self.col + col_offset if self.line == 1 else self.col)
        return SqlError(self.message, line, col, sql)

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        return f"line {self.line}:{self.col}: {self.message}"

    def caret(self) -> str:
        """The offending line with a caret under the column, for notebooks and terminals."""
        if self.sql is None or self.line is None:
            return str(self)
        lines = self.sql.splitlines() or [""]
        src = lines[self.line - 1] if 0 < self.line <= len(lines) else ""
        return f"{self}\n  {src}\n  {' ' * max(0, (self.col or 1) - 1)}^"


class BadNameError(StreamSqlError):
    """A name that cannot be used (empty, too long, with control characters, or not a plain
    identifier where it would name a folder). Nothing was done with it."""


class WorkspaceError(StreamSqlError):
    """A workspace that cannot be used as asked: a file in it that is corrupt or not ours, a
    workspace another process writes, a write to a read-only workbench, a failed write."""


class EventError(StreamSqlError):
    """An injected event refused for a reason other than lateness (bad values, a producer's
    bound going backwards, an unknown stream). Nothing was changed."""


class LateRowError(StreamSqlError):
    """A row below the stream's clock. It was rejected and written to the error stream."""

    def __init__(self, stream: str, rowtime: int, clock: int, producer: str | None = None,
                 producer_clock: bool = False):
        self.stream, self.rowtime, self.clock, self.producer = stream, rowtime, clock, producer
        who = f" from producer {producer}" if producer and producer != "default" else ""
        whose = "that producer's clock" if producer_clock else "the stream clock"
        super().__init__(
            f"late row{who} in stream {stream}: rowtime {sqltime.format_timestamp(rowtime)} is before "
            f"{whose} {sqltime.format_timestamp(clock)}; the row was rejected (see the error stream)")


class NameInUseError(StreamSqlError):
    """A name already taken (a running query's): not a fault of the SQL text."""
