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


# --------------------------------------------------------------------------- the whole grammar

#: the schema every probe of :func:`grammar_probes` is written against
GRAMMAR_SCHEMA = ("CREATE STREAM probe (s VARCHAR(10), i INTEGER, d DOUBLE, t TIMESTAMP, b BOOLEAN);"
                  "CREATE STREAM other (s VARCHAR(10), i INTEGER);"
                  "CREATE TABLE tab (s VARCHAR(10), i INTEGER, d DOUBLE, t TIMESTAMP);"
                  "CREATE TABLE versions (i INTEGER, d DOUBLE, since TIMESTAMP)")
STREAM_SELECT = "SELECT STREAM {e} AS x FROM probe"
TABLE_SELECT = "SELECT {e} AS x FROM tab"

#: an example of each query modifier sqlglot's parser knows (``QUERY_MODIFIER_PARSERS``, by token
#: name), written after ``SELECT ... FROM probe``; the test checks every modifier has one
MODIFIERS = {
    "WHERE": "WHERE i > 1", "GROUP_BY": "GROUP BY FLOOR(probe.ROWTIME TO HOUR)", "HAVING": "HAVING 1 = 1",
    "ORDER_BY": "ORDER BY probe.ROWTIME", "WINDOW": "WINDOW w AS (ROWS 2 PRECEDING)", "LIMIT": "LIMIT 1",
    "OFFSET": "OFFSET 1", "FETCH": "FETCH FIRST 1 ROWS ONLY", "QUALIFY": "QUALIFY i > 1",
    "MATCH_RECOGNIZE": "MATCH_RECOGNIZE (PARTITION BY s ORDER BY ROWTIME MEASURES A.i AS m PATTERN (A) DEFINE A AS i > 1)",
    "TABLE_SAMPLE": "TABLESAMPLE (10 PERCENT)", "USING": "USING SAMPLE 10", "PREWHERE": "PREWHERE i > 1",
    "CLUSTER_BY": "CLUSTER BY i", "DISTRIBUTE_BY": "DISTRIBUTE BY i", "SORT_BY": "SORT BY i",
    "CONNECT_BY": "CONNECT BY i = PRIOR i", "FOR": "FOR UPDATE", "LOCK": "LOCK IN SHARE MODE",
}
#: examples of the range operators (``RANGE_PARSERS``, by token name); others are written ``i OP i``
RANGES = {"BETWEEN": "i BETWEEN 1 AND 2", "IN": "i IN (1, 2)", "IS": "i IS NULL", "LIKE": "s LIKE 'a%'",
          "ILIKE": "s ILIKE 'a%'", "GLOB": "s GLOB 'a*'", "RLIKE": "s RLIKE 'a'", "IRLIKE": "s IRLIKE 'a'",
          "SIMILAR_TO": "s SIMILAR TO 'a'", "OVERLAPS": "(t, t) OVERLAPS (t, t)", "FOR": "i FOR 2",
          "OPERATOR": "i OPERATOR(+) i"}
#: examples of the primary, placeholder and no-parenthesis forms, by token name
PRIMARIES = {"BIT_STRING": "b'01'", "BYTE_STRING": "e'\\x00'", "FALSE": "FALSE", "TRUE": "TRUE", "NULL": "NULL",
             "HEREDOC_STRING": "$$x$$", "HEX_STRING": "X'1F'", "INTRODUCER": "_utf8 'x'", "NATIONAL_STRING": "N'x'",
             "NATIONAL_RAW_STRING": "NR'x'", "NUMBER": "1.5", "RAW_STRING": "r'x'", "SESSION_PARAMETER": "@@x",
             "STAR": "*", "STRING": "'x'", "UNICODE_STRING": "U&'x'", "COLON": ":x", "PARAMETER": "$1",
             "PLACEHOLDER": "?", "ANY": "ANY (SELECT 1)", "CASE": "CASE WHEN b THEN 1 ELSE 2 END",
             "CONNECT_BY_ROOT": "CONNECT_BY_ROOT i", "IF": "IF(b, 1, 2)"}
