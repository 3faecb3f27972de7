"""One writer per workspace.

A writing workbench holds an exclusive ``fcntl.flock`` on ``<workspace>/LOCK`` for as long as it
is open; the OS releases it when the process ends, however it ends. The file also holds the
owner's pid, host and start time, only so that a refused opener can say who has the workspace,
and so that an opener that finds a dead owner's record says it took the workspace over. The file
is never deleted (deleting a flock'ed file would let two processes lock two different files).
Readers (``Workbench(path, read_only=True)``) take no lock.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import gc
import json
import os
import socket
from pathlib import Path

from .errors import WorkspaceError

LOCK_FILE = "LOCK"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):      # no /proc (macOS): kill(pid, 0) has answered
        return True


def lock_owner(root: str | Path) -> dict | None:
    """Who last took the workspace's lock (``pid``, ``host``, ``since``), or None."""
    try:
        j = json.loads((Path(root) / LOCK_FILE).read_bytes() or b"null")
    except (OSError, ValueError):
        return None
    return j if isinstance(j, dict) and isinstance(j.get("pid"), int) else None


class WorkspaceLock:
    def __init__(self, root: str | Path):
        self.path = Path(root) / LOCK_FILE
        self.fd: int | None = None
        #: set when the lock of a process that is gone was taken over
        self.took_over: str | None = None

    def acquire(self) -> "WorkspaceLock":
        """Take the lock or raise a WorkspaceError naming the process that has it."""
        for attempt in range(2):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                owner = lock_owner(self.path.parent) or {}
                if attempt == 0 and owner.get("pid") == os.getpid():
                    gc.collect()    # a workbench of this process that nobody refers to any more
                    continue
                raise WorkspaceError(self._refusal(owner)) from None
            break
        self.fd = fd
        prev = lock_owner(self.path.parent)
        if prev and (prev.get("pid") != os.getpid() or prev.get("host") != socket.gethostname()):
            gone = (" (not running any more)" if prev.get("host") == socket.gethostname() and not process_alive(prev["pid"])
                    else "")
            self.took_over = (f"workspace {self.path.parent}: took over the lock left by process {prev['pid']} on "
                              f"{prev.get('host')}{gone}, which ended without closing it")
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "since": dt.datetime.now().isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        return self

    def _refusal(self, owner: dict) -> str:
        who = (f"process {owner['pid']} on {owner.get('host')} (since {owner.get('since')})" if owner
               else "another process")
        if owner.get("pid") == os.getpid() and owner.get("host") == socket.gethostname():
            who = "another Workbench of this process"
        return (f"workspace {self.path.parent} is in use by {who}: one writer per workspace. Close that "
                f"workbench (or stop its kernel), or open this one read-only: Workbench(path, read_only=True)")

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)      # nobody owns it now: no take-over warning for the next opener
        except OSError:
            pass
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)
            self.fd = None

    def __del__(self):   # a workbench dropped without close(): the OS lock goes with the descriptor
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
