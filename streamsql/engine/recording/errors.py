"""Why a query cannot be saved as a scenario."""
from __future__ import annotations

from ..errors import StreamSqlError


class SaveError(StreamSqlError):
    """The query cannot be written as a scenario (the message says why and what to do)."""

