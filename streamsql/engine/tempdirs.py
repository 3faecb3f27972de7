"""Temporary directories of this process (a workspace opened without a path, a twin's checkpoint,
the Spark driver's scratch files), named for the process so that the next one made removes
those whose process is gone."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .lock import process_alive
from .paths import private_dir


def root(kind: str) -> Path:
    """The user's folder of per-process temporary directories of ``kind`` (only the user can
    enter it): ``$TMPDIR/streamsql-KIND-UID``."""
    return private_dir(Path(tempfile.gettempdir()) / f"streamsql-{kind}-{os.getuid()}")


def _owner_pid(d: Path) -> int | None:
    """The pid a per-process temporary directory is named for (``1234`` or ``1234-xyz``)."""
    head = d.name.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def prune_orphans(folder: Path) -> list[Path]:
    """Remove the directories and files in ``folder`` named for a process that is gone (``1234``,
    ``1234-xyz``); returns them. A process killed with SIGKILL runs no exit hook, and a Spark
    thread may still write a state snapshot into a temporary workspace after it was removed, so
    removal at exit alone leaks."""
    gone = []
    for p in folder.iterdir():
        pid = _owner_pid(p)
        if pid is None or process_alive(pid):
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        gone.append(p)
    return gone


def temporary_dir(kind: str) -> Path:
    """A new temporary directory of this process (a workspace opened without a path, a twin's
    checkpoint): ``root(kind)/PID-xxxx``, made after removing those of processes that are gone
    (:func:`prune_orphans`)."""
    folder = root(kind)
    try:
        prune_orphans(folder)
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=folder))
