"""Old public names kept for one release: reading or setting one warns with a
``DeprecationWarning`` that names the new name.

The code used to call the step of an event ``seq``; these aliases read the new names:
``Workbench.last_seq``, ``ContinuousQuery.start_seq`` and ``processed_seq``, ``Outcome.seq``
and ``ReleasedBatch.seq``. They go away in the next release.
"""
from __future__ import annotations

import warnings


def renamed(old: str, new: str) -> property:
    """A property ``old`` that reads and sets the attribute ``new``, with a DeprecationWarning."""
    def warn(obj) -> None:
        cls = type(obj).__name__
        warnings.warn(f"{cls}.{old} is deprecated and goes away in the next release: use {cls}.{new} "
                      f"(the step of an event)", DeprecationWarning, stacklevel=3)

    def get(self):
        warn(self)
        return getattr(self, new)

    def put(self, value) -> None:
        warn(self)
        setattr(self, new, value)

    return property(get, put, doc=f"Deprecated: the same as ``{new}`` (its old name); goes away in the "
                                  f"next release.")
