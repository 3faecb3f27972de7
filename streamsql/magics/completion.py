"""Tab completion in ``%%streamsql`` cells and ``%streamsql`` lines.

One IPython matcher (Matcher API v2: it receives the whole cell and the cursor, which the
terminal, classic Notebook and JupyterLab's ``complete_request`` all pass to
``Completer.completions``). It completes statement keywords; stream, view and table names after
FROM / JOIN / INTO / DROP; pump names after ALTER / DROP PUMP; column names, unqualified from the
statement's FROM clause or qualified after ``alias.`` (the alias resolved from the FROM clause of
the statement being typed, which may come after the cursor and may be incomplete); the dialect's
functions; and the line magic's sub-commands and query names. Names come from the session's
workbench catalog, spelled as their DDL wrote them.

Incomplete SQL is the normal case here, so statements are scanned by a small tolerant lexer
(strings, quoted identifiers and comments may be unterminated), never parsed.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from IPython.core.completer import SimpleCompletion, context_matcher

from . import commands

#: words a statement or clause can start with, or that follow them (the dialect's keywords)
KEYWORDS = (
    "SELECT", "STREAM", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "WITHIN", "UNION", "ALL",
    "DISTINCT", "AS", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "ON", "OVER", "PARTITION",
    "RANGE", "ROWS", "INTERVAL", "PRECEDING", "FOLLOWING", "UNBOUNDED", "CURRENT", "ROW", "WINDOW", "WITH",
    "CASE", "WHEN", "THEN", "ELSE", "END", "AND", "OR", "NOT", "NULL", "IS", "IN", "LIKE", "BETWEEN",
    "TRUE", "FALSE", "TIMESTAMP", "ROWTIME", "TO", "DESC", "ASC", "CREATE", "REPLACE", "TABLE", "VIEW",
    "PUMP", "FOREIGN", "SERVER", "OPTIONS", "DROP", "IF", "EXISTS", "ALTER", "START", "STOP", "STARTED",
    "STOPPED", "INSERT", "INTO", "VALUES", "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND",
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DECIMAL", "REAL", "DOUBLE", "VARCHAR", "CHAR", "BOOLEAN",
)
STATEMENT_STARTS = ("SELECT", "CREATE", "INSERT", "DROP", "ALTER", "WITH")
#: where an expression starts (after SELECT, a comma, WHERE, an operator...): the keywords that
#: can begin or be one (columns and functions come first)
EXPRESSION_WORDS = ("CASE", "NOT", "NULL", "TRUE", "FALSE", "TIMESTAMP", "INTERVAL", "ROWTIME", "DISTINCT")
#: after an expression: what can follow it (a clause, an operator, an alias, a join)
AFTER_EXPRESSION = ("FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "WITHIN", "UNION", "ALL", "AS", "JOIN",
                    "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "ON", "OVER", "WINDOW", "AND", "OR", "NOT", "IS",
                    "IN", "LIKE", "BETWEEN", "WHEN", "THEN", "ELSE", "END", "TO", "DESC", "ASC", "NULL")
#: after an expression, by the clause it is in: what can follow there
_OPERATORS = ("AND", "OR", "NOT", "IS", "IN", "LIKE", "BETWEEN")
_AFTER_IN = {
    "SELECT": ("AS", "FROM", "OVER") + _OPERATORS,
    "FROM": ("AS", "OVER", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "ON", "WHERE", "GROUP", "ORDER",
             "UNION", "WINDOW"),
    "WHERE": _OPERATORS + ("GROUP", "ORDER", "UNION", "WINDOW"),
    "GROUP": ("HAVING", "ORDER", "UNION", "WINDOW"),
    "HAVING": _OPERATORS + ("ORDER", "UNION", "WINDOW"),
    "ORDER": ("ASC", "DESC", "WITHIN", "UNION"),
}
_AFTER_IN["JOIN"] = _AFTER_IN["FROM"]
_AFTER_IN["ON"] = _OPERATORS + _AFTER_IN["FROM"][4:]
#: inside OVER (...) or a WINDOW definition
WINDOW_WORDS = ("PARTITION", "BY", "ORDER", "RANGE", "ROWS", "INTERVAL", "PRECEDING", "FOLLOWING", "UNBOUNDED",
                "CURRENT", "ROW", "AND", "BETWEEN")
#: the words after which an expression is expected (and the operators)
_EXPRESSION_AFTER = {"SELECT", "STREAM", "DISTINCT", "WHERE", "ON", "HAVING", "AND", "OR", "NOT", "BY", "WHEN",
                     "THEN", "ELSE", "CASE", "IN", "BETWEEN", "LIKE", ",", "(", "=", "<", ">", "+", "-", "*", "/",
                     "||", "%"}
#: type names (after CAST(x AS, in a CREATE's column list)
TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DECIMAL", "REAL", "DOUBLE", "VARCHAR", "CHAR", "BOOLEAN",
         "TIMESTAMP")
_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
AFTER = {"CREATE": ("STREAM", "TABLE", "VIEW", "PUMP", "OR", "FOREIGN"), "OR": ("REPLACE",),
         "REPLACE": ("STREAM", "TABLE", "VIEW", "PUMP", "FOREIGN"), "DROP": ("STREAM", "TABLE", "VIEW", "PUMP"),
         "ALTER": ("PUMP",), "INSERT": ("INTO",), "SELECT": ("STREAM", "DISTINCT")}

#: sub-commands of the line magic that take a query name
_QUERY_ARGS = ("stop", "show", "workbench", "steps", "timeline", "explain")
_VALUE_OPTIONS = ("-n", "--name", "-l", "--limit", "-o", "--out", "-q", "--query")


@functools.lru_cache(maxsize=1)
def function_names() -> tuple[str, ...]:
    """The dialect's functions, from the engine's one list of them (today
    ``streamsql.engine.expr.FUNCTIONS``, minus operators and internal names, plus
    ``streamsql.engine.plan.AGG_FUNCTIONS``)."""
    from ..engine.expr import FUNCTIONS
    from ..engine.plan import AGG_FUNCTIONS
    internal = {"NEG", "AND", "OR", "NOT", "CASE", "IN", "LIKE", "FLOOR_TO", "CEIL_TO"}
    names = {f for f in FUNCTIONS if re.fullmatch(r"[A-Z][A-Z_]*", f) and f not in internal
             and not f.startswith("IS_")}
    return tuple(sorted(names | set(AGG_FUNCTIONS)))


# --------------------------------------------------------------------------- the catalog's names

@dataclass
class Names:
    """What the session's workbench has, spelled as written; relations map to their columns."""
    streams: dict[str, list[str]] = field(default_factory=dict)
    system: set[str] = field(default_factory=set)             # streams the engine writes (ERRORS)
    tables: dict[str, list[str]] = field(default_factory=dict)
    views: dict[str, list[str] | None] = field(default_factory=dict)
    pumps: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    catalog: object = None

    def relations(self) -> list[str]:
        return list(self.streams) + list(self.views) + list(self.tables)

    def find(self, name: str) -> str | None:
        """The relation ``name`` refers to (as an identifier: unquoted is case-insensitive)."""
        for n in self.relations():
            if n == name or (not name.startswith('"') and n.upper() == name.upper()):
                return n
        return None

    def columns(self, rel: str) -> list[str]:
        if rel in self.streams:
            return ["ROWTIME"] + self.streams[rel]
        if rel in self.tables:
            return self.tables[rel]
        if rel in self.views:
            if self.views[rel] is None:
                self.views[rel] = _view_columns(self.catalog, rel)
            return self.views[rel]
        return []


