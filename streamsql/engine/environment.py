"""The environment variables streamsql reads: each one is read here, by one function, and nowhere
else, so that the table in docs/api.md ("Settings from the environment") can name them all and
say who uses each (tests/test_docs.py holds the table and this module to each other).

Every function reads the environment when it is called (a parent sets a variable for the
processes it starts; a test sets one for a moment) and gives the value in the form its caller
uses; a caller that needs a value checked says what is wrong with it. This module imports
nothing of the package, so every layer may use it.
"""
from __future__ import annotations

import os


def _get(name: str, default: str | None = None) -> str | None:
    """The variable's value; an empty value counts as unset."""
    return os.environ.get(name) or default


# --------------------------------------------------------------------------- where Spark runs

def master() -> str | None:
    """``STREAMSQL_MASTER``: the Spark master URL when the caller names none."""
    return _get("STREAMSQL_MASTER")


def remote() -> str | None:
    """``STREAMSQL_REMOTE``: the Spark Connect endpoint when the caller names none."""
    return _get("STREAMSQL_REMOTE")


def engine() -> str:
    """``STREAMSQL_ENGINE``: ``auto`` (the default), ``shared`` or ``process``, as written (the
    Spark runtime's ``server.mode`` checks it and decides)."""
    return _get("STREAMSQL_ENGINE", "auto")


def engine_dir() -> str | None:
    """``STREAMSQL_ENGINE_DIR``: the shared engine's directory."""
    return _get("STREAMSQL_ENGINE_DIR")


def engine_idle() -> str | None:
    """``STREAMSQL_ENGINE_IDLE``: seconds without a client before the shared engine stops."""
    return _get("STREAMSQL_ENGINE_IDLE")


def engine_master() -> str:
    """``STREAMSQL_ENGINE_MASTER``: the master of the shared engine's own Spark."""
    return _get("STREAMSQL_ENGINE_MASTER", "local[*]")


# --------------------------------------------------------------------------- how Spark starts

def prestart() -> bool:
    """``STREAMSQL_PRESTART=0`` turns the background start of Spark off."""
    return _get("STREAMSQL_PRESTART") != "0"


def class_data() -> bool:
    """``STREAMSQL_CDS=0`` starts the driver JVM without the class-data archive."""
    return _get("STREAMSQL_CDS") != "0"


def jit() -> str:
    """``STREAMSQL_JIT``: the driver JVM's compilers, ``quick`` (the default) or ``full``, as written."""
    return _get("STREAMSQL_JIT", "quick")


def java_options() -> str:
    """``STREAMSQL_JAVA_OPTIONS``: more options for the driver JVM."""
    return _get("STREAMSQL_JAVA_OPTIONS", "")


def forkserver() -> bool:
    """``STREAMSQL_FORKSERVER=0`` starts Spark's per-query Python processes cold."""
    return _get("STREAMSQL_FORKSERVER") != "0"


#: set by the shared engine for its fork server (``1``: warm the Connect runners too)
FORK_CONNECT = "STREAMSQL_FORK_CONNECT"


def fork_connect() -> bool:
    """``STREAMSQL_FORK_CONNECT=1``: the fork server also imports PySpark's Connect runners."""
    return _get(FORK_CONNECT) == "1"


def cache_dir() -> str | None:
    """``STREAMSQL_CACHE_DIR``: where things built once are kept."""
    return _get("STREAMSQL_CACHE_DIR")


# --------------------------------------------------------------------------- how queries run

#: named in the message of a GROUP BY that needs it off
PRECOMBINE = "STREAMSQL_PRECOMBINE"


def precombine() -> bool:
    """``STREAMSQL_PRECOMBINE=0`` steps every GROUP BY started afterwards row by row."""
    return _get(PRECOMBINE) != "0"


# --------------------------------------------------------------------------- checks

def lockdep() -> bool:
    """``STREAMSQL_LOCKDEP=1`` records the order in which threads take streamsql's locks."""
    return _get("STREAMSQL_LOCKDEP") == "1"


def lockdep_dir() -> str | None:
    """``STREAMSQL_LOCKDEP_DIR``: where the lock-order recorder writes what it finds."""
    return _get("STREAMSQL_LOCKDEP_DIR")
