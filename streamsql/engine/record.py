"""Names ``magics/completion.py`` still imports from here; what this module held is now
:mod:`streamsql.engine.recording` (saving a query as a scenario) and
:mod:`streamsql.engine.sql.spelling` (names as written). To go once completion.py imports
``sql_name`` and ``written_names`` from ``streamsql.engine.sql.spelling``."""
from __future__ import annotations

from .sql.spelling import sql_name, written_names as _words  # noqa: F401

__all__ = ["sql_name"]
