"""What the dialect plans, node class by node class: nothing the parser accepts is ignored.

sqlglot's parser reads the clauses of many dialects (PIVOT, TABLESAMPLE, QUALIFY, TRY_CAST,
``* EXCLUDE``, ``INSERT ... RETURNING``, ...): a statement may parse into a tree that carries
more than the planner looks at. Before a statement is planned, :func:`check` walks its tree and
refuses, in one line naming the construct and at its position, a node of a class that is not in
:data:`PLANNED` or one that carries an argument its class's entry does not list.

An entry lists the arguments the planner reads: to plan them, or to refuse them with a message of
its own (``LIMIT`` in a streaming query, ``WITH RECURSIVE``, ``USING``, ...). ``PLAN`` arguments are
nodes the walk checks in turn; ``READ`` ones are read whole (a flag, a type's text, an interval
unit, a clause the planner refuses with its own words) and not walked into; ``IMPLIED`` ones are
set by sqlglot's parser whatever was written (``||``'s ``safe``, ``COUNT``'s ``big_int``, an ORDER
BY key's default NULL order, whose written form the planner reads from the tokens). A node class the
dialect adds to the parser gets an entry here, next to the code that plans it;
``tests/test_sql_coverage.py`` walks the dialect's grammar and checks, for every statement that
is accepted, that the planner read every argument present.

Constructs that sqlglot cannot even parse in this dialect (``MATCH_RECOGNIZE``, ``FILTER (WHERE
...)`` on an aggregate, ...) are named by :func:`unparsed_construct` from their keywords.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from . import nodes as N
from .window_tvf import Descriptor, SessionCall, WindowTvf
from .source import Source, start_of

PLAN = "plan"
READ = "read"
IMPLIED = "implied"


def _entry(plan: str = "", read: str = "", implied: str = "") -> dict[str, str]:
    return {**{k: PLAN for k in plan.split()}, **{k: READ for k in read.split()},
            **{k: IMPLIED for k in implied.split()}}


_BINARY = _entry("this expression")
_UNARY = _entry("this")

#: per node class, the arguments the planner reads (``PLAN``: walked into; ``READ``: read whole)
PLANNED: dict[type, dict[str, str]] = {
    # ---------------------------------------------------------------- queries (select.py, relations.py)
    exp.Select: _entry("with_ expressions from_ joins where group having order windows distinct",
                       read="limit offset fetch"),
    exp.Subquery: _entry("this alias with_", read="order limit offset joins"),
    exp.Union: _entry("this expression with_ order", read="distinct limit offset"),
    exp.Intersect: _entry(read="this expression distinct with_ order limit offset"),     # refused by name
    exp.Except: _entry(read="this expression distinct with_ order limit offset"),        # refused by name
    exp.From: _UNARY,
    exp.Join: _entry("this on", read="side kind using method"),
    exp.Table: _entry("this alias version", read="db joins"),
    exp.Version: _entry("expression", read="this kind"),                                 # sql/temporal.py
    exp.TableAlias: _entry("this columns"),
    N.WindowedAlias: _entry("this columns window"),
    exp.Values: _entry("expressions alias"),
    exp.Tuple: _entry("expressions"),
    exp.With: _entry("expressions", read="recursive"),
    exp.CTE: _entry("this alias"),
    exp.Where: _UNARY,
    exp.Group: _entry("expressions", read="grouping_sets cube rollup totals all"),
    exp.Having: _UNARY,
    N.StreamOrder: _entry("expressions within"),
    exp.Ordered: _entry("this", read="desc", implied="nulls_first"),
    exp.Alias: _entry("this alias"),
    exp.Aliases: _entry(read="this expressions"),                                       # refused by name
    exp.Distinct: _entry("expressions", read="on"),
    exp.Star: {},
    exp.Identifier: _entry(read="this quoted"),
    exp.Var: _entry(read="this"),
    exp.Column: _entry("this table", read="db"),
    # ---------------------------------------------------------------- windows (windows.py)
    N.Over: _entry("this window"),
    N.WindowRef: _entry("name body"),
    N.WindowBody: _entry("base partition_by order frame"),
    N.Frame: _entry("start end", read="mode"),
    N.FrameBound: _entry("this", read="kind side"),
    N.NamedWindow: _entry("this body"),
    exp.RowNumber: {}, exp.Rank: {}, exp.DenseRank: {},         # window Top-N (window_rank.py)
    # ---------------------------------------------------------------- window shapes (window_tvf.py, group_windows.py)
    WindowTvf: _entry("data descriptor expressions partition alias", read="this"),
    Descriptor: _UNARY,
    SessionCall: _entry("expressions"),
    # ---------------------------------------------------------------- expressions (expressions.py)
    exp.Literal: _entry(read="this is_string"),
    exp.Boolean: _entry(read="this"),
    exp.Null: {},
    exp.Paren: _UNARY,
    exp.Neg: _UNARY,
    **{k: _BINARY for k in (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT,
                            exp.GTE, exp.And, exp.Or, exp.Escape, exp.Pow, exp.Nullif, N.Step)},
    exp.Not: _UNARY,
    exp.Is: _entry("this expression", read="negate"),
    exp.Between: _entry("this low high", read="symmetric"),
    exp.In: _entry("this expressions", read="query unnest field"),
    exp.Like: _entry("this expression", read="negate"),
    exp.ILike: _entry(read="this expression negate"),                                   # refused by name
    exp.Case: _entry("this ifs default"),
    exp.If: _entry("this true"),
    exp.Cast: _entry("this", read="to"),                         # the type is read as its text
    N.TimestampLiteral: _UNARY,
    exp.Interval: _entry(read="this unit"),                      # the value and unit are read as text
    exp.DPipe: _entry("this expression", implied="safe"),
    exp.Floor: _entry("this", read="to decimals"),
    exp.Ceil: _entry("this", read="to decimals"),
    **{k: _UNARY for k in (exp.Abs, exp.Upper, exp.Lower, exp.Length, exp.Sqrt, exp.Ln, exp.Exp)},
    exp.Substring: _entry("this start length"),
    exp.Trim: _entry("this expression", read="position"),
    exp.StrPosition: _entry("this substr", read="position"),
    exp.Round: _entry("this decimals"),
    exp.Coalesce: _entry("this expressions", read="is_nvl is_null"),       # NVL, IFNULL: other spellings
    # aggregates (aggregates.py)
    exp.Count: _entry("this", implied="big_int"),
    **{k: _UNARY for k in (exp.Sum, exp.Avg, exp.Min, exp.Max, exp.FirstValue, exp.LastValue)},
    exp.Anonymous: _entry(read="this expressions"),                         # refused: Unknown function
    exp.Placeholder: _entry(read="this kind widget jdbc"),                  # refused: bind parameters
    exp.Exists: _entry(read="this expression"),                             # refused by name
    # ---------------------------------------------------------------- statements (ddl.py)
    exp.Insert: _entry("this expression"),
    exp.Schema: _entry("this expressions"),
    N.CreateStreamStatement: _entry("this columns options", read="kind replace server description"),
    N.ColumnDefinition: _entry("this", read="type params not_null"),
    N.Option: _entry("value", read="this"),
    N.CreateViewStatement: _entry("this columns query", read="replace description"),
    N.CreatePumpStatement: _entry("this target columns query", read="replace started description"),
    N.AlterPumpStatement: _entry("expressions", read="action"),
    N.DropStatement: _entry("this", read="kind exists"),
}

#: how a refusal names an argument nobody plans (by class and argument, or by argument)
ARG_NAMES: dict = {
    "qualify": "QUALIFY", "laterals": "LATERAL", "pivots": "PIVOT", "match": "MATCH_RECOGNIZE",
    "sample": "TABLESAMPLE", "locks": "FOR UPDATE / FOR SHARE", "into": "SELECT INTO", "connect": "CONNECT BY",
    "prewhere": "PREWHERE", "cluster": "CLUSTER BY", "distribute": "DISTRIBUTE BY", "sort": "SORT BY",
    "settings": "SETTINGS", "format": "FORMAT", "options": "OPTION (...)", "hint": "A query hint (/*+ ... */)",
    "exclude": "SELECT ... EXCLUDE", "operation_modifiers": "A SELECT modifier", "for_": "FOR XML / FOR JSON",
    "hints": "A table hint", "when": "AT / BEFORE (time travel)", "only": "ONLY", "partition": "PARTITION (...)",
    "changes": "CHANGES", "rows_from": "ROWS FROM", "indexed": "INDEXED BY", "catalog": "A name with three parts",
    "ordinality": "WITH ORDINALITY", "system_time": "FOR SYSTEM_TIME on this FROM item",
    "match_condition": "ASOF JOIN ... MATCH_CONDITION", "global_": "GLOBAL", "directed": "A directed join",
    "nearest": "NEAREST", "with_fill": "ORDER BY ... WITH FILL", "siblings": "ORDER SIBLINGS BY",
    "materialized": "WITH ... AS MATERIALIZED", "scalar": "A scalar WITH item", "search": "WITH ... SEARCH",
    "cycle": "WITH ... CYCLE", "by_name": "BY NAME", "side": "A set operation side (LEFT, FULL)",
    "returning": "INSERT ... RETURNING", "overwrite": "INSERT OVERWRITE", "conflict": "INSERT ... ON CONFLICT",
    "alternative": "INSERT OR ...", "ignore": "INSERT IGNORE", "exists": "INSERT ... IF EXISTS",
    "join_mark": "The (+) outer join mark", "is_global": "GLOBAL IN", "except_": "SELECT * EXCEPT / EXCLUDE",
    "replace": "SELECT * REPLACE", "rename": "SELECT * RENAME", "ilike": "SELECT * ILIKE",
    (exp.Cast, "safe"): "TRY_CAST", (exp.Cast, "format"): "CAST ... FORMAT",
    (exp.Cast, "default"): "CAST ... DEFAULT ON CONVERSION ERROR", (exp.Cast, "action"): "CAST ... action",
    (exp.Union, "kind"): "UNION CORRESPONDING", (exp.Union, "on"): "UNION ... ON",
    (exp.Round, "truncate"): "ROUND with a truncating mode", (exp.StrPosition, "occurrence"): "An occurrence of POSITION",
    (exp.Trim, "collation"): "TRIM ... COLLATE", (exp.Interval, "fraction_in_string"): "This INTERVAL form",
}

#: how a refusal names a node class nobody plans
CLASS_NAMES: dict = {
    exp.Pivot: "PIVOT", exp.Lateral: "LATERAL", exp.MatchRecognize: "MATCH_RECOGNIZE",
    exp.TableSample: "TABLESAMPLE", exp.Unnest: "UNNEST", exp.GroupingSets: "GROUPING SETS", exp.Rollup: "ROLLUP",
    exp.Cube: "CUBE", exp.Qualify: "QUALIFY", exp.Lock: "FOR UPDATE / FOR SHARE", exp.Filter: "FILTER (WHERE ...)",
    exp.WithinGroup: "WITHIN GROUP", exp.IgnoreNulls: "IGNORE NULLS", exp.RespectNulls: "RESPECT NULLS",
    exp.Window: "OVER", exp.Lambda: "A lambda (->)", exp.Bracket: "A subscript ([...])", exp.Dot: "A '.' path",
    exp.Collate: "COLLATE", exp.Order: "ORDER BY inside a function call", exp.Limit: "LIMIT", exp.Offset: "OFFSET",
    exp.Fetch: "FETCH", exp.Any: "ANY (...)", exp.All: "ALL (...)", exp.Changes: "CHANGES",
    exp.HistoricalData: "AT / BEFORE (time travel)", exp.Array: "An ARRAY", exp.Struct: "A STRUCT",
    exp.JSONExtract: "The -> operator", exp.Kwarg: "A named argument (=>)",
}


def _absent(v) -> bool:
    return v is None or v is False or (isinstance(v, (list, str)) and not v)


def _first_node(v):
    for x in (v if isinstance(v, list) else [v]):
        if isinstance(x, exp.Expr):
            return x
    return None


#: what OVER takes (windows.py): a refusal of another window function names them
WINDOW_FUNCTIONS = "COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE, ROW_NUMBER, RANK or DENSE_RANK"


def refusal(node: exp.Expr, key: str | None, source: Source, parent=None) -> tuple[str, object]:
    """The message and position refusing ``node`` (``key`` None: its class; else that argument)."""
    from .expressions import func_name
    cls = type(node)
    if key is None:
        if isinstance(parent, N.Over) and isinstance(node, exp.Func):
            return f"Unsupported window function {func_name(node, source)} (OVER takes {WINDOW_FUNCTIONS})", node
        if cls in CLASS_NAMES:
            return f"{CLASS_NAMES[cls]} is not supported", node
        if _written_as_operator(node, source):     # a ->> b, a <=> b, a GLOB b: sqlglot makes some calls
            op = source.operator_text(node, "")
            return (f"The {op} operator is not supported" if op else
                    f"Unsupported expression '{source.snippet(node)}'"), source.operator_offset(node)
        if isinstance(node, exp.Unary) and not isinstance(node, exp.Func):       # ~ i
            return f"The {func_name(node, source)} operator is not supported", node
        if isinstance(node, exp.AggFunc):
            return f"Unsupported aggregate function {func_name(node, source)}", node
        if isinstance(node, exp.Func):
            return f"Unsupported function {func_name(node, source)}", node
        return f"Unsupported syntax '{source.snippet(node)}'", node
    name = ARG_NAMES.get((cls, key)) or ARG_NAMES.get(key) or key.rstrip("_").replace("_", " ").upper()
    at = _first_node(node.args[key])
    if at is None or start_of(at) is None:      # a flag, or a node without a position: its keyword's
        word = name.split()[0]
        tok = source.find_token(start_of(node) or 0, lambda t: t.text.upper() == word) if word.isupper() else None
        at = tok if tok is not None else node
    return f"{name} is not supported", at


def _written_as_operator(node: exp.Expr, source: Source) -> bool:
    """Whether ``node`` was written ``left OP right`` (its left operand comes first in the text)."""
    left = node.args.get("this")
    if not isinstance(left, exp.Expr) or not isinstance(node.args.get("expression"), exp.Expr):
        return False
    s = start_of(left)
    return s is not None and s == start_of(node)


def check(tree: exp.Expr, source: Source) -> None:
    """Refuse the first construct of ``tree`` (in the text) that the planner would not read."""
    found = []
    stack = [(tree, None)]
    while stack:
        node, parent = stack.pop()
        entry = PLANNED.get(type(node))
        if entry is None:
            found.append(refusal(node, None, source, parent))
            continue
        for key, value in node.args.items():
            if _absent(value):
                continue
            how = entry.get(key)
            if how is None:
                found.append(refusal(node, key, source))
            elif how == PLAN:
                stack.extend((x, node) for x in (value if isinstance(value, list) else [value])
                             if isinstance(x, exp.Expr))
    if found:
        message, at = min(found, key=lambda f: (start_of(f[1]) if start_of(f[1]) is not None else 1 << 60))
        raise source.error(message, at)


# --------------------------------------------------------------------------- keywords sqlglot cannot parse

#: keyword sequences of constructs that do not even parse here, with the refusal's words and which
#: token of the sequence it points at; ``(`` after a sequence means it is only that construct when a
#: parenthesis follows, a word before the construct's keyword gives its context
UNPARSED: list[tuple[tuple[str, ...], str, int]] = [
    (("MATCH_RECOGNIZE",), "MATCH_RECOGNIZE is not supported", 0),
    (("FILTER", "("), "FILTER (WHERE ...) on an aggregate is not supported", 0),
    (("WITHIN", "GROUP"), "WITHIN GROUP is not supported", 0),
    (("IGNORE", "NULLS"), "IGNORE NULLS is not supported", 0),
    (("RESPECT", "NULLS"), "RESPECT NULLS is not supported", 0),
    (("MATCH_CONDITION",), "ASOF JOIN ... MATCH_CONDITION is not supported", 0),
    (("PREWHERE",), "PREWHERE is not supported", 0), (("INDEXED", "BY"), "INDEXED BY is not supported", 0),
    (("PIVOT", "("), "PIVOT is not supported", 0), (("UNPIVOT", "("), "UNPIVOT is not supported", 0),
    (("LATERAL",), "LATERAL is not supported", 0), (("TABLESAMPLE",), "TABLESAMPLE is not supported", 0),
    (("QUALIFY",), "QUALIFY is not supported", 0), (("GROUPING", "SETS"), "GROUPING SETS is not supported", 0),
    (("ROLLUP", "("), "ROLLUP is not supported", 0), (("CUBE", "("), "CUBE is not supported", 0),
    (("FETCH", "FIRST"), "FETCH is not supported", 0), (("FETCH", "NEXT"), "FETCH is not supported", 0),
    (("LIMIT",), "LIMIT is not supported", 0), (("OFFSET",), "OFFSET is not supported", 0),
    (("EXCLUDE", "CURRENT"), "EXCLUDE in a window frame is not supported", 0),
    (("EXCLUDE", "GROUP"), "EXCLUDE in a window frame is not supported", 0),
    (("EXCLUDE", "TIES"), "EXCLUDE in a window frame is not supported", 0),
    (("EXCLUDE", "NO"), "EXCLUDE in a window frame is not supported", 0),
    (("GROUPS",), "GROUPS frames are not supported (a window frame is ROWS or RANGE)", 0),
    (("ORDER", "SIBLINGS"), "ORDER SIBLINGS BY is not supported", 0),
    (("FOR", "XML"), "FOR XML is not supported", 0), (("FOR", "JSON"), "FOR JSON is not supported", 0),
    (("GLOBAL",), "GLOBAL is not supported", 0), (("POSITIONAL",), "POSITIONAL JOIN is not supported", 0),
    (("MINUS",), "MINUS (EXCEPT) is not supported", 0), (("SELECT", "TOP"), "SELECT TOP is not supported", 1),
    (("INSERT", "IGNORE"), "INSERT IGNORE is not supported", 1),
    (("PRIMARY KEY",), "PRIMARY KEY is not supported", 0), (("UNIQUE",), "UNIQUE is not supported", 0),
    (("REFERENCES",), "REFERENCES is not supported", 0), (("CONSTRAINT",), "CONSTRAINT is not supported", 0),
    (("CHECK", "("), "CHECK constraints are not supported", 0),
    (("DEFAULT",), "A column DEFAULT is not supported", 0),
    (("WATERMARK",), "WATERMARK is not supported: a stream's bounds come from its rows and punctuation", 0),
    ((")", "FOR", "SYSTEM_TIME"), "FOR SYSTEM_TIME AS OF reads a table or a stream by its name, not a sub-query "
                                  "(JOIN t FOR SYSTEM_TIME AS OF s.ROWTIME)", 1),
]


def unparsed_construct(tokens: list[Token], offset: int | None) -> tuple[str, Token] | None:
    """The refusal of the construct the dialect lacks whose keywords come last at or before
    ``offset`` (where the parser gave up), with its keyword token; None when there is none."""
    texts = [t.text.upper() if t.token_type != TokenType.STRING else "" for t in tokens]
    best = None
    for i, tok in enumerate(tokens):
        if offset is not None and tok.start > offset:
            break
        for seq, message, at in UNPARSED:
            if tuple(texts[i:i + len(seq)]) == seq:
                best = (message, tokens[i + at])
    return best
