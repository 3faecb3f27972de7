"""Cyclic garbage collection paused while a batch builds many small objects."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """No cyclic garbage collection while a batch builds its state: it makes millions of
    tuples and deques, none cyclic, and each collection would walk all of the state."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
