"""What the SQL dialect accepts, read from its own tables, for the completeness test of the SQL
reference (tests/test_docs.py). No tests here.

- Functions: every name sqlglot's parser knows (``StreamParser.FUNCTIONS`` and
  ``FUNCTION_PARSERS``, sqlglot's tables extended by the dialect) that parses to a node the
  analyzer translates (``sql.expressions._HANDLERS``, the dialect's expression table; aggregates
  in ``AGGREGATES``), kept when some argument list over a stream of every type analyzes.
- Statements: the first keywords the dialect starts a statement with (``sql._STATEMENT_STARTS``)
  and the object kinds its CREATE / DROP / ALTER rules list as supported (their messages are the
  dialect's own list).
"""
from __future__ import annotations

import re
from functools import lru_cache

from sqlglot import exp

#: argument lists tried for each function name, over the columns of ``_PROBE_STREAM``
ARGS = ("s", "i", "d", "t", "i, i", "d, i", "s, s", "s, i", "s, i, i", "t TO HOUR", "i AS VARCHAR", "i, VARCHAR",
        "s IN s", "t BY INTERVAL '1' HOUR", "BOTH ' ' FROM s", "*")
#: where a call is tried: a select list, and an aggregate query's select list
TEMPLATES = ("SELECT STREAM {call} AS x FROM probe",
             "SELECT STREAM FLOOR(probe.ROWTIME TO HOUR) AS h, {call} AS x FROM probe "
             "GROUP BY FLOOR(probe.ROWTIME TO HOUR)")
_PROBE_STREAM = "CREATE STREAM probe (s VARCHAR(10), i INTEGER, d DOUBLE, t TIMESTAMP)"


def _analyzes(sql: str, catalog) -> bool:
    from streamsql.engine.errors import SqlError
    from streamsql.engine.sql import analyze
    try:
        analyze(sql, catalog)
    except SqlError:
        return False
    return True


def _translated_types() -> set[type]:
    """Node types the analyzer translates (not the ones it only rejects with a message)."""
    from streamsql.engine.sql import expressions as E
    out = set()
    for klass, handler in E._HANDLERS.items():
        name = getattr(handler, "__qualname__", "")
        if name.startswith(("_unsupported", "_anonymous")):
            continue
        out.add(klass)
    return out


@lru_cache(maxsize=1)
def dialect_functions() -> dict[str, str]:
    """``{SQL name: node type}`` for every function name the dialect accepts."""
    from streamsql.engine.sql import dialect as D
    from streamsql.engine.workbench import Workbench

    wb = Workbench(None, engine="local")
    try:
        wb.execute(_PROBE_STREAM)
        translated = _translated_types()
        out: dict[str, str] = {}
        names = sorted(set(D.StreamParser.FUNCTIONS) | set(D.StreamParser.FUNCTION_PARSERS))
        for name in names:
            if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
                continue
            for args in ARGS:
                try:
                    tree = D._DIALECT.parse(f"SELECT {name}({args})")[0]
                except Exception:
                    continue
                node = tree.expressions[0] if tree is not None and tree.expressions else None
                if node is None or type(node) not in translated or isinstance(node, exp.Column):
                    break
                if not any(_analyzes(template.format(call=f"{name}({args})"), wb.catalog)
                           for template in TEMPLATES):
                    continue
                out[name] = type(node).__name__
                break
        return out
    finally:
        wb.close()


def _supported_list(message: str) -> list[str]:
    m = re.search(r"supported: (.*?)(?: \[IF EXISTS\] name)?\)$", message)
    return [p.strip() for p in m.group(1).split(",")] if m else []


@lru_cache(maxsize=1)
def dialect_statements() -> list[str]:
    """Statement forms: ``SELECT``, ``CREATE FOREIGN STREAM``, ``DROP PUMP``, ``ALTER PUMP`` ..."""
    from sqlglot.tokens import TokenType
    from streamsql.engine.errors import SqlError
    from streamsql.engine.sql import _STATEMENT_STARTS, analyze
    from streamsql.engine.workbench import Workbench

    forms: list[str] = []
    wb = Workbench(None, engine="local")
    try:
        def message(sql: str) -> str:
            try:
                analyze(sql, wb.catalog)
            except SqlError as e:
                return e.message
            return ""

        for tt in sorted(_STATEMENT_STARTS, key=lambda t: t.name):
            if tt == TokenType.L_PAREN:
                continue            # a parenthesized query: SELECT / VALUES / WITH inside
            word = tt.name
            if word == "CREATE":
                kinds = _supported_list(message("CREATE NOTHING x"))
                first = kinds[0].replace("CREATE ", "").replace("[OR REPLACE] ", "") if kinds else ""
                forms += ["CREATE " + k for k in [first] + kinds[1:]]
                if "[OR REPLACE]" in message("CREATE NOTHING x"):
                    forms.append("CREATE OR REPLACE")
            elif word == "DROP":
                kinds = _supported_list(message("DROP NOTHING x"))
                first = kinds[0].replace("DROP ", "") if kinds else ""
                forms += ["DROP " + k for k in [first] + kinds[1:]]
                if "[IF EXISTS]" in message("DROP NOTHING x"):
                    forms.append("IF EXISTS")
            elif word == "ALTER":
                m = re.search(r"only (ALTER \w+)", message("ALTER NOTHING x"))
                forms.append(m.group(1) if m else "ALTER")
            else:
                forms.append(word)
        return forms
    finally:
        wb.close()


def missing(page: str) -> list[str]:
    """Function names and statement forms the page never mentions (as whole upper-case words)."""
    gone = []
    for name in list(dialect_functions()) + dialect_statements():
        if not re.search(r"(?<![A-Z0-9_])" + re.escape(name) + r"(?![A-Z0-9_])", page):
            gone.append(name)
    return gone
