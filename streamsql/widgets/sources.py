"""Where ``streamsql.workbench("NAME")`` finds a session's queries by name: the magics add theirs
when loaded (the widgets sit below the magics, so they are told rather than importing them).
A module of its own, so that loading the magics does not import the views."""
from __future__ import annotations

#: functions giving this session's continuous queries by name
SESSION_QUERY_SOURCES: list = []


def session_queries() -> dict:
    out: dict = {}
    for f in SESSION_QUERY_SOURCES:
        out.update(f())
    return out
