"""Window table functions in FROM (the semantics, section 3.7): the syntax and its plan.

``TABLE(TUMBLE(TABLE s, DESCRIPTOR(ROWTIME), size [, offset]))``, ``HOP(data, DESCRIPTOR(ROWTIME),
slide, size [, offset])``, ``CUMULATE(data, DESCRIPTOR(ROWTIME), step, size [, offset])`` and
``SESSION(data [PARTITION BY k, ...], DESCRIPTOR(ROWTIME), gap)``. ``data`` is ``TABLE name`` (a
stream or a view), ``TABLE (query)`` or ``(query)``; arguments may also be named as Flink names
them (``DATA =>``, ``TIMECOL =>``, ``SIZE =>``, ``SLIDE =>``, ``STEP =>``, ``OFFSET =>``,
``GAP =>``). Calcite's ``SESSION(...)`` in a GROUP BY parses here too (``SESSION`` is a keyword).

The rules are parser hooks of :class:`~streamsql.engine.sql.dialect.StreamParser` (a mixin, as the
DDL's); planning makes a :class:`~streamsql.engine.plan.WindowTable` over the planned data.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from .. import time as sqltime
from ..errors import SqlError
from ..expr import Rowtime
from ..plan import WINDOW_COLUMNS, Field, WindowShape, WindowTable
from ..types import ROWTIME_TYPE
from .context import RELATIONAL
from .names import ROWTIME, Rel, Scope, canonical

TVF_NAMES = ("TUMBLE", "HOP", "CUMULATE", "SESSION")
#: the positional parameters after the data and the time column, per function (optional ones last)
PARAMETERS = {"TUMBLE": (("SIZE",), ("OFFSET",)), "HOP": (("SLIDE", "SIZE"), ("OFFSET",)),
              "CUMULATE": (("STEP", "SIZE"), ("OFFSET",)), "SESSION": (("GAP",), ())}
USAGE = {"TUMBLE": "TUMBLE(TABLE s, DESCRIPTOR(ROWTIME), size [, offset])",
         "HOP": "HOP(TABLE s, DESCRIPTOR(ROWTIME), slide, size [, offset])",
         "CUMULATE": "CUMULATE(TABLE s, DESCRIPTOR(ROWTIME), step, size [, offset])",
         "SESSION": "SESSION(TABLE s [PARTITION BY k], DESCRIPTOR(ROWTIME), gap)"}


# --------------------------------------------------------------------------- syntax

class WindowTvf(exp.Expression):
    """``TABLE(fn(data, DESCRIPTOR(col), ...))`` in FROM. ``this`` is the function name; ``data``
    a Table or a Subquery; ``partition`` its PARTITION BY; ``descriptor`` the DESCRIPTOR's
    column; ``expressions`` the other arguments, ``names`` their names where written (``SIZE =>``)."""
    arg_types = {"this": True, "data": False, "partition": False, "descriptor": False,
                 "expressions": False, "names": False, "alias": False}


class Descriptor(exp.Expression):
    """``DESCRIPTOR(col)``."""
    arg_types = {"this": True}


class SessionCall(exp.Expression):
    """Calcite's ``SESSION(t, gap)`` group window in GROUP BY (``SESSION`` is a keyword)."""
    arg_types = {"expressions": True}


