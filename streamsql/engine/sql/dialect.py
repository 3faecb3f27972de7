"""The streamsql dialect: sqlglot's tokenizer and parser, extended where SQLstream and Calcite
go beyond standard SQL.

Extensions (all hooks of sqlglot's parser, no second parser):
- ``SELECT STREAM`` (the STREAM keyword is consumed where sqlglot looks for a hint);
- ``FLOOR/CEIL(ts TO unit)`` (sqlglot's), ``CEILING``, ``STEP(ts BY interval)``;
- ``TIMESTAMP '...'`` kept apart from ``CAST(... AS TIMESTAMP)``;
- windows: ``OVER name``, ``OVER (...)``, Calcite's ``OVER name (...)``, PARTITION BY and ORDER BY
  in either order, frames with the positions of PRECEDING/FOLLOWING, and windows on FROM items
  (``Orders OVER (RANGE ...) AS o``);
- ``ORDER BY ... WITHIN interval`` (T-sort);
- window table functions in FROM (``TABLE(TUMBLE(TABLE s, DESCRIPTOR(ROWTIME), ...))``) and
  Calcite's ``SESSION(...)`` group window (:mod:`.window_tvf`);
- CREATE [OR REPLACE] STREAM / FOREIGN STREAM / TABLE / VIEW / PUMP, DROP, ALTER PUMP
  (:mod:`.ddl_parser`).
Every node the parser builds records the character offsets of its first and last token
(``pos_s``/``pos_e`` in its meta) so the analyzer can point at it.
"""
from __future__ import annotations

import functools
import types

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.parsers.base import BaseParser
from sqlglot.tokens import Token, Tokenizer, TokenType

from . import nodes as N
from .ddl_parser import DdlRules
from .planned import unparsed_construct
from .script import skip_blank
from .source import Source, start_of
from . import window_tvf


class ParseFailure(ParseError):
    """A parse error with the offset of the offending token (a ParseError so that sqlglot's
    speculative parsing still backtracks over it)."""

    def __init__(self, message: str, offset: int | None):
        super().__init__(message, [{"description": message, "line": None, "col": None,
                                    "start_context": None, "highlight": None, "end_context": None,
                                    "into_expression": None}])
        self.message = message
        self.offset = offset


