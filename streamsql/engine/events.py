"""Event files (SEMANTICS.md section 5): one JSON object per line, each a row, a bound, or a
producer attaching or detaching. Read by ``streamsql replay``, the scenario player and the
tutorials."""
from __future__ import annotations

import json
from pathlib import Path

from . import time as T
from .catalog import Event


class EventsFileError(Exception):
    pass


def read_events(path: str | Path) -> list[Event]:
    """Events of a ``.events.jsonl`` file (blank lines skipped, not counted)."""
    out = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except ValueError as e:
            raise EventsFileError(f"{path}:{n}: not a JSON object: {e}") from None
        out.append(event_from_json(d, f"{path}:{n}"))
    return out


def event_from_json(d: dict, where: str = "event") -> Event:
    if not isinstance(d, dict) or not isinstance(d.get("stream"), str):
        raise EventsFileError(f"{where}: an event needs a \"stream\" name")
    prod = d.get("producer")
    try:
        if d.get("detach"):
            return Event(d["stream"], "detach", producer=prod)
        if d.get("attach"):
            return Event(d["stream"], "attach", producer=prod)
        if "bound" in d:
            return Event(d["stream"], "bound", T.parse_timestamp(d["bound"]), strict=bool(d.get("strict")),
                         producer=prod)
        if "rowtime" in d:
            vals = d.get("values", {})
            if not isinstance(vals, dict):
                raise EventsFileError(f"{where}: \"values\" must be an object")
            return Event(d["stream"], "row", T.parse_timestamp(d["rowtime"]), vals, producer=prod)
    except T.TimeFormatError as e:
        raise EventsFileError(f"{where}: {e}") from None
    raise EventsFileError(f"{where}: an event needs \"rowtime\" (a row), \"bound\", \"attach\" or \"detach\"")