#: FROM items and clauses on them
FROM_ITEMS = [
    "tab", "tab AS a", "tab AS a (p, q, r, u)", "(SELECT i FROM tab) AS q", "(VALUES (1, 2)) AS v (a, c)",
    "tab PIVOT (SUM(i) FOR s IN ('a'))", "tab UNPIVOT (v FOR k IN (i))", "tab TABLESAMPLE BERNOULLI (10)",
    "tab TABLESAMPLE (1 ROWS)", "tab AT (TIMESTAMP => '2020-01-01')", "tab BEFORE (STATEMENT => 'x')",
    "ONLY tab", "tab WITH (NOLOCK)", "tab INDEXED BY i", "tab PARTITION (p1)", "ROWS FROM (f(1))",
    "UNNEST(ARRAY(1, 2))", "UNNEST(ARRAY(1, 2)) WITH ORDINALITY", "LATERAL (SELECT 1)", "tab, LATERAL (SELECT 1)",
    "tab FOR SYSTEM_TIME AS OF TIMESTAMP '2020-01-01 00:00:00'", "tab CHANGES (INFORMATION => DEFAULT)",
    "(tab AS a JOIN tab AS c ON a.i = c.i)", "TABLE(f(1))", "tab MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS i > 1)",
]
#: select heads and other clauses, as whole statements
STATEMENTS = [
    "SELECT DISTINCT i FROM tab", "SELECT DISTINCT ON (i) i FROM tab", "SELECT ALL i FROM tab",
    "SELECT AS STRUCT i FROM tab", "SELECT /*+ BROADCAST(tab) */ i FROM tab", "SELECT TOP 1 i FROM tab",
    "SELECT * EXCLUDE (i) FROM tab", "SELECT * EXCEPT (i) FROM tab", "SELECT * REPLACE (1 AS i) FROM tab",
    "SELECT * RENAME (i AS j) FROM tab", "SELECT * ILIKE 'i%' FROM tab", "SELECT i INTO u FROM tab",
    "SELECT i, s FROM tab GROUP BY ALL", "SELECT i FROM tab GROUP BY i WITH ROLLUP", "SELECT i FROM tab GROUP BY i WITH CUBE",
    "SELECT i FROM tab GROUP BY GROUPING SETS ((i), ())", "SELECT i FROM tab GROUP BY ROLLUP (i)",
    "SELECT i FROM tab GROUP BY CUBE (i)", "SELECT i FROM tab GROUP BY i WITH TOTALS",
    "SELECT i FROM tab ORDER BY i NULLS FIRST", "SELECT i FROM tab ORDER BY i WITH FILL",
    "SELECT i FROM tab ORDER SIBLINGS BY i", "SELECT i FROM tab ORDER BY i LIMIT 1 OFFSET 1",
    "SELECT i FROM tab LIMIT 1, 2", "SELECT i FROM tab LIMIT ALL", "SELECT i FROM tab SETTINGS x = 1",
    "SELECT i FROM tab FORMAT JSON", "SELECT i FROM tab OPTION (RECOMPILE)", "SELECT i FROM tab FOR XML PATH",
    "SELECT i FROM tab FOR SHARE", "SELECT i FROM tab FOR UPDATE OF tab NOWAIT",
    "WITH q AS (SELECT i FROM tab) SELECT i FROM q", "WITH q (a) AS (SELECT i FROM tab) SELECT a FROM q",
    "WITH RECURSIVE q AS (SELECT i FROM tab) SELECT i FROM q", "WITH q AS MATERIALIZED (SELECT i FROM tab) SELECT i FROM q",
    "WITH q AS NOT MATERIALIZED (SELECT i FROM tab) SELECT i FROM q",
    "(SELECT i FROM tab)", "(SELECT i FROM tab) ORDER BY i", "(SELECT i FROM tab) LIMIT 1", "VALUES (1, 'a'), (2, 'b')",
    "SELECT STREAM i FROM probe UNION ALL SELECT STREAM i FROM other",
    "SELECT i FROM tab UNION SELECT i FROM tab", "SELECT i FROM tab UNION ALL SELECT i FROM tab ORDER BY i",
    "SELECT i FROM tab UNION BY NAME SELECT i FROM tab", "SELECT i FROM tab UNION ALL BY NAME SELECT i FROM tab",
    "SELECT i FROM tab UNION CORRESPONDING SELECT i FROM tab", "SELECT i FROM tab UNION DISTINCT SELECT i FROM tab",
    "SELECT i FROM tab INTERSECT SELECT i FROM tab", "SELECT i FROM tab EXCEPT SELECT i FROM tab",
    "SELECT i FROM tab MINUS SELECT i FROM tab", "SELECT i FROM tab UNION ALL SELECT i FROM tab LIMIT 1",
    "SELECT STREAM SUM(i) OVER w AS x FROM probe WINDOW w AS (PARTITION BY s RANGE INTERVAL '1' HOUR PRECEDING)",
    "SELECT STREAM SUM(i) OVER (w ROWS 2 PRECEDING) AS x FROM probe WINDOW w AS (PARTITION BY s)",
    "SELECT STREAM SUM(i) OVER (ORDER BY FLOOR(ROWTIME TO HOUR) RANGE CURRENT ROW) AS x FROM probe",
    "SELECT STREAM SUM(i) OVER (ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS x FROM probe",
    "SELECT STREAM SUM(i) OVER (ROWS 2 PRECEDING EXCLUDE CURRENT ROW) AS x FROM probe",
    "SELECT STREAM SUM(i) FILTER (WHERE i > 1) OVER (ROWS 2 PRECEDING) AS x FROM probe",
    "SELECT STREAM FIRST_VALUE(i) IGNORE NULLS OVER (ROWS 2 PRECEDING) AS x FROM probe",
    "SELECT STREAM FIRST_VALUE(i IGNORE NULLS) OVER (ROWS 2 PRECEDING) AS x FROM probe",
    "SELECT STREAM ROW_NUMBER() OVER (ORDER BY ROWTIME) AS x FROM probe",
    "SELECT STREAM LAG(i) OVER (ORDER BY ROWTIME) AS x FROM probe",
    "SELECT STREAM SUM(i) OVER (ORDER BY ROWTIME GROUPS 2 PRECEDING) AS x FROM probe",
    "SELECT SUM(i) FILTER (WHERE i > 1) FROM tab", "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY i) FROM tab",
    "SELECT COUNT(DISTINCT i) FROM tab", "SELECT COUNT(ALL i) FROM tab", "SELECT SUM(i ORDER BY s) FROM tab",
    "SELECT STREAM ROWTIME, s FROM probe ORDER BY ROWTIME, s DESC NULLS LAST",
    "SELECT STREAM t AS ROWTIME, s FROM probe ORDER BY t WITHIN INTERVAL '1' MINUTE",
    "SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, COUNT(*) AS n FROM probe GROUP BY FLOOR(ROWTIME TO HOUR) HAVING COUNT(*) > 1",
    "SELECT STREAM DISTINCT FLOOR(ROWTIME TO HOUR) AS h, s FROM probe",
    "SELECT STREAM STEP(ROWTIME BY INTERVAL '5' MINUTE) AS h, COUNT(*) AS n FROM probe "
    "GROUP BY STEP(ROWTIME BY INTERVAL '5' MINUTE)",
    "SELECT STREAM p.ROWTIME, p.s, v.d FROM probe AS p JOIN versions FOR SYSTEM_TIME AS OF p.ROWTIME AS v ON p.i = v.i",
    "SELECT STREAM p.s FROM probe AS p LEFT JOIN other FOR SYSTEM_TIME AS OF p.ROWTIME AS o ON p.s = o.s",
    "SELECT STREAM p.s FROM probe AS p JOIN versions FOR SYSTEM_TIME BETWEEN p.ROWTIME AND p.ROWTIME AS v ON p.i = v.i",
    "SELECT STREAM p.s FROM probe AS p JOIN versions FOR SYSTEM_TIME FROM p.ROWTIME TO p.ROWTIME AS v ON p.i = v.i",
    "SELECT STREAM p.s FROM probe AS p JOIN versions FOR SYSTEM_TIME CONTAINED IN (p.ROWTIME, p.ROWTIME) AS v ON p.i = v.i",
    "SELECT STREAM p.s FROM probe AS p JOIN versions FOR SYSTEM_TIME ALL AS v ON p.i = v.i",
    "SELECT STREAM p.s FROM probe AS p JOIN versions FOR VERSION AS OF 3 AS v ON p.i = v.i",
    "SELECT STREAM p.s FROM probe AS p JOIN versions VERSION AS OF 3 AS v ON p.i = v.i",
    "SELECT STREAM p.s FROM probe OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS p JOIN other AS o ON p.s = o.s",
    "SELECT STREAM p.s FROM probe AS p JOIN tab AS q USING (s)", "SELECT STREAM p.s FROM probe AS p NATURAL JOIN tab AS q",
    "SELECT STREAM p.s FROM probe AS p CROSS JOIN tab AS q", "SELECT STREAM p.s FROM probe AS p, tab AS q",
    "SELECT STREAM p.s FROM probe AS p CROSS APPLY (SELECT 1) AS q", "SELECT STREAM p.s FROM probe AS p OUTER APPLY (SELECT 1) AS q",
    "SELECT STREAM p.s FROM probe AS p ASOF JOIN tab AS q MATCH_CONDITION (p.t >= q.t)",
    "SELECT STREAM p.s FROM probe AS p JOIN tab AS q ON p.i = q.i (+)",
    "SELECT STREAM p.s FROM probe AS p GLOBAL JOIN tab AS q ON p.i = q.i",
    "INSERT INTO tab VALUES ('a', 1, 1.5, TIMESTAMP '2020-01-01 00:00:00')", "INSERT INTO tab (i) VALUES (1)",
    "INSERT INTO probe (ROWTIME, i) VALUES ('2020-01-01 00:00:00', 1)", "INSERT OVERWRITE TABLE tab VALUES ('a', 1, 1.5, NULL)",
    "INSERT OR REPLACE INTO tab VALUES ('a', 1, 1.5, NULL)", "INSERT IGNORE INTO tab VALUES ('a', 1, 1.5, NULL)",
    "INSERT INTO tab VALUES ('a', 1, 1.5, NULL) RETURNING i", "INSERT INTO tab VALUES ('a', 1, 1.5, NULL) ON CONFLICT DO NOTHING",
    "INSERT INTO tab BY NAME SELECT 1 AS i", "INSERT INTO tab PARTITION (p = 1) VALUES ('a', 1, 1.5, NULL)",
    "INSERT INTO tab SELECT * FROM tab", "INSERT INTO tab DEFAULT VALUES",
    "CREATE STREAM s2 (a INTEGER NOT NULL, b DECIMAL(6, 2)) DESCRIPTION 'two columns'",
    "CREATE OR REPLACE TABLE t2 (a INTEGER) DESCRIPTION 'one'",
    "CREATE FOREIGN STREAM f2 (a INTEGER) SERVER FILE_SERVER OPTIONS (\"PARSER\" 'CSV', \"DIRECTORY\" '/tmp')",
    "CREATE VIEW v2 (a) DESCRIPTION 'a view' AS SELECT STREAM i FROM probe",
    "CREATE PUMP p2 STOPPED DESCRIPTION 'a pump' AS INSERT INTO other (s, i) SELECT STREAM s, i FROM probe",
    "ALTER PUMP p2 START", "DROP VIEW IF EXISTS v2", "CREATE INDEX ix ON tab (i)", "CREATE TEMPORARY TABLE t3 (a INTEGER)",
    "CREATE TABLE t4 (a INTEGER PRIMARY KEY)", "CREATE TABLE t5 AS SELECT * FROM tab", "CREATE STREAM s6 (a INTEGER DEFAULT 1)",
]


