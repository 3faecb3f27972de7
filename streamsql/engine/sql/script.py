"""Splitting a script into statements, keeping where each one starts.

The splitter only has to know what can hide a ``;``: string literals, quoted identifiers and
comments. Everything else is left to the parser, which sees one statement at a time and whose
error positions are moved back into the script with the start recorded here.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ScriptStatement:
    sql: str
    line: int   # 1-based line of the statement's first character in the script
    col: int    # 1-based column of that character


def _skip_quoted(text: str, i: int, quote: str) -> int:
    """Index just past the quoted run starting at ``text[i]`` (a doubled quote escapes it)."""
    n = len(text)
    i += 1
    while i < n:
        if text[i] == quote:
            if i + 1 < n and text[i + 1] == quote:
                i += 2
                continue
            return i + 1
        i += 1
    return n


def _skip_comment(text: str, i: int) -> int:
    """Index just past the comment starting at ``text[i]``, or ``i`` if none starts there."""
    if text.startswith("--", i):
        j = text.find("\n", i)
        return len(text) if j < 0 else j + 1
    if text.startswith("/*", i):
        j = text.find("*/", i + 2)
        return len(text) if j < 0 else j + 2
    return i


def skip_blank(text: str, i: int, end: int | None = None) -> int:
    """First index at or after ``i`` that is neither whitespace nor inside a comment."""
    end = len(text) if end is None else end
    while i < end:
        if text[i].isspace():
            i += 1
            continue
        j = _skip_comment(text, i)
        if j == i:
            return i
        i = j
    return end


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def split_script(text: str) -> list[ScriptStatement]:
    """Split on ``;`` outside strings, quoted identifiers and comments; drop empty statements.

    Each statement's text starts at its first token (leading blanks and comments are skipped so
    positions point at real SQL) and ends before its ``;`` without trailing whitespace."""
    out: list[ScriptStatement] = []
    n = len(text)
    start = 0
    i = 0

    def emit(a: int, b: int) -> None:
        first = skip_blank(text, a, b)
        if first >= b:
            return
        sql = text[first:b].rstrip()
        line, col = _line_col(text, first)
        out.append(ScriptStatement(sql, line, col))

    while i < n:
        c = text[i]
        if c in ("'", '"'):
            i = _skip_quoted(text, i, c)
        elif c in "-/":
            j = _skip_comment(text, i)
            i = j if j > i else i + 1
        elif c == ";":
            emit(start, i)
            i += 1
            start = i
        else:
            i += 1
    emit(start, n)
    return out