def _spell(name: str, spelled: dict[str, str]) -> str:
    from ..engine.sql.spelling import sql_name
    return sql_name(name, spelled)


def _view_columns(catalog, view_key: str) -> list[str]:
    from ..engine.sql.spelling import written_names
    from ..engine.sql import analyze
    for n, v in list(catalog.views.items()):
        if _spell(n, written_names(v.sql)) == view_key:
            try:
                q = analyze(v.body_sql, catalog).query
            except Exception:   # a view over something dropped since
                return []
            cols = v.column_names or [f.name for f in q.columns]
            sp = written_names(v.sql + " " + v.body_sql)
            return (["ROWTIME"] if q.is_stream else []) + [_spell(c, sp) for c in cols]
    return []


def names_of(wb) -> Names:
    """A snapshot of the workbench's names (``wb`` None: none)."""
    from ..engine.sql.spelling import written_names
    out = Names()
    if wb is None:
        return out
    c = wb.catalog
    out.catalog = c
    for n, d in list(c.streams.items()):
        sp = written_names(d.sql)
        out.streams[_spell(n, sp)] = [_spell(f.name, sp) for f in d.fields]
        if getattr(d, "system", False):
            out.system.add(_spell(n, sp))
    for n, d in list(c.tables.items()):
        sp = written_names(d.sql)
        out.tables[_spell(n, sp)] = [_spell(f.name, sp) for f in d.fields]
    for n, d in list(c.views.items()):
        out.views[_spell(n, written_names(d.sql))] = None          # columns on demand (an analysis)
    out.pumps = [_spell(p, {}) for p in c.pumps]
    out.queries = list(wb.queries)
    return out


