"""The temporary directory of each Spark driver JVM streamsql starts (its ``java.io.tmpdir``):
Spark's local directories, block manager files, artifacts and extracted native libraries go
there. It is named for the Python process that owns the JVM. A JVM killed with its owner
(SIGKILL skips Spark's exit hooks) would leave them in the system's temporary directory for
ever, one set per kernel; here the next start removes the directories of owners that are gone."""
from __future__ import annotations

import os
from pathlib import Path

from ... import tempdirs


def root() -> Path:
    """The user's directory of JVM temporary directories (only the user can enter it)."""
    return tempdirs.root("jvm")


def for_this_process() -> Path | None:
    """This process's JVM temporary directory (made now), after removing those of gone owners;
    None when it cannot be made (the JVM then keeps the system's default)."""
    try:
        d = root()
        tempdirs.prune_orphans(d)
        mine = d / str(os.getpid())
        mine.mkdir(mode=0o700, exist_ok=True)
        return mine
    except OSError:
        return None
