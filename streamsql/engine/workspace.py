"""The files of a workspace that are not the log: the catalog snapshot, read through one checked
reader (a file that is not a streamsql catalog is an error naming it, never executed), and the
emptying of a workspace for a fresh start (only when no other process writes it)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from . import time as sqltime
from .catalog import Catalog
from .errors import StreamSqlError, WorkspaceError
from .lock import LOCK_FILE, WorkspaceLock
from .log import entry_schema
from .paths import under

#: 2: the step is called ``step`` in every file of the workspace (``next_step``, the queries' and
#: pumps' ``start_step``, the journal's entries, the log's column and ``log/HEAD``); version 1 called
#: it ``seq``, and is read by renaming (:func:`_from_v1`; the log and the journal read either name)
CATALOG_VERSION = 2


def read_only_error(path: Path, what: str) -> WorkspaceError:
    """The error of a write (``what`` names it) on a workbench that opened ``path`` read-only."""
    return WorkspaceError(f"this workbench is read-only ({path}): {what} needs the workspace's "
                          f"writer; open it with Workbench(path) once no other process has it")


def clear_workspace(path: str | Path) -> None:
    """Empty a workspace for a fresh start (``%streamsql reset``), only if no process writes it
    (else the WorkspaceError naming that process); the lock file stays."""
    p = Path(path)
    lock = WorkspaceLock(p).acquire()
    try:
        for child in p.iterdir():
            if child.name == LOCK_FILE:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    finally:
        lock.release()


def streams_with_events(c: Catalog) -> list[str]:
    """The uids of the user streams that have had any event (a clock, producers, rows): those
    the journal tracks from a snapshot older than it."""
    return [d.uid for n, d in c.streams.items() if not d.system and _has_events(c.state[n])]


def _has_events(st) -> bool:
    return bool(st.bound > sqltime.NO_TIME or st.producers or st.pending or st.rows_in or st.late_count)


def read_catalog(p: Path) -> tuple[Catalog, dict, int, dict | None]:
    """A workspace's catalog snapshot: (catalog, query definitions, query counter, the event
    journal's state or None for a workspace older than the journal). A file that is
    not one (corrupt, truncated, another program's, a newer version) is a WorkspaceError naming it;
    nothing in it is ever executed."""
    def bad(why: str) -> WorkspaceError:
        return WorkspaceError(f"{p} is not a streamsql catalog ({why}); the workspace cannot be opened: "
                              f"restore the file from a copy, or open another workspace")
    try:
        j = json.loads(p.read_bytes())
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise bad(f"not valid JSON: {str(e)[:120]}") from None
    if not isinstance(j, dict) or not isinstance(j.get("catalog"), dict):
        raise bad("no \"catalog\" object")
    v = j.get("version")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise bad(f"version {v!r:.20}")
    if v > CATALOG_VERSION:
        raise WorkspaceError(f"{p} was written by a newer streamsql (catalog version {v}; this one reads "
                             f"{CATALOG_VERSION}): upgrade streamsql to open the workspace")
    try:
        if v == 1:
            _from_v1(j)
        c = Catalog.from_json(j["catalog"])
        for d in c.streams.values():
            under(p.parent, d.uid)       # a uid is a folder name of the log: never a path
            entry_schema(d.fields)       # every column type is one we know
        queries = j.get("queries", {})
        counter = j.get("query_counter", 0)
        if not isinstance(queries, dict) or not all(isinstance(d, dict) for d in queries.values()):
            raise TypeError("\"queries\" is not an object of query definitions")
        if not isinstance(counter, int):
            raise TypeError("\"query_counter\" is not a number")
        if not isinstance(c.next_step, int) or c.next_step < 1:
            raise TypeError("\"next_step\" is not a positive number")
        journal = j.get("journal")
        if journal is not None and not (isinstance(journal, dict) and isinstance(journal.get("since"), int)
                                        and isinstance(journal.get("flushed"), int)):
            raise TypeError("\"journal\" is not the event journal's state")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError, StreamSqlError) as e:
        raise bad(f"{type(e).__name__}: {str(e)[:120]}") from None
    return c, queries, counter, journal


def _from_v1(j: dict) -> None:
    """A version-1 snapshot in this version's names, in place: the step was called ``seq``."""
    def rename(d, old: str, new: str) -> None:
        if isinstance(d, dict) and old in d and new not in d:
            d[new] = d.pop(old)

    rename(j["catalog"], "next_seq", "next_step")
    for p in j["catalog"].get("pumps") or []:
        rename(p, "start_seq", "start_step")
    queries = j.get("queries")
    for d in (queries.values() if isinstance(queries, dict) else ()):
        rename(d, "start_seq", "start_step")
    journal = j.get("journal")
    if isinstance(journal, dict):
        for e in journal.get("tail") or ():
            rename(e, "seq", "step")