# --------------------------------------------------------------------------- a tolerant lexer

_TOKEN = re.compile(r"""
    (?P<comment>--[^\n]*|/\*(?:.|\n)*?(?:\*/|$))
  | (?P<string>'(?:[^']|'')*(?:'|$))
  | (?P<qident>"(?:[^"]|"")*(?:"|$))
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<number>\d+(?:\.\d*)?)
  | (?P<punct>\S)
""", re.X)


@dataclass
class Tok:
    kind: str
    text: str
    start: int
    end: int

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else self.text


def tokens(text: str) -> list[Tok]:
    return [Tok(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)
            if m.lastgroup != "comment"]


def _inside_literal(text: str, offset: int) -> bool:
    """Whether ``offset`` is inside a string or a comment."""
    for m in _TOKEN.finditer(text[:offset]):
        if m.end() == offset and m.lastgroup in ("string", "comment"):
            g = m.group()
            if m.lastgroup == "string":
                return not re.fullmatch(r"'(?:[^']|'')*'", g)
            return g.startswith("--") or not (len(g) >= 4 and g.endswith("*/"))
    return False


def statement_around(text: str, offset: int) -> tuple[str, int]:
    """The statement holding ``offset`` (between the ``;`` around it) and the offset in it."""
    start, end = 0, len(text)
    for t in tokens(text):
        if t.text == ";":
            if t.end <= offset:
                start = t.end
            elif t.start >= offset:
                end = t.start
                break
    return text[start:end], offset - start


def aliases(toks: list[Tok], names: Names) -> dict[str, object]:
    """Alias (upper-case unless quoted) -> relation name, or a list of columns for a sub-query,
    from every FROM list of the statement."""
    ctes = _ctes(toks, names)
    out: dict[str, object] = dict(ctes)
    in_from = {}          # paren depth -> inside a FROM list at that depth
    depth = 0
    i = 0
    n = len(toks)

    def key(t: Tok) -> str:
        return t.text.strip('"') if t.kind == "qident" else t.text.upper()

    while i < n:
        t = toks[i]
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            in_from.pop(depth, None)
            depth -= 1
        elif t.upper in ("FROM", "JOIN"):
            in_from[depth] = True
        elif t.upper in ("WHERE", "GROUP", "HAVING", "ORDER", "ON", "UNION", "WINDOW", "SELECT") and t.kind == "word":
            in_from.pop(depth, None)
        if in_from.get(depth) and (t.upper in ("FROM", "JOIN") or t.text == ","):
            j = i + 1
            rel: object = None
            if j < n and toks[j].text == "(":                  # a sub-query: its columns
                k, d = j, 0
                while k < n:
                    d += toks[k].text == "("
                    d -= toks[k].text == ")"
                    if d == 0:
                        break
                    k += 1
                rel = _subquery_columns(toks, j, k, names)
                j = k + 1
            elif j < n and toks[j].kind in ("word", "qident"):
                rel = ctes.get(key(toks[j])) or names.find(toks[j].text) or toks[j].text
                out.setdefault(key(toks[j]), rel)
                j += 1
                if j < n and toks[j].upper == "OVER" and j + 1 < n and toks[j + 1].text == "(":
                    k, d = j + 1, 0
                    while k < n:
                        d += toks[k].text == "("
                        d -= toks[k].text == ")"
                        if d == 0:
                            break
                        k += 1
                    j = k + 1
            if rel is not None and j < n:
                if toks[j].upper == "AS":
                    j += 1
                if j < n and toks[j].kind in ("word", "qident") and toks[j].upper not in _CLAUSE_WORDS:
                    out[key(toks[j])] = rel
        i += 1
    return out