def _texts() -> dict:
    """``TokenType -> its shortest spelling`` in the dialect's tokenizer."""
    from streamsql.engine.sql.dialect import StreamTokenizer
    out: dict = {}
    for text, tt in list(StreamTokenizer.KEYWORDS.items()) + list(StreamTokenizer.SINGLE_TOKENS.items()):
        if tt not in out or len(text) < len(out[tt]):
            out[tt] = text
    return out


@lru_cache(maxsize=1)
def grammar_probes() -> list[tuple[str, str]]:
    """``(what, statement)``: a statement for every entry of the tables sqlglot's parser (as the
    dialect extends it) reads the grammar from: statements, query modifiers, operators of every
    precedence level, range operators, primaries, functions with and without parentheses, join
    methods, sides and kinds, set operations, FROM items, types; then the dialect's own syntax
    (windows, T-sort, STEP, temporal joins, DDL) and the other clauses of :data:`STATEMENTS`."""
    from sqlglot.tokens import TokenType
    from streamsql.engine.sql import dialect as D
    from streamsql.engine.sql.dialect import StreamParser as P
    texts = _texts()
    out: list[tuple[str, str]] = []

    def expr(what, e):
        out.append((what, STREAM_SELECT.format(e=e)))
        out.append((what, TABLE_SELECT.format(e=e)))

    for tt in sorted(P.STATEMENT_PARSERS, key=lambda t: t.name):
        if tt not in (TokenType.CREATE, TokenType.DROP, TokenType.ALTER, TokenType.INSERT, TokenType.SEMICOLON):
            out.append((f"statement {tt.name}", f"{texts.get(tt, tt.name)} tab"))
    for tt in sorted(P.QUERY_MODIFIER_PARSERS, key=lambda t: t.name):
        m = MODIFIERS.get(tt.name, f"{texts.get(tt, tt.name)} i")
        out.append((f"modifier {tt.name}", f"SELECT STREAM FLOOR(probe.ROWTIME TO HOUR) AS h FROM probe {m}"))
        out.append((f"modifier {tt.name}", f"SELECT i FROM tab {m}"))
    for table in ("EQUALITY", "COMPARISON", "BITWISE", "TERM", "FACTOR", "EXPONENT", "CONJUNCTION",
                  "DISJUNCTION", "COLUMN_OPERATORS"):
        for tt in sorted(getattr(P, table), key=lambda t: t.name):
            op = texts.get(tt, tt.name)
            expr(f"{table} {tt.name}", "probe.i" if tt == TokenType.DOT else f"i {op} i")
    for tt in sorted(P.RANGE_PARSERS, key=lambda t: t.name):
        expr(f"range {tt.name}", RANGES.get(tt.name, f"i {texts.get(tt, tt.name)} i"))
    for tt in sorted(P.UNARY_PARSERS, key=lambda t: t.name):
        expr(f"unary {tt.name}", f"{texts.get(tt, tt.name)} i")
    for table in ("PRIMARY_PARSERS", "PLACEHOLDER_PARSERS", "NO_PAREN_FUNCTION_PARSERS"):
        for tt in getattr(P, table):
            name = tt.name if hasattr(tt, "name") else str(tt)
            expr(f"{table} {name}", PRIMARIES.get(name, texts.get(tt, name)))
    for tt in sorted(P.NO_PAREN_FUNCTIONS, key=lambda t: t.name):
        expr(f"function {tt.name}", texts.get(tt, tt.name))
    for tt in P.LAMBDAS:
        expr(f"lambda {tt.name}", "TRANSFORM(ARRAY(1), x -> x)" if tt == TokenType.ARROW else "ROUND(d => 1)")
    for name in sorted(set(P.FUNCTIONS) | set(P.FUNCTION_PARSERS)):
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
            continue
        for args in ARGS:               # the first argument list that parses
            try:
                D._DIALECT.parse(f"SELECT {name}({args})")
            except Exception:
                continue
            out.append((f"function {name}", STREAM_SELECT.format(e=f"{name}({args})")))
            break
    for group in (P.JOIN_METHODS, P.JOIN_SIDES, P.JOIN_KINDS):
        for tt in sorted(group, key=lambda t: t.name):
            out.append((f"join {tt.name}", f"SELECT STREAM p.s FROM probe AS p {texts.get(tt, tt.name)} JOIN tab AS q "
                                           "ON p.i = q.i"))
    for tt in sorted(P.TYPE_TOKENS, key=lambda t: t.name):
        out.append((f"type {tt.name}", STREAM_SELECT.format(e=f"CAST(i AS {texts.get(tt, tt.name)})")))
    for item in FROM_ITEMS:
        out.append((f"from {item}", f"SELECT * FROM {item}"))
    for s in STATEMENTS:
        out.append(("statement", s))
    return out


