"""The streamsql dialect: split a script into statements, parse them (sqlglot) and analyze
them into :mod:`streamsql.engine.plan` statements, with positions in every error.

    for stmt in split_script(text):
        plan_statement = analyze(stmt, catalog, script=text)

Every problem raises :class:`streamsql.engine.errors.SqlError` with the line and column of the
offending token in the whole script.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from ..plan import CatalogReader, Statement
from .context import Env
from .ddl import analyze_tree, unsupported_message
from .dialect import parse
from .names import NotAName
from .planned import check as check_planned
from .script import ScriptStatement, skip_blank, split_script
from .source import Source

__all__ = ["ScriptStatement", "split_script", "analyze"]

_STATEMENT_STARTS = {TokenType.CREATE, TokenType.DROP, TokenType.ALTER, TokenType.INSERT,
                     TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN, TokenType.VALUES}


def starts_statement(text: str) -> bool:
    """Whether ``text`` begins as a statement of the dialect can (CREATE, SELECT, ...): a
    command line tells SQL from its own sub-commands by it."""
    from .dialect import tokenize
    try:
        tokens = tokenize(text)
    except Exception:
        return True      # a lexical problem: the parser reports it, with its position
    return bool(tokens) and tokens[0].token_type in _STATEMENT_STARTS


def analyze(stmt: ScriptStatement | str, catalog: CatalogReader, script: str | None = None) -> Statement:
    """Parse and analyze one statement. ``script`` is the whole text ``stmt`` came from (errors
    carry it); a plain string is a statement starting at line 1, column 1."""
    if isinstance(stmt, str):
        stmt = ScriptStatement(stmt, 1, 1)
    source = Source(stmt.sql, stmt.line, stmt.col, script if script is not None else stmt.sql)
    _reject_unsupported(source)
    tree = parse(source)
    try:
        check_planned(tree, source)       # nothing the parser accepted goes unplanned
        return analyze_tree(tree, Env(catalog, source))
    except NotAName as e:
        raise source.error(f"Syntax error: expected a name, not '{source.snippet(e.node)}'",
                           e.node if isinstance(e.node, exp.Expr) else None) from None


def _reject_unsupported(source: Source) -> None:
    """Refuse statements the dialect does not have before sqlglot tries to parse them."""
    from .dialect import tokenize
    start = skip_blank(source.text, 0)
    if start >= len(source.text):
        raise source.error("Empty statement", start)
    try:
        first = tokenize(source.text)[0]
    except Exception:
        return  # let the parser report the lexical problem with its position
    if first.token_type not in _STATEMENT_STARTS:
        raise source.error(unsupported_message(first.text.upper()), start)