def _ctes(toks: list[Tok], names: Names) -> dict[str, list[str]]:
    """``WITH name AS (...)`` at the start of the statement: name -> its columns."""
    out: dict[str, list[str]] = {}
    if not toks or toks[0].upper != "WITH":
        return out
    i = 1
    while i + 2 < len(toks) and toks[i].kind in ("word", "qident") and toks[i + 1].upper == "AS" \
            and toks[i + 2].text == "(":
        k, d = i + 2, 0
        while k < len(toks):
            d += toks[k].text == "("
            d -= toks[k].text == ")"
            if d == 0:
                break
            k += 1
        t = toks[i]
        out[t.text.strip('"') if t.kind == "qident" else t.text.upper()] = _subquery_columns(toks, i + 2, k, names)
        i = k + 1
        if i < len(toks) and toks[i].text == ",":
            i += 1
    return out


_CLAUSE_WORDS = {"WHERE", "GROUP", "HAVING", "ORDER", "ON", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER",
                 "UNION", "WINDOW", "OVER", "CROSS", "NATURAL"}


def _subquery_columns(toks: list[Tok], open_i: int, close_i: int, names: Names) -> list[str]:
    if names.catalog is None or close_i >= len(toks):
        return []
    from ..engine.sql import analyze
    from ..engine.sql.spelling import written_names
    text = " ".join(t.text for t in toks[open_i + 1:close_i])
    try:
        q = analyze(text, names.catalog).query
    except Exception:
        return []
    sp = written_names(text)
    return (["ROWTIME"] if q.is_stream else []) + [_spell(f.name, sp) for f in q.columns]


# --------------------------------------------------------------------------- what to offer

def _case(words, fragment: str) -> list[str]:
    lower = fragment.lstrip('"').islower()
    return [w.lower() if lower else w for w in words]


def _starting(cands, fragment: str) -> list[str]:
    f = fragment.lstrip('"').upper()
    seen, out = set(), []
    for c in cands:
        if c.lstrip('"').upper().startswith(f) and c not in seen:
            seen.add(c)
            out.append(c)
    return out