def construct_names() -> dict[str, str]:
    """``keyword written -> what a refusal of it must name``, for the constructs the dialect lacks."""
    return {"MATCH_RECOGNIZE": "MATCH_RECOGNIZE", "PIVOT": "PIVOT", "UNPIVOT": "UNPIVOT", "LATERAL": "LATERAL",
            "QUALIFY": "QUALIFY", "TABLESAMPLE": "TABLESAMPLE", "GROUPING SETS": "GROUPING SETS",
            "ROLLUP": "ROLLUP", "CUBE": "CUBE", "FILTER (": "FILTER", "WITHIN GROUP": "WITHIN GROUP",
            "IGNORE NULLS": "IGNORE NULLS", "LIMIT": "LIMIT", "OFFSET": "OFFSET", "FETCH": "FETCH",
            "ROW_NUMBER": "ROW_NUMBER", "LAG(": "LAG", "INTERSECT": "INTERSECT", "EXCEPT (": "EXCEPT",
            "TRY_CAST": "TRY_CAST", "RETURNING": "RETURNING", "ON CONFLICT": "ON CONFLICT", "BY NAME": "BY NAME",
            "CORRESPONDING": "CORRESPONDING", "MATERIALIZED": "MATERIALIZED", "WITH FILL": "WITH FILL",
            "DISTINCT ON": "DISTINCT ON", "EXCLUDE (": "EXCLUDE", "USING (": "USING", "NATURAL": "NATURAL",
            "FOR UPDATE": "FOR UPDATE", "FOR SHARE": "FOR SHARE", "PREWHERE": "PREWHERE", "CLUSTER BY": "CLUSTER BY",
            "SORT BY": "SORT BY", "DISTRIBUTE BY": "DISTRIBUTE BY", "CONNECT BY": "CONNECT BY",
            "MATCH_CONDITION": "MATCH_CONDITION", "WITH ORDINALITY": "UNNEST", "INDEXED BY": "INDEXED BY",
            "FOR SYSTEM_TIME BETWEEN": "FOR SYSTEM_TIME BETWEEN", "FOR VERSION": "FOR VERSION",
            "EXCLUDE CURRENT": "EXCLUDE", "GROUPS 2": "GROUPS", "SIBLINGS": "SIBLINGS", "FOR XML": "FOR XML",
            "GLOBAL JOIN": "GLOBAL", "POSITIONAL": "POSITIONAL", "MINUS": "MINUS", "SELECT TOP": "TOP",
            "INSERT IGNORE": "INSERT IGNORE", "PRIMARY KEY": "PRIMARY KEY", "INTEGER DEFAULT": "DEFAULT",
            "TABLE T5 AS": "AS query"}
