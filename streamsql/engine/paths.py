"""Names and the workspace paths derived from them.

Every path built from a name (a query's folder) or from a stream's uid (its log and foreign
folders) is made by :func:`under`, which refuses any component that is not a plain identifier,
so no name can climb out of the workspace (``..``), point elsewhere (``/abs``), nest (``a/b``)
or be empty. Names users give are checked before anything is done with them:

- names that become paths (queries) must be plain identifiers (:func:`check_path_name`);
- SQL object names (streams, tables, views, pumps) and producer names may be anything a quoted
  SQL identifier can hold, but not empty, not longer than :data:`MAX_NAME` characters and
  without control characters (:func:`check_sql_name`). They never become paths: streams are
  stored under a uid made of safe characters.
"""
from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from . import environment
from .errors import BadNameError

#: the longest name (SQLstream's identifier limit)
MAX_NAME = 128

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMPONENT = re.compile(r"[A-Za-z0-9_]+")

PLAIN_RULE = (f"a plain identifier: a letter or _ then letters, digits or _, at most {MAX_NAME} "
              f"characters, e.g. hourly_totals")


def check_path_name(name, what: str = "query") -> str:
    """``name`` if it is a plain identifier (it will name a folder), else a clear error."""
    if not isinstance(name, str) or not _PLAIN.fullmatch(name) or len(name) > MAX_NAME:
        raise BadNameError(f"invalid {what} name {_show(name)}: a {what} name must be {PLAIN_RULE}")
    return name


def check_sql_name(name, what: str = "stream") -> str:
    """``name`` if a quoted SQL identifier could hold it: not empty, at most MAX_NAME characters,
    no control characters (NUL, newlines, ...)."""
    if not isinstance(name, str):
        raise BadNameError(f"invalid {what} name {_show(name)}: a {what} name is a string")
    if not name:
        raise BadNameError(f"invalid {what} name {_show(name)}: a {what} name cannot be empty")
    if len(name) > MAX_NAME:
        raise BadNameError(f"invalid {what} name {_show(name)}: a {what} name has at most {MAX_NAME} "
                         f"characters (this one has {len(name)})")
    bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise BadNameError(f"invalid {what} name {_show(name)}: it contains the control character "
                         f"U+{ord(bad):04X}")
    return name


def under(root: str | Path, *parts: str) -> Path:
    """``root/part/...``: the one way a path is made from a name or uid. Each part must be a
    plain identifier-like component (letters, digits, _), never empty, ``.``, ``..`` or a path."""
    p = Path(root)
    for part in parts:
        if not isinstance(part, str) or not _COMPONENT.fullmatch(part) or len(part) > 2 * MAX_NAME:
            raise BadNameError(f"refusing to make a workspace path from {_show(part)}: a path component "
                             f"must be letters, digits or _ only")
        p = p / part
    return p


def safe_component(name: str, limit: int = 40) -> str:
    """The part of a uid made from a name: ASCII letters and digits kept, anything else ``_``."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in name)[:limit]


def _show(name) -> str:
    if not isinstance(name, str):
        return f"{name!r} (a {type(name).__name__}, not a string)"
    r = repr(name)
    return r if len(r) <= 60 else r[:40] + f"...' ({len(name)} characters)"


def cache_dir() -> Path:
    """The user's cache of things streamsql builds once and keeps (Spark's class-data archive,
    the browser's Vega bundle): ``$STREAMSQL_CACHE_DIR``, else ``$XDG_CACHE_HOME/streamsql``,
    else ``~/.cache/streamsql``."""
    mine = environment.cache_dir()
    if mine:
        return Path(mine) / "streamsql"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "streamsql"


def private_dir(d: Path) -> Path:
    """``d``, made if missing, that only this user can enter (sockets, launchers, Spark's scratch
    files); refused when someone else owns it or others may enter it."""
    d.mkdir(mode=0o700, exist_ok=True)
    st = d.stat()
    if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise PermissionError(f"{d} is not this user's private directory")
    return d