def _tracked(fn):
    """Record on a returned node the offsets of the first and last token the call consumed.
    The outermost call wins (it saw the most), except for nodes passed in as arguments."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        index = self._index
        result = fn(self, *args, **kwargs)
        if isinstance(result, exp.Expr) and self._index > index:
            for a in args:
                if a is result:
                    return result
            for a in kwargs.values():
                if a is result:
                    return result
            tokens = self._tokens
            if 0 <= index < len(tokens):
                meta = result.meta
                meta["pos_s"] = tokens[index].start
                meta["pos_e"] = self._prev.end
                meta.pop("_span", None)
        return result

    return wrapper


_NOT_STREAM_FOLLOWERS = {TokenType.COMMA, TokenType.FROM, TokenType.DOT, TokenType.ALIAS,
                         TokenType.R_PAREN}


class StreamParser(window_tvf.WindowTvfRules, DdlRules, BaseParser):
    FUNCTION_PARSERS = {
        **BaseParser.FUNCTION_PARSERS,
        "STEP": lambda self: self._parse_step(),
        "CEILING": lambda self: self._parse_ceil_floor(exp.Ceil),
        **window_tvf.FUNCTION_PARSERS,
    }
    FUNC_TOKENS = BaseParser.FUNC_TOKENS | window_tvf.FUNC_TOKENS

    TYPE_LITERAL_PARSERS = {
        **BaseParser.TYPE_LITERAL_PARSERS,
        exp.DType.TIMESTAMP: lambda self, this, _: self.expression(N.TimestampLiteral(this=this)),
    }

    STATEMENT_PARSERS = {
        **BaseParser.STATEMENT_PARSERS,
        TokenType.CREATE: lambda self: self._parse_stream_create(),
        TokenType.DROP: lambda self: self._parse_stream_drop(),
        TokenType.ALTER: lambda self: self._parse_alter_pump(),
    }

    def reset(self) -> None:
        super().reset()
        self.stream_tokens: set[int] = set()

    # ------------------------------------------------------------------ errors
    def fail(self, message: str, token: Token | None = None):
        token = token or self._curr or self._prev
        raise ParseFailure(message, token.start if token else None)

    def raise_error(self, message: str, token: Token | None = None) -> None:
        token = token or self._curr or self._prev
        if token is None or not token.text:
            offset = self._prev.end + 1 if self._prev else 0
            raise ParseFailure("Syntax error: unexpected end of statement", offset)
        near = f"Syntax error near '{token.text}'"
        if message.startswith(("Required keyword", "Invalid expression", "Expected")):
            raise ParseFailure(near, token.start)
        raise ParseFailure(f"{near}: {message}", token.start)

    # ------------------------------------------------------------------ SELECT STREAM
    def _parse_hint(self):
        """STREAM right after SELECT is the streaming keyword (unless it is a column)."""
        if (self._prev.token_type == TokenType.SELECT and self._curr.token_type == TokenType.VAR
                and self._curr.text.upper() == "STREAM" and self._next
                and self._next.token_type not in _NOT_STREAM_FOLLOWERS):
            self.stream_tokens.add(self._curr.start)
            self._advance()
        return super()._parse_hint()

    def _parse_projections(self):
        projections, exclude = super()._parse_projections()
        if self._prev.token_type == TokenType.COMMA and self._curr.token_type == TokenType.FROM:
            self.fail("Syntax error near ',': a select list cannot end with a comma", self._prev)
        return projections, exclude

    # ------------------------------------------------------------------ functions
    def _parse_step(self):
        this = self._parse_bitwise()
        if not self._match_text_seq("BY"):
            self.fail("Syntax error: expected STEP(<timestamp> BY <interval>)")
        return self.expression(N.Step(this=this, expression=self._parse_bitwise()))

    def _parse_ceil_floor(self, expr_type):
        """sqlglot's FLOOR/CEIL (with ``TO unit``), validated like other nodes."""
        return self.expression(super()._parse_ceil_floor(expr_type))

    # ------------------------------------------------------------------ windows
    def _parse_window(self, this, alias: bool = False):
        if alias:  # an entry of the WINDOW clause; ``this`` is its name
            if not self._match(TokenType.ALIAS):
                self.fail("Syntax error: expected AS after the window name")
            return self.expression(N.NamedWindow(this=this, body=self._parse_window_body()))
        if not self._match(TokenType.OVER):
            return this
        return self.expression(N.Over(this=this, window=self._parse_window_ref()))

    def _parse_window_ref(self):
        """After OVER: ``name``, ``(body)`` or ``name (body)``."""
        if self._curr.token_type == TokenType.L_PAREN:
            return self.expression(N.WindowRef(body=self._parse_window_body()))
        name = self._parse_id_var(any_token=False)
        if name is None:
            self.fail("Syntax error: expected a window name or '(' after OVER")
        body = self._parse_window_body() if self._curr.token_type == TokenType.L_PAREN else None
        return self.expression(N.WindowRef(name=name, body=body))

    def _parse_window_body(self):
        if not self._match(TokenType.L_PAREN):
            self.fail("Syntax error: expected '(' to start a window")
        base = None
        if self._curr.token_type in (TokenType.VAR, TokenType.IDENTIFIER) and \
                self._curr.text.upper() not in ("ROWS", "RANGE"):
            base = self._parse_id_var(any_token=False)
        partition = order = None
        while True:
            if self._curr.token_type == TokenType.PARTITION_BY:
                if partition is not None:
                    self.fail("Syntax error: PARTITION BY appears twice in a window")
                self._advance()
                partition = self._parse_csv(self._parse_disjunction)
            elif self._curr.token_type == TokenType.ORDER_BY:
                if order is not None:
                    self.fail("Syntax error: ORDER BY appears twice in a window")
                order = self._parse_order()
            else:
                break
        frame = None
        if self._match_set((TokenType.ROWS, TokenType.RANGE)):
            frame = self._frame_after_mode(self._prev)
        if not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting )")
        return self.expression(N.WindowBody(base=base, partition_by=partition, order=order,
                                            frame=frame))

    def _frame_after_mode(self, mode_token: Token):
        """The frame after ROWS/RANGE (not a ``_parse_`` method, so it keeps ``mode_token``'s position)."""
        if self._match(TokenType.BETWEEN):
            start = self._parse_frame_bound()
            if not self._match(TokenType.AND):
                self.fail("Syntax error: expected AND in BETWEEN ... AND ...")
            end = self._parse_frame_bound()
        else:
            start, end = self._parse_frame_bound(), None
        node = N.Frame(mode=mode_token.text.upper(), start=start, end=end)
        node.meta["pos_s"] = mode_token.start
        node.meta["pos_e"] = self._prev.end
        return node

    def _parse_frame_bound(self):
        first = self._curr
        value = None
        if self._match_text_seq("UNBOUNDED"):
            kind = "UNBOUNDED"
        elif self._match_text_seq("CURRENT", "ROW"):
            kind = "CURRENT"
        else:
            kind = "VALUE"
            value = self._parse_bitwise()
            if value is None:
                self.fail("Syntax error: expected UNBOUNDED, CURRENT ROW or a value in a window frame")
        side = None
        side_pos = None
        if kind != "CURRENT":
            if not self._match_texts(("PRECEDING", "FOLLOWING")):
                self.fail("Syntax error: expected PRECEDING or FOLLOWING")
            side, side_pos = self._prev.text.upper(), self._prev.start
        node = N.FrameBound(kind=kind, this=value, side=side)
        node.meta.update(pos_s=first.start, pos_e=self._prev.end, side_pos=side_pos)
        return node

    def _parse_table_alias(self, alias_tokens=None):
        """``FROM s OVER (...) [AS] alias``: the window travels on the alias."""
        if self._curr.token_type != TokenType.OVER:
            return super()._parse_table_alias(alias_tokens)
        over = self._curr
        self._advance()
        window = self._parse_window_ref()
        window.meta["over_pos"] = over.start
        alias = super()._parse_table_alias(alias_tokens)
        node = N.WindowedAlias(this=alias.this if alias else None,
                               columns=alias.args.get("columns") if alias else None,
                               window=window)
        return self.expression(node)

    # ------------------------------------------------------------------ intervals
    _SPANS = {("YEAR", "MONTH"), ("DAY", "HOUR"), ("DAY", "MINUTE"), ("DAY", "SECOND"),
              ("HOUR", "MINUTE"), ("HOUR", "SECOND"), ("MINUTE", "SECOND")}

    def _parse_interval_span(self, this, parse_function_unit: bool = True):
        """Take ``unit TO unit`` only when it is a valid qualifier, so that
        ``FLOOR(ts + INTERVAL '30' MINUTE TO DAY)`` keeps its TO for FLOOR."""
        after = self._tokens[self._index + 2] if self._index + 2 < len(self._tokens) else None
        span = (self._curr.text.upper().rstrip("S"), after.text.upper().rstrip("S") if after else "")
        if self._next.text.upper() == "TO" and span not in self._SPANS:
            self.INTERVAL_SPANS = False
            try:
                return super()._parse_interval_span(this, parse_function_unit)
            finally:
                del self.INTERVAL_SPANS
        return super()._parse_interval_span(this, parse_function_unit)

    # ------------------------------------------------------------------ ORDER BY
    def _parse_order(self, this=None, skip_order_token: bool = False):
        node = super()._parse_order(this, skip_order_token)
        if node is this or not isinstance(node, exp.Order):
            return node
        within = self._parse_bitwise() if self._match_text_seq("WITHIN") else None
        return self.expression(N.StreamOrder(this=node.this, expressions=node.expressions,
                                             siblings=node.args.get("siblings"), within=within))

    def _parse_ordered(self, parse_method=None):
        node = super()._parse_ordered(parse_method)
        if node is not None and self._index >= 2:
            a, b = self._tokens[self._index - 2], self._tokens[self._index - 1]
            if a.text.upper() == "NULLS" and b.text.upper() in ("FIRST", "LAST"):
                node.meta["explicit_nulls"] = b.text.upper()
        return node