def sql_completions(stmt: str, offset: int, names: Names) -> tuple[str, list[tuple[str, str]]]:
    """``(fragment, [(completion, type)])`` at ``offset`` of the statement text ``stmt``."""
    before = stmt[:offset]
    if _inside_literal(stmt, offset):
        return "", []
    m = re.search(r'"?[A-Za-z0-9_$]*$', before)
    fragment = m.group()
    head = before[:m.start()]
    toks = tokens(head + " " + stmt[offset:])       # without the word being typed (maybe an open quote)
    prev = [t for t in toks if t.end <= len(head)]
    if head.endswith("."):                                      # alias.column
        qual = tokens(head[:-1])
        if not qual or qual[-1].kind not in ("word", "qident"):
            return fragment, []
        q = qual[-1]
        al = aliases(toks, names)
        k = q.text.strip('"') if q.kind == "qident" else q.text.upper()
        rel = al.get(k) or names.find(q.text)
        cols = rel if isinstance(rel, list) else names.columns(rel) if rel else []
        return fragment, [(c, "column") for c in _starting(cols, fragment)]
    last = prev[-1].upper if prev else ""
    last2 = prev[-2].upper if len(prev) > 1 else ""
    if not prev:
        return fragment, [(w, "keyword") for w in _case(_starting(STATEMENT_STARTS, fragment), fragment)]
    if last in ("STREAM", "TABLE", "VIEW") and last2 in ("DROP", "EXISTS"):
        pool = {"STREAM": names.streams, "TABLE": names.tables, "VIEW": names.views}[last]
        return fragment, [(x, last.lower()) for x in _starting(list(pool), fragment)]
    if last == "PUMP" and last2 in ("DROP", "ALTER", "EXISTS") or (last == "," and _after_alter_pump(prev)):
        return fragment, [(x, "pump") for x in _starting(names.pumps, fragment)]
    if last in ("STREAM", "TABLE", "VIEW", "PUMP") and last2 in ("CREATE", "REPLACE", "FOREIGN"):
        return fragment, []                                     # a new name
    if last in AFTER and last != "SELECT":
        return fragment, [(w, "keyword") for w in _case(_starting(AFTER[last], fragment), fragment)]
    if last in ("FROM", "JOIN") or (last == "," and _in_from(prev)):
        out = [(x, "stream") for x in _starting(list(names.streams), fragment)]
        out += [(x, "view") for x in _starting(list(names.views), fragment)]
        out += [(x, "table") for x in _starting(list(names.tables), fragment)]
        return fragment, out
    if last == "INTO":
        out = [(x, "stream") for x in _starting(list(names.streams), fragment)]
        return fragment, out + [(x, "table") for x in _starting(list(names.tables), fragment)]
    # anywhere else: what fits the place. Where an expression starts: the columns of the FROM
    # clause (all the user's relations' when there is none yet), aliases, functions, then the
    # keywords an expression can start with; inside OVER (...): columns, then the window's words;
    # after an expression: the clauses and operators that can follow it. A type after CAST(x AS,
    # a unit after INTERVAL '...' or TO.
    al = aliases(toks, names)
    if last == "AS" and _in_cast(prev):
        return fragment, [(w, "keyword") for w in _case(_starting(TYPES, fragment), fragment)]
    if (len(prev) > 1 and prev[-2].upper == "INTERVAL" and prev[-1].kind == "string") or last == "TO":
        return fragment, [(w, "keyword") for w in _case(_starting(_UNITS, fragment), fragment)]
    window = _in_window(prev)
    # inside OVER (...) an expression starts only after PARTITION BY / ORDER BY or a comma
    expression = last in (("BY", ",") if window else _EXPRESSION_AFTER)
    out: list[tuple[str, str]] = []
    if expression:
        cols: list[str] = []
        rels = list(dict.fromkeys(v for v in al.values() if isinstance(v, str)))
        for r in rels or [r for r in names.relations() if r not in names.system]:
            cols += names.columns(r)
        for v in al.values():
            if isinstance(v, list):
                cols += v
        out = [(c, "column") for c in _starting(cols, fragment)]
        out += [(a, "alias") for a in _starting([_alias_text(toks, a) for a in al], fragment)]
    if not fragment.startswith('"'):
        if expression and not window:
            out += [(f, "function") for f in _case(_starting(function_names(), fragment), fragment)]
        if window:
            words = () if expression else WINDOW_WORDS
        elif expression:
            words = EXPRESSION_WORDS + (("STREAM",) if last == "SELECT" else ())
        else:
            words = _AFTER_IN.get(_clause(prev), AFTER_EXPRESSION)
            if _in_case(prev):
                words = ("WHEN", "THEN", "ELSE", "END") + words
        named = {c.upper() for c, _t in out}               # ROWTIME is a column, not a keyword too
        out += [(k, "keyword") for k in _case(_starting(words, fragment), fragment) if k.upper() not in named]
    return fragment, out


def _clause(prev: list[Tok]) -> str:
    """The clause the cursor is in at its own parenthesis depth (SELECT, FROM, WHERE...)."""
    depth = 0
    for t in reversed(prev):
        if t.text == ")":
            depth += 1
        elif t.text == "(":
            if depth == 0:
                return ""
            depth -= 1
        elif depth == 0 and t.kind == "word" and t.upper in _AFTER_IN:
            return t.upper
    return ""


def _in_case(prev: list[Tok]) -> bool:
    """Whether a CASE is open (more CASE than END words at the cursor's depth)."""
    words = [t.upper for t in prev if t.kind == "word"]
    return words.count("CASE") > words.count("END")


def _in_window(prev: list[Tok]) -> bool:
    """Whether the cursor is inside the parentheses of ``OVER (`` or ``WINDOW w AS (``."""
    depth = 0
    for i in range(len(prev) - 1, -1, -1):
        t = prev[i]
        if t.text == ")":
            depth += 1
        elif t.text == "(":
            if depth == 0:
                before = prev[i - 1].upper if i > 0 else ""
                return before == "OVER" or (before == "AS" and i > 2 and prev[i - 3].upper == "WINDOW")
            depth -= 1
    return False


def _in_cast(prev: list[Tok]) -> bool:
    """Whether the ``AS`` just typed is CAST's (inside ``CAST(``)."""
    depth = 0
    for i in range(len(prev) - 2, -1, -1):
        t = prev[i]
        if t.text == ")":
            depth += 1
        elif t.text == "(":
            if depth == 0:
                return i > 0 and prev[i - 1].upper == "CAST"
            depth -= 1
    return False


