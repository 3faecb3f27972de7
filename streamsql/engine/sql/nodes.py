"""sqlglot expression classes for the syntax sqlglot does not know: windows on FROM items,
Calcite's window refinement, frames kept with their positions, T-sort, STEP, and the
streaming DDL (streams, foreign streams, pumps). The analyzer reads these; nothing generates
SQL from them."""
from __future__ import annotations

from sqlglot import exp


class Step(exp.Expression):
    """``STEP(ts BY interval)``."""
    arg_types = {"this": True, "expression": True}


class TimestampLiteral(exp.Expression):
    """``TIMESTAMP '...'`` (a literal, unlike ``CAST('...' AS TIMESTAMP)``)."""
    arg_types = {"this": True}


class FrameBound(exp.Expression):
    """One end of a frame. ``kind`` is UNBOUNDED, CURRENT or VALUE; ``side`` PRECEDING or
    FOLLOWING; meta ``side_pos`` is the offset of the PRECEDING/FOLLOWING keyword."""
    arg_types = {"kind": True, "this": False, "side": False}


class Frame(exp.Expression):
    """``ROWS|RANGE bound`` or ``ROWS|RANGE BETWEEN bound AND bound``."""
    arg_types = {"mode": True, "start": True, "end": False}


class WindowBody(exp.Expression):
    """What is inside a window's parentheses: an optional base window name (refinement),
    PARTITION BY, ORDER BY (in either order) and a frame."""
    arg_types = {"base": False, "partition_by": False, "order": False, "frame": False}


class WindowRef(exp.Expression):
    """``OVER name``, ``OVER (body)`` or Calcite's ``OVER name (body)``."""
    arg_types = {"name": False, "body": False}


class Over(exp.Expression):
    """A windowed aggregate call: ``this`` is the function, ``window`` a WindowRef."""
    arg_types = {"this": True, "window": True}


class NamedWindow(exp.Expression):
    """``name AS (body)`` in a WINDOW clause."""
    arg_types = {"this": True, "body": True}


class WindowedAlias(exp.TableAlias):
    """A FROM item's alias carrying the item's join window (``Orders OVER (...) AS o``)."""
    arg_types = {**exp.TableAlias.arg_types, "window": False}


class StreamOrder(exp.Order):
    """ORDER BY with SQLstream's T-sort ``WITHIN interval``."""
    arg_types = {**exp.Order.arg_types, "within": False}


# --------------------------------------------------------------------------- statements

class ColumnDefinition(exp.Expression):
    """``name type [NOT NULL]`` in CREATE STREAM/TABLE; ``type`` is the type's text."""
    arg_types = {"this": True, "type": True, "params": False, "not_null": False}


class CreateStreamStatement(exp.Expression):
    arg_types = {"this": True, "kind": True, "columns": True, "replace": False,
                 "server": False, "options": False, "description": False}


class CreateViewStatement(exp.Expression):
    """``body_start``/``body_end`` (offsets of the query text) are kept in meta."""
    arg_types = {"this": True, "columns": False, "query": True, "replace": False,
                 "description": False}


class CreatePumpStatement(exp.Expression):
    arg_types = {"this": True, "target": True, "columns": False, "query": True,
                 "replace": False, "started": False, "description": False}


class AlterPumpStatement(exp.Expression):
    arg_types = {"expressions": True, "action": True}


class DropStatement(exp.Expression):
    arg_types = {"this": True, "kind": True, "exists": False}


class Option(exp.Expression):
    """``"NAME" 'value'`` in a foreign stream's OPTIONS."""
    arg_types = {"this": True, "value": True}