class WindowTvfRules:
    """Mixin of :class:`StreamParser`: ``TABLE(...)`` in FROM and ``SESSION(...)`` calls."""

    def _parse_table(self, *args, **kwargs):
        if (self._curr is not None and self._curr.token_type == TokenType.TABLE and self._next is not None
                and self._next.token_type == TokenType.L_PAREN):
            node = self._parse_window_tvf()
            alias = self._parse_table_alias()
            if alias is not None:
                node.set("alias", alias)
            return node
        return super()._parse_table(*args, **kwargs)

    def _parse_window_tvf(self):
        self._advance(2)                       # TABLE (
        name_tok = self._curr
        if name_tok is None or self._next is None or self._next.token_type != TokenType.L_PAREN:
            self.fail("Syntax error: expected a window table function, as in TABLE(TUMBLE(TABLE s, "
                      "DESCRIPTOR(ROWTIME), INTERVAL '1' HOUR))", name_tok)
        fn = name_tok.text.upper()
        self._advance(2)                       # name (
        node = WindowTvf(this=fn)
        node.meta["fn_pos"] = name_tok.start
        args, names = [], []
        while True:
            named = None
            if (self._curr is not None and self._next is not None and self._next.token_type == TokenType.FARROW
                    and self._curr.text.isidentifier()):      # OFFSET, SIZE, ... may be keywords
                named = self._curr.text.upper()
                self._advance(2)
            args.append(self._parse_tvf_argument(node))
            names.append(named)
            if not self._match(TokenType.COMMA):
                break
        if not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting )")
        if not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting ) to close TABLE(")
        data = [(a, n) for a, n in zip(args, names) if isinstance(a, (exp.Table, exp.Subquery))]
        desc = [(a, n) for a, n in zip(args, names) if isinstance(a, Descriptor)]
        rest = [(a, n) for a, n in zip(args, names) if not isinstance(a, (exp.Table, exp.Subquery, Descriptor))]
        if data:
            node.set("data", data[0][0])
        if desc:
            node.set("descriptor", desc[0][0])
        node.meta["counts"] = (len(data), len(desc))
        node.set("expressions", [a for a, _n in rest])
        node.meta["names"] = [n for _a, n in rest]
        return node

    def _parse_tvf_argument(self, node: WindowTvf):
        start = self._curr
        if self._match(TokenType.TABLE):
            if self._curr is not None and self._curr.token_type == TokenType.L_PAREN:
                self._advance()
                query = self._parse_select()
                if query is None or not self._match(TokenType.R_PAREN):
                    self.fail("Syntax error: expected TABLE (SELECT ...) as the table argument", start)
                data = exp.Subquery(this=query)
            else:
                name = self._parse_id_var(any_token=False)
                if name is None:
                    self.fail("Syntax error: expected a stream or view name after TABLE", start)
                data = exp.Table(this=name)
            data.meta["pos_s"] = start.start
            data.meta["pos_e"] = self._prev.end
            self._tvf_partition(node)
            return data
        if self._curr is not None and self._curr.token_type == TokenType.L_PAREN and self._next is not None \
                and self._next.token_type in (TokenType.SELECT, TokenType.WITH):
            self._advance()
            query = self._parse_select()
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expecting )")
            data = exp.Subquery(this=query)
            data.meta["pos_s"] = start.start
            data.meta["pos_e"] = self._prev.end
            self._tvf_partition(node)
            return data
        if self._curr is not None and self._curr.text.upper() == "DESCRIPTOR" and self._next is not None \
                and self._next.token_type == TokenType.L_PAREN:
            self._advance(2)
            cols = self._parse_csv(self._parse_column)
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expecting )")
            d = Descriptor(this=cols[0] if cols else None)
            d.meta["pos_s"] = start.start
            d.meta["pos_e"] = self._prev.end
            d.meta["count"] = len(cols)
            return d
        arg = self._parse_bitwise()
        if arg is None:
            self.fail("Syntax error: expected an argument of the window table function", start)
        return arg

    def _tvf_partition(self, node: WindowTvf) -> None:
        if self._curr is not None and self._curr.token_type == TokenType.PARTITION_BY:
            node.meta["partition_pos"] = self._curr.start
            self._advance()
            # one key, or several in parentheses: the list ends where the next argument starts
            if self._curr is not None and self._curr.token_type == TokenType.L_PAREN:
                self._advance()
                keys = self._parse_csv(self._parse_disjunction)
                if not self._match(TokenType.R_PAREN):
                    self.raise_error("Expecting )")
            else:
                key = self._parse_disjunction()
                if key is None:
                    self.fail("Syntax error: expected the session key after PARTITION BY")
                keys = [key]
            node.set("partition", keys)

    def _parse_session_call(self):
        """``SESSION(`` was consumed: the arguments of Calcite's group window."""
        args = self._parse_csv(self._parse_disjunction)
        if not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting )")
        return self.expression(SessionCall(expressions=args))


#: the dialect's function parsers for what this module adds (``SESSION(`` already consumed)
FUNCTION_PARSERS = {"SESSION": lambda self: self._parse_session_call()}
#: the keyword tokens this module lets start a function call
FUNC_TOKENS = {TokenType.SESSION}


# --------------------------------------------------------------------------- planning

def _interval(arg, env, what: str, fn: str, positive: bool = True) -> int:
    from .expressions import Ctx, constant_value, is_constant, translate
    source = env.source
    e = translate(arg, Ctx(None, source, fn, constant_message=f"The {what} of {fn} must be a constant interval"))
    if e.type.name != "INTERVAL" or not is_constant(e):
        raise source.error(f"The {what} of {fn} must be a constant interval, as in INTERVAL '1' HOUR", arg)
    iv = constant_value(e, source, arg)
    if not iv.is_fixed:
        raise source.error(f"The {what} of {fn} must be a day-time interval (not months or years)", arg)
    if positive and iv.millis <= 0:
        raise source.error(f"The {what} of {fn} must be positive", arg)
    return iv.millis


def window_shape(fn: str, values: dict, env, at) -> WindowShape:
    """The shape of a window function from its named interval arguments (milliseconds)."""
    source = env.source
    off = values.get("OFFSET", 0)
    if fn == "TUMBLE":
        return WindowShape("TUMBLE", values["SIZE"], values["SIZE"], off % values["SIZE"])
    if fn == "HOP":
        return WindowShape("HOP", values["SIZE"], values["SLIDE"], off % values["SLIDE"])
    if fn == "CUMULATE":
        step, size = values["STEP"], values["SIZE"]
        if size % step:
            raise source.error(f"CUMULATE needs a size that is a whole number of steps ({sqltime.format_interval(sqltime.Interval(0, size))} "
                               f"is not a multiple of {sqltime.format_interval(sqltime.Interval(0, step))})", at)
        return WindowShape("CUMULATE", size, step, off % size)
    return WindowShape("SESSION", gap=values["GAP"])


