"""Event files (the semantics, section 5): one JSON object per line, each a row, a bound, or a
producer attaching or detaching. Read by ``streamsql replay``, the scenario player and the
tutorials."""
from __future__ import annotations

import json
from pathlib import Path

from . import time as sqltime
from .catalog import Event
from .errors import one_line


class EventsFileError(Exception):
    pass


def read_events(path: str | Path) -> list[Event]:
    """Events of a ``.events.jsonl`` file (UTF-8, an optional BOM; blank lines skipped, not
    counted). Anything that is not one event per line is an EventsFileError naming the line."""
    out = []
    data = Path(path).read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for n, raw in enumerate(data.splitlines(), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise EventsFileError(f"{path}:{n}: not UTF-8 text (byte 0x{raw[e.start]:02x} at column "
                                  f"{e.start + 1})") from None
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except RecursionError:
            raise EventsFileError(f"{path}:{n}: JSON nested too deeply") from None
        except ValueError as e:
            raise EventsFileError(f"{path}:{n}: not a JSON object: {str(e)[:200]}") from None
        out.append(event_from_json(d, f"{path}:{n}"))
    return out


def event_from_json(d: dict, where: str = "event") -> Event:
    if not isinstance(d, dict) or not isinstance(d.get("stream"), str):
        raise EventsFileError(f"{where}: an event needs a \"stream\" name (a string)")
    prod = d.get("producer")
    for key in ("strict", "attach", "detach"):
        if key in d and not isinstance(d[key], bool):
            raise EventsFileError(f"{where}: \"{key}\" must be true or false, not {json.dumps(d[key])[:40]}")
    key = "rowtime"
    try:
        if d.get("detach"):
            return Event(d["stream"], "detach", producer=prod)
        if d.get("attach"):
            return Event(d["stream"], "attach", producer=prod)
        if "bound" in d:
            key = "bound"
            return Event(d["stream"], "bound", sqltime.parse_timestamp(d["bound"]), strict=bool(d.get("strict")),
                         producer=prod)
        if "rowtime" in d:
            vals = d.get("values", {})
            if not isinstance(vals, dict):
                raise EventsFileError(f"{where}: \"values\" must be an object")
            return Event(d["stream"], "row", sqltime.parse_timestamp(d["rowtime"]), vals, producer=prod)
    except (sqltime.TimeFormatError, OverflowError, ValueError) as e:
        raise EventsFileError(f"{where}: \"{key}\": {one_line(str(e), limit=200)}") from None
    raise EventsFileError(f"{where}: an event needs \"rowtime\" (a row), \"bound\", \"attach\" or \"detach\"")