def _wrap_all(cls) -> None:
    """Wrap every ``_parse_*`` method once, taking the most derived definition."""
    seen = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, fn in vars(klass).items():
            if name in seen or not name.startswith("_parse_") or not isinstance(fn, types.FunctionType):
                continue
            seen.add(name)
            setattr(cls, name, _tracked(fn))


_wrap_all(StreamParser)


class StreamTokenizer(Tokenizer):
    """Standard SQL lexing: '...' strings ('' escapes a quote, no backslash escapes, so
    ``'x.*\\.csv'`` keeps its backslash), "..." identifiers, -- and /* */ comments."""
    STRING_ESCAPES = ["'"]
    IDENTIFIERS = ['"']


class StreamSQL(Dialect):
    tokenizer_class = StreamTokenizer
    parser_class = StreamParser


_DIALECT = StreamSQL()


def tokenize(text: str) -> list:
    """The dialect's tokens of ``text`` (sqlglot ``Token``s; raises ``TokenError`` on a lexical
    problem such as an unterminated string)."""
    return _DIALECT.tokenize(text)


def _unterminated(text: str) -> int | None:
    """Offset of an opening quote or comment that is never closed."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in ("'", '"'):
            j = i + 1
            while j < n:
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                return i
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                return i
            i = j + 2
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        else:
            i += 1
    return None


def parse(source: Source) -> exp.Expr:
    """Parse the one statement in ``source.text`` (errors positioned in the script)."""
    text = source.text
    try:
        tokens = _DIALECT.tokenize(text)
    except TokenError:
        at = _unterminated(text)
        what = "unterminated string, identifier or comment" if at is not None else "invalid character"
        raise source.error(f"Syntax error: {what}", at if at is not None else skip_blank(text, 0)) from None
    source.set_tokens(tokens)
    if not tokens or all(t.token_type == TokenType.SEMICOLON for t in tokens):
        raise source.error("Empty statement", skip_blank(text, 0))
    p = _DIALECT.parser()
    try:
        trees = p.parse(tokens, text)
    except ParseFailure as e:
        named = unparsed_construct(tokens, e.offset)      # a construct the dialect lacks, not noise
        if named is not None:
            raise source.error(named[0], named[1].start) from None
        raise source.error(e.message, e.offset) from None
    except ParseError as e:  # pragma: no cover - our parser raises ParseFailure
        raise source.error(f"Syntax error: {e}", tokens[0].start) from None
    trees = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
    if len(trees) != 1:
        at = start_of(trees[1]) if len(trees) > 1 else tokens[0].start
        raise source.error("Expected a single statement; split the script with split_script()", at)
    source.stream_tokens = set(p.stream_tokens)
    return trees[0]