def window_fields(fields: list[Field], fn: str, source, at) -> list[Field]:
    names = {f.name for f in fields}
    for c in WINDOW_COLUMNS:
        if c in names:
            raise source.error(f"The input of {fn} already has a column {c}; rename it (the window columns "
                               f"{', '.join(WINDOW_COLUMNS)} are added by {fn})", at)
    return list(fields) + [Field(c, ROWTIME_TYPE) for c in WINDOW_COLUMNS]


def plan_window_table(ast: WindowTvf, env, mode: str, plan_item) -> WindowTable:
    """The plan of a window table function in FROM (``plan_item`` plans its table argument)."""
    from .expressions import Ctx, translate
    source = env.source
    fn = ast.this.upper() if isinstance(ast.this, str) else str(ast.this).upper()
    at_fn = ast.meta.get("fn_pos", ast)
    if fn not in TVF_NAMES:
        raise source.error(f"Unknown table function {fn}; the window table functions are TUMBLE, HOP, "
                           "CUMULATE and SESSION", at_fn)
    if mode == RELATIONAL:
        raise source.error(f"{fn} in FROM needs a stream: use SELECT STREAM (window table functions are "
                           "not supported in relational queries)", at_fn)
    n_data, n_desc = ast.meta.get("counts", (0, 0))
    if n_data != 1 or n_desc != 1:
        raise source.error(f"{fn} takes one table and one DESCRIPTOR: {USAGE[fn]}", at_fn)
    data = ast.args["data"]
    item = plan_item(data, env, mode)
    if not item.is_stream:
        if item.origin is not None:
            raise item.origin.error(source)
        raise source.error(f"{fn} needs a stream as its table argument", data)
    if not item.has_rowtime:
        raise source.error(f"{fn} needs a stream with a ROWTIME as its table argument", data)
    rel = Rel(item.alias, item.fields, 0, Rowtime(0), has_rowtime=True)
    scope = Scope([rel], source, Rowtime(0))

    # the time column: the rowtime, nothing else
    desc = ast.args["descriptor"]
    col = desc.this
    if desc.meta.get("count", 1) != 1 or not isinstance(col, exp.Column):
        raise source.error(f"DESCRIPTOR takes one column: DESCRIPTOR(ROWTIME)", desc)
    if canonical(col.this) != ROWTIME or not scope.is_implicit_rowtime(col):
        name = source.snippet(col)
        try:
            e = translate(col, Ctx(scope, source, "DESCRIPTOR"))
            what = f"'{name}' is a column ({e.type}), not the rowtime"
        except SqlError:
            what = f"'{name}' is not a column of the input"
        raise source.error(f"{fn} windows a stream by its rowtime: write DESCRIPTOR(ROWTIME); {what}", desc)

    # the intervals, by position or by name
    required, optional = PARAMETERS[fn]
    names = ast.meta.get("names") or []
    args = ast.expressions
    positional = [a for a, n in zip(args, names) if n is None]
    named = {n: a for a, n in zip(args, names) if n is not None}
    values_ast = dict(zip(required + optional, positional))
    if len(positional) > len(required) + len(optional):
        raise source.error(f"{fn} takes at most {len(required) + len(optional)} interval arguments: {USAGE[fn]}",
                           positional[len(required) + len(optional)])
    for n, a in named.items():
        if n in ("DATA", "TIMECOL"):
            continue
        if n not in required + optional:
            raise source.error(f"{fn} has no argument {n}: {USAGE[fn]}", a)
        if n in values_ast:
            raise source.error(f"{fn}'s argument {n} is given twice", a)
        values_ast[n] = a
    missing = [n for n in required if n not in values_ast]
    if missing:
        raise source.error(f"{fn} needs its {' and '.join(m.lower() for m in missing)}: {USAGE[fn]}", at_fn)
    values = {n: _interval(a, env, n.lower(), fn, positive=(n != "OFFSET")) for n, a in values_ast.items()}
    shape = window_shape(fn, values, env, at_fn)

    partition = []
    part_ast = ast.args.get("partition") or []
    if part_ast and fn != "SESSION":
        raise source.error(f"PARTITION BY is only for SESSION windows; {fn} windows are the same for every row",
                           ast.meta.get("partition_pos", part_ast[0]))
    for p in part_ast:
        partition.append(translate(p, Ctx(scope, source, "PARTITION BY")))
    return WindowTable(item.node, shape, partition, window_fields(item.fields, fn, source, at_fn))
