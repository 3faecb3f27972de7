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


def owner_pid(d: Path) -> int | None:
    """The pid a per-process temporary directory is named for (``1234`` or ``1234-xyz``)."""
    head = d.name.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def prune_orphans(root: Path) -> list[Path]:
    """Remove the directories in ``root`` whose owning process is gone; returns them. A process
    killed with SIGKILL runs no exit hook, and a Spark thread may still write a state snapshot
    into a temporary workspace after it was removed, so removal at exit alone leaks."""
    gone = []
    for p in root.iterdir():
        pid = owner_pid(p)
        if pid is not None and p.is_dir() and pid != os.getpid() and not process_alive(pid):
            shutil.rmtree(p, ignore_errors=True)
            gone.append(p)
    return gone


def temporary_dir(kind: str) -> Path:
    """A new temporary directory of this process (a workspace opened without a path, a twin's
    checkpoint): ``$TMPDIR/streamsql-KIND-UID/PID-xxxx``, only the user can enter it, made after
    removing those of processes that are gone (:func:`prune_orphans`)."""
    root = private_dir(Path(tempfile.gettempdir()) / f"streamsql-{kind}-{os.getuid()}")
    try:
        prune_orphans(root)
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root))