def _alias_text(toks: list[Tok], key: str) -> str:
    for t in toks:
        if (t.kind == "word" and t.text.upper() == key) or (t.kind == "qident" and t.text.strip('"') == key):
            return t.text
    return key


def _in_from(prev: list[Tok]) -> bool:
    depth = 0
    for t in reversed(prev):
        if t.text == ")":
            depth += 1
        elif t.text == "(":
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0 and t.kind == "word":
            if t.upper == "FROM":
                return True
            if t.upper in ("SELECT", "WHERE", "GROUP", "HAVING", "ORDER", "ON", "UNION", "BY"):
                return False
    return False


def _after_alter_pump(prev: list[Tok]) -> bool:
    words = [t.upper for t in prev if t.kind == "word"]
    return len(words) >= 2 and words[0] == "ALTER" and words[1] == "PUMP"


# --------------------------------------------------------------------------- the magic's line

def line_completions(line: str, at: int, names: Names) -> tuple[str, list[tuple[str, str]]] | None:
    """Completions at ``at`` in ``line`` (what follows ``%streamsql``); None leaves the place to
    IPython's other matchers (a path after ``load``)."""
    rest = line[:at]
    toks = list(re.finditer(r"\S+", rest))
    i = 0
    while i < len(toks) and toks[i].group().startswith("-") and toks[i].end() < len(rest):
        opt = toks[i].group().split("=", 1)[0]
        i += 2 if opt in _VALUE_OPTIONS and "=" not in toks[i].group() else 1
    if i >= len(toks) or (i == len(toks) - 1 and toks[i].end() == len(rest)):
        frag = toks[i].group() if i < len(toks) else ""
        if frag.startswith("-"):
            return None
        words = _starting(commands.NAMES, frag.lower()) + _case(_starting(STATEMENT_STARTS, frag), frag)
        return frag, [(w, "magic" if w in commands.NAMES else "keyword") for w in words]
    first = toks[i].group().lower()
    if first in commands.NAMES:
        if first == "load":
            return None
        typing = toks[-1].end() == len(rest)                   # no blank after the last word
        frag = toks[-1].group() if typing else ""
        prev = toks[-2].group() if typing else toks[-1].group()
        if first in _QUERY_ARGS or (first == "save" and prev in ("-q", "--query")):
            return frag, [(q, "query") for q in _starting(names.queries, frag)]
        if first == "save" and frag.startswith("-"):
            return frag, [(o, "option") for o in ("--query", "--from-start") if o.startswith(frag)]
        return frag, []
    return sql_completions(line[toks[i].start():], at - toks[i].start(), names)


# --------------------------------------------------------------------------- the matcher

_CELL = re.compile(r"^\s*%%streamsql\b")
_LINE = re.compile(r"^(\s*)%streamsql\b")


def make_matcher(magics):
    """The matcher for ``ip.Completer.custom_matchers``, reading ``magics``' workbench."""

    @context_matcher(priority=1, identifier="streamsql")
    def streamsql_matcher(context):
        none = {"completions": [], "suppress": False}
        try:
            from .warmup import imports_ready
            imports_ready()         # the engine's names come from modules imported in the background
            found = _complete(context, magics)
        except Exception:   # completion must never disturb the session
            return none
        if found is None:
            return none
        fragment, items = found
        return {"completions": [SimpleCompletion(t, type=k) for t, k in items], "matched_fragment": fragment,
                "suppress": bool(items), "ordered": True}
    return streamsql_matcher


def _names(magics) -> Names:
    k = getattr(magics, "kernel", None)
    return names_of(k.wb if k is not None and k.is_open else None)


def _complete(context, magics):
    lines = context.full_text.split("\n")
    row, col = context.cursor_line, context.cursor_position
    if _CELL.match(lines[0]) and row >= 1:
        body = "\n".join(lines[1:])
        offset = sum(len(x) + 1 for x in lines[1:row]) + col
        stmt, at = statement_around(body, offset)
        return sql_completions(stmt, at, _names(magics))
    line = lines[row] if row < len(lines) else ""
    m = _LINE.match(line)
    if m and col > m.end():
        return line_completions(line[m.end():], col - m.end(), _names(magics))
    return None
