"""Where things are: a statement's text, its tokens, and the mapping to script positions.

The parser records character offsets on the nodes it builds (``pos_s``/``pos_e`` in a node's
meta); everything the analyzer reports goes through :meth:`Source.error`, which turns an offset
into the line and column of the *whole script*, as the errors promise.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from ..errors import SqlError
from ..plan import Position


@dataclass
class Source:
    text: str                  # the text the offsets refer to (a statement or a view body)
    line: int = 1              # where ``text`` starts in the script
    col: int = 1
    script: str | None = None  # the whole script, for SqlError.sql
    tokens: list[Token] = field(default_factory=list)
    stream_tokens: set[int] = field(default_factory=set)   # offsets of STREAM keywords

    def __post_init__(self):
        self._starts = [t.start for t in self.tokens]

    def set_tokens(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self._starts = [t.start for t in tokens]

    # ------------------------------------------------------------------ positions
    def line_col(self, offset: int | None) -> tuple[int, int]:
        if offset is None:
            return self.line, self.col
        offset = max(0, min(offset, len(self.text)))
        line = self.text.count("\n", 0, offset)
        if line == 0:
            return self.line, self.col + offset
        return self.line + line, offset - self.text.rfind("\n", 0, offset)

    def position(self, at) -> Position:
        return Position(*self.line_col(offset_of(at)))

    def error(self, message: str, at=None) -> SqlError:
        line, col = self.line_col(offset_of(at))
        return SqlError(message, line, col, sql=self.script if self.script is not None else self.text)

    def snippet(self, node: exp.Expr) -> str:
        s = span(node)
        if s is None:
            return node.sql()
        return self.text[s[0]:s[1] + 1]

    # ------------------------------------------------------------------ tokens
    def token_at_or_after(self, offset: int) -> int:
        return bisect.bisect_left(self._starts, offset)

    def find_token(self, start: int, pred, stop: int | None = None) -> Token | None:
        """The first token at or after offset ``start`` (and before ``stop``) satisfying ``pred``."""
        for i in range(self.token_at_or_after(start), len(self.tokens)):
            tok = self.tokens[i]
            if stop is not None and tok.start >= stop:
                return None
            if pred(tok):
                return tok
        return None

    def next_token(self, tok: Token) -> Token | None:
        i = self.token_at_or_after(tok.start) + 1
        return self.tokens[i] if i < len(self.tokens) else None

    def keyword(self, start: int, *types: TokenType, stop: int | None = None) -> Token | None:
        return self.find_token(start, lambda t: t.token_type in types, stop)

    def operator_offset(self, node: exp.Expr) -> int | None:
        """Offset of a binary operator's token: the first token after the left operand
        that is not a closing parenthesis."""
        left = node.args.get("this")
        ls = span(left) if isinstance(left, exp.Expr) else None
        if ls is None:
            return start_of(node)
        tok = self.find_token(ls[1] + 1, lambda t: t.token_type != TokenType.R_PAREN)
        return tok.start if tok is not None else start_of(node)

    def operator_text(self, node: exp.Expr, default: str) -> str:
        off = self.operator_offset(node)
        if off is None:
            return default
        i = self.token_at_or_after(off)
        if i < len(self.tokens) and self.tokens[i].start == off:
            return self.tokens[i].text.upper()
        return default


def span(node) -> tuple[int, int] | None:
    """First and last character offset of a node, from its own recorded position and its
    children's (binary operators built in a loop only know their operands)."""
    if not isinstance(node, exp.Expr):
        return None
    meta = node._meta
    if meta and "_span" in meta:
        return meta["_span"]
    lo = hi = None
    if meta:
        for a, b in (("pos_s", "pos_e"), ("start", "end")):   # ours, then sqlglot's (names)
            if meta.get(a) is not None:
                lo = meta[a] if lo is None else min(lo, meta[a])
                hi = meta[b] if hi is None else max(hi, meta[b])
    for child in node.iter_expressions():
        s = span(child)
        if s is None:
            continue
        lo = s[0] if lo is None else min(lo, s[0])
        hi = s[1] if hi is None else max(hi, s[1])
    result = None if lo is None else (lo, hi)
    node.meta["_span"] = result
    return result


def start_of(node) -> int | None:
    s = span(node)
    return None if s is None else s[0]


def offset_of(at) -> int | None:
    if at is None or isinstance(at, int):
        return at
    if isinstance(at, Token):
        return at.start
    if isinstance(at, exp.Expr):
        return start_of(at)
    raise TypeError(f"not a position: {at!r}")
